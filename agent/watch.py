"""`homeflow watch`: judge a real home by goal conditions, live.

The twin mirrors the Home Assistant at --url (twin.mirror over the WebSocket API, entities of
every domain included) and checks the conditions on the mirror after every change it follows,
printing their status whenever it changes, until Ctrl-C. `--once` prints it once and exits with
0 when every condition holds, else 1. The token is read from a file and never shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import aclosing
from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from twin.conditions import Condition, compile_condition
from twin.errors import TwinError
from twin.mirror import SYNC, Link, Mirror, Update
from twin.verifier import Report, Verifier

from .backends.home_assistant import HomeAssistantBackend, HomeAssistantRequestError


async def watch_home(
    link: Link, conditions: Sequence[Condition], console: Console, *, once: bool = False
) -> bool:
    """Mirror the home behind `link` and print the conditions' status whenever it changes;
    returns whether all hold, after the first sync when `once`, else never (until cancelled)."""
    mirror = Mirror(link)
    verifier: Verifier | None = None
    shown: tuple[tuple[bool, str | None], ...] = ()
    async with aclosing(mirror.follow()) as updates:
        async for update in updates:
            if verifier is None:
                verifier = Verifier(mirror.home, conditions)  # their entities must exist
            report = verifier.step(mirror.home)
            statuses = tuple((status.satisfied, status.error) for status in report.conditions)
            if statuses != shown:
                shown = statuses
                console.print(status_table(report, update))
            if once:
                return report.done
    return False


def status_table(report: Report, update: Update) -> Table:
    """Each condition's status, titled with the change that led to it and its delay."""
    moment = datetime.fromtimestamp(update.changed_at).strftime("%H:%M:%S")
    cause = "synced" if update.event_type == SYNC else f"{update.event_type} {update.subject}"
    verdict = "[green]all hold[/]" if report.done else "[red]not all hold[/]"
    table = Table(
        title=f"{moment} {escape(cause)} (+{update.delay * 1000:.0f} ms): {verdict}",
        title_justify="left",
    )
    table.add_column("", width=1)
    table.add_column("condition")
    for status in report.conditions:
        mark = "[green]✓[/]" if status.satisfied else "[red]✗[/]"
        why = f"\n[red]{escape(status.error)}[/]" if status.error else ""
        table.add_row(mark, escape(status.text) + why)
    return table


@click.command()
@click.argument("conditions", nargs=-1, required=True)
@click.option("--url", required=True, help="Home Assistant's address, e.g. http://ha.local:8123.")
@click.option(
    "--token-file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file holding a long-lived access token (made on your Home Assistant profile page).",
)
@click.option("--once", is_flag=True, help="Print once; exit 0 when all conditions hold, else 1.")
def watch(conditions: tuple[str, ...], url: str, token_file: Path, once: bool) -> None:
    """Mirror a real Home Assistant and show whether CONDITIONS hold, live.

    A condition is the twin's: state("person.alice") == "home", attr("light.desk",
    "brightness") >= 200, entity("climate.bedroom").hvac_mode == "heat"...
    """
    try:
        compiled = [compile_condition(text) for text in conditions]
    except TwinError as err:
        raise click.BadParameter(str(err), param_hint="CONDITIONS") from None
    token = token_file.read_text(encoding="utf-8").strip()
    if not token:
        raise click.BadParameter(f"{token_file} is empty", param_hint="--token-file")
    console = Console()

    async def run() -> bool:
        async with HomeAssistantBackend(url, token) as backend:
            return await watch_home(backend, compiled, console, once=once)

    try:
        held = asyncio.run(run())
    except KeyboardInterrupt:
        return
    except (HomeAssistantRequestError, TwinError) as err:
        raise click.ClickException(str(err)) from None
    if once and not held:
        raise SystemExit(1)

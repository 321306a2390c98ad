"""`homeflow bench run|report|compare`: evaluate a policy on the benchmark and show the results."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click
from rich.console import Console
from rich.markdown import Markdown

from ..episode import EpisodeLimits
from ..errors import AgentError
from ..flywheel import runner
from ..flywheel.blueprints import TASK_TYPES
from ..policies.specs import SpecError
from . import evaluate as bench
from .assist import is_cases, load_cases
from .conversation import ConversationAgentError, check_agent, is_agent
from .ha import Server
from .instances import BenchError, load_bench
from .report import Results, ResultsError, load_results, write_report


def _policy(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    if value is not None and is_agent(value):
        raise click.BadParameter(f"{value} is a Home Assistant conversation agent: use --agent")
    try:
        return None if value is None else bench.check_policy(value)
    except SpecError as err:
        raise click.BadParameter(str(err)) from None


def _agent(context: click.Context, parameter: click.Parameter, value: str | None) -> str | None:
    try:
        return None if value is None else check_agent(value)
    except ConversationAgentError as err:
        raise click.BadParameter(str(err)) from None


def _types(context: click.Context, parameter: click.Parameter, value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


def _chosen(types: list[str], known: Sequence[str]) -> list[str]:
    """The task types (or categories) asked for, as `known` spells them (any case); all of
    them when none is asked for."""
    spelt = {kind.lower(): kind for kind in known}
    if unknown := sorted(kind for kind in types if kind.lower() not in spelt):
        raise click.BadParameter(
            f"unknown task types {unknown}; use {', '.join(known)}", param_hint="--types"
        )
    return [spelt[kind.lower()] for kind in types] or list(known)


@click.command()
@click.argument("bench_dir", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--policy",
    "policy",
    metavar=bench.POLICY_FORMS,
    callback=_policy,
    help="The scripted teacher (upper bound), a no-op (lower bound), a local model or a server.",
)
@click.option(
    "--agent",
    metavar="conversation.ENTITY",
    callback=_agent,
    help="Instead of --policy, with --backend ha: a Home Assistant conversation agent (e.g. "
    "conversation.home_assistant, the built-in Assist) hears each user turn through "
    "/api/conversation/process; tool calls and tokens are not visible, the home's state scores.",
)
@click.option(
    "--backend",
    type=click.Choice(["twin", "ha"]),
    default="twin",
    show_default=True,
    help="Where each instance's home runs: `twin` (in process) or `ha` (a running Home Assistant "
    "with HomeFlow, --url and --token-file: each home is imported, played, judged on a mirror "
    "and removed, one instance at a time).",
)
@click.option("--url", help="Home Assistant's address, e.g. http://homeassistant.local:8123.")
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A file holding a long-lived access token of an administrator.",
)
@click.option(
    "--subset",
    type=click.IntRange(min=1),
    help="Only the first N of each task type (of each split: in and out of distribution).",
)
@click.option(
    "--types",
    callback=_types,
    help="Only these task types, e.g. QT1,QT3 (of assist cases: categories, e.g. light,fan).",
)
@click.option(
    "--guided",
    is_flag=True,
    help="Hold a local model's calls to the tools and the home's names (off unless given; "
    "homeflow chat has it on).",
)
@click.option(
    "--max-turns",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="User turns per instance.",
)
@click.option(
    "--max-tool-calls",
    type=click.IntRange(min=1),
    default=30,
    show_default=True,
    help="Tool calls per instance, over all its turns.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the CPU count",
    help="Processes to evaluate in (1: in this process; always 1 with --backend ha).",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The results directory; run again with it to continue an interrupted run.",
)
def run(
    bench_dir: Path,
    policy: str | None,
    agent: str | None,
    backend: str,
    url: str | None,
    token_file: Path | None,
    subset: int | None,
    types: list[str],
    guided: bool,
    max_turns: int,
    max_tool_calls: int,
    workers: int,
    output: Path,
) -> None:
    """Run a policy on the benchmark in BENCH_DIR, or on a BENCH_DIR of cases in Home Assistant's
    assist evaluation format (agent/bench/external, whose README says how they score), on the
    twin or a Home Assistant, and score every instance by the home's state; writes
    results.json, trajectories.jsonl, results.md and results.png to OUTPUT."""
    if (policy is None) == (agent is None):
        raise click.UsageError("give one of --policy and --agent")
    if agent is not None and backend != "ha":
        raise click.UsageError("--agent is Home Assistant's: use it with --backend ha")
    server = None
    if backend == "ha":
        if url is None or token_file is None:
            raise click.UsageError("--backend ha needs --url and --token-file")
        server = Server(url, token_file.read_text(encoding="utf-8").strip())
    elif url is not None or token_file is not None:
        raise click.UsageError("--url and --token-file are for --backend ha")
    cases = is_cases(bench_dir)
    loaded: Sequence[bench.Instance]
    try:
        loaded = load_cases(bench_dir) if cases else load_bench(bench_dir)
    except BenchError as err:
        raise click.BadParameter(str(err), param_hint="BENCH_DIR") from None
    known = sorted({case.task_type for case in loaded}) if cases else TASK_TYPES
    types = _chosen(types, known)
    instances = bench.select(loaded, subset, types)
    if not instances:
        raise click.BadParameter(f"no instances of {', '.join(types)}", param_hint="BENCH_DIR")
    config = {"bench": str(bench_dir.resolve()), "subset": subset, "types": types}
    limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=max_tool_calls)
    try:
        outcome = bench.evaluate(
            instances,
            output,
            policy or str(agent),
            limits=limits,
            guided=guided,
            workers=workers,
            config=config,
            server=server,
        )
    except runner.RunError as err:
        raise click.ClickException(str(err)) from None
    except AgentError as err:
        raise click.ClickException(
            f"{err}\nWhat finished is kept; run the same command again to continue."
        ) from None
    if not outcome.complete:
        click.echo(
            f"Stopped with {len(outcome.records)} of {len(instances)} done (all kept); "
            "run the same command again to continue.",
            err=True,
        )
        raise SystemExit(130)
    _show([load_results(bench.write_results(output))], output / "results")


@click.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
def report(results: Path) -> None:
    """Show RESULTS (a `bench run` directory or its results.json) as a table per task type, and
    write results.md and results.png beside it."""
    loaded = _load([results])
    _show(loaded, (results if results.is_dir() else results.parent) / "results")


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("comparison"),
    show_default=True,
    help="Write OUTPUT.md and OUTPUT.png.",
)
def compare(results: tuple[Path, ...], output: Path) -> None:
    """Tabulate several RESULTS (`bench run` directories or results.json files) side by side:
    success per task type and overall, with the costs; writes a table and a grouped bar chart."""
    _show(_load(results), output)


def _load(paths: tuple[Path, ...] | list[Path]) -> list[Results]:
    try:
        return [load_results(path) for path in paths]
    except ResultsError as err:
        raise click.BadParameter(str(err), param_hint="RESULTS") from None


def _show(results: list[Results], stem: Path) -> None:
    """Print the table and write it, with the chart, to `stem`.md and `stem`.png."""
    text, chart = write_report(results, stem)
    console = Console()
    console.print(Markdown(text.read_text(encoding="utf-8")))
    console.print(f"wrote {text} and {chart}")

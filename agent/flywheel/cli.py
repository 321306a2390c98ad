"""`homeflow data`: the data flywheel's commands."""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import track
from rich.table import Table

from twin.atomic import write_text

from ..errors import AgentError
from ..policies.specs import SpecError
from . import datasets, mcts, runner
from .blueprints import FILTERS, SplitError, check_split
from .paraphrase import LLMParaphraser
from .profiles import AGE_BANDS, Profile, age_band, make_profile
from .sentences import LANGUAGES


@click.group()
def data() -> None:
    """Make verified training data: profiles, blueprints, dialogues (MCTS-Flow)."""


@data.command()
@click.option("--count", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="The first profile's seed.")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write JSON lines."
)
def profiles(count: int, seed: int, output: Path | None) -> None:
    """Draw user profiles (from seed SEED to SEED+COUNT-1) and show how they spread: who the users
    are, their physiology and health, and their comfort preferences."""
    try:  # the benchmark's users are never drawn for training
        check_split(*range(seed, seed + count))
    except SplitError as err:
        raise click.BadParameter(str(err), param_hint="--seed") from err
    drawn = [make_profile(s) for s in track(range(seed, seed + count), description="profiles")]
    console = Console()
    for table in spread_tables(drawn):
        console.print(table)
    if output is not None:
        lines = "".join(json.dumps(p.to_dict()) + "\n" for p in drawn)
        output.parent.mkdir(parents=True, exist_ok=True)
        write_text(output, lines)
        console.print(f"wrote {count} profiles to {output}")


def _run_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options every generating command shares: where, how many processes, Ray."""
    options = [
        click.option(
            "-o",
            "--output",
            required=True,
            type=click.Path(file_okay=False, path_type=Path),
            help="The dataset directory; run again with it to continue an interrupted run.",
        ),
        click.option(
            "--workers",
            type=click.IntRange(min=1),
            default=os.cpu_count() or 1,
            show_default="the CPU count",
            help="Processes to generate in (1: in this process).",
        ),
        click.option(
            "--ray", is_flag=True, help="Run as Ray tasks (the cluster at RAY_ADDRESS, or local)."
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


_count = click.option("--count", type=click.IntRange(min=1), default=1000, show_default=True)
_seed = click.option("--seed", type=int, default=0, show_default=True, help="The first seed.")
_error_rate = click.option(
    "--error-rate",
    type=click.FloatRange(0, 1),
    default=0.2,
    show_default=True,
    help="How often the scripter errs, for the triple filter to catch.",
)


def _spec(check: Callable[[str], object]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback that refuses a spec `check` raises SpecError for, saying why."""

    def callback(context: click.Context, parameter: click.Parameter, value: Any) -> Any:
        if value is not None:
            try:
                check(value)
            except SpecError as err:
                raise click.BadParameter(str(err)) from None
        return value

    return callback


@data.command()
@_count
@_seed
@_error_rate
@click.option(
    "--paraphrase",
    metavar="openai:URL#MODEL",
    callback=_spec(LLMParaphraser),
    help="Have this server rewrite each request (a paraphrase that drops a number is rejected).",
)
@click.option(
    "--language",
    "languages",
    multiple=True,
    type=click.Choice(LANGUAGES),
    default=("en",),
    show_default=True,
    help="The users' language; given several times, the seeds take them in turn. Outside "
    "English the requests are atomic and compositional ones, in Home Assistant's sentences.",
)
@_run_options
def blueprints(
    count: int,
    seed: int,
    error_rate: float,
    paraphrase: str | None,
    languages: tuple[str, ...],
    output: Path,
    workers: int,
    ray: bool,
) -> None:
    """Make the blueprint dataset for RL (from seed SEED to SEED+COUNT-1): JSONL, Parquet and a
    card in OUTPUT, with the share of candidates each filter rejected."""
    config = {"dataset": "blueprints", "count": count, "seed": seed, "error_rate": error_rate}
    config |= {"paraphrase": paraphrase} if paraphrase is not None else {}
    config |= {"languages": list(languages)} if languages != ("en",) else {}
    jobs = [(str(s), [s, languages[s % len(languages)]]) for s in range(seed, seed + count)]
    work = partial(datasets.blueprint_record, error_rate=error_rate, paraphrase=paraphrase)
    outcome = _generate(output, jobs, work, config, workers, ray, "blueprints")
    made = sum(len(record["rows"]) for record in outcome.records)
    table = Table(title=f"{made} blueprints from {count} seeds")
    table.add_column("filter")
    table.add_column("rejected", justify="right")
    for name in (["paraphrase"] if paraphrase is not None else []) + list(FILTERS):
        rejected = sum(record["rejected"] == name for record in outcome.records)
        table.add_row(name, _percent(rejected, count))
    fresh = sum(len(record["rows"]) for record in outcome.fresh)
    rate = fresh / outcome.seconds if outcome.seconds else 0.0
    table.caption = (
        f"{rate:.0f} blueprints/s this run ({len(outcome.fresh)} seeds in {outcome.seconds:.1f} s)"
    )
    Console().print(table)


@data.command()
@click.option(
    "--blueprints",
    "source",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="A blueprint dataset directory (from `homeflow data blueprints`) to synthesize from.",
)
@click.option("--count", type=click.IntRange(min=1), help="Or make COUNT blueprints from SEED.")
@_seed
@_error_rate
@click.option(
    "--method",
    type=click.Choice(mcts.METHODS),
    default="mcts",
    show_default=True,
    help="MCTS-Flow, linear blueprint-grounded generation, or pure role-play.",
)
@click.option(
    "--teacher",
    default=mcts.SCRIPTED,
    show_default=True,
    metavar="scripted|local[:PATH]|openai:URL#MODEL",
    callback=_spec(partial(mcts.check_spec, kinds=mcts.TEACHERS)),
    help="The agent whose turns are sampled: the scripted teacher, a local model or a server.",
)
@click.option(
    "--user",
    default=mcts.SCRIPTED,
    show_default=True,
    metavar="scripted|openai:URL#MODEL",
    callback=_spec(partial(mcts.check_spec, kinds=mcts.USERS)),
    help="The user simulator: scripted, or a server playing the user.",
)
@click.option(
    "--mistake-rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="How often the scripted teacher's first call for an intent is a realistic mistake "
    "(a value in the wrong unit, an attribute's name) that it then recovers from: data that "
    "teaches correcting a failed call rather than repeating it.",
)
@_run_options
def synthesize(
    source: Path | None,
    count: int | None,
    seed: int,
    error_rate: float,
    method: str,
    teacher: str,
    user: str,
    mistake_rate: float,
    output: Path,
    workers: int,
    ray: bool,
) -> None:
    """Synthesize verified dialogues from blueprints into an SFT dataset in OUTPUT: Hugging
    Face chat rows (messages with tool calls and results, tools) as JSONL and Parquet, for TRL's
    SFTTrainer, with a card."""
    if (source is None) == (count is None):
        raise click.UsageError("Give exactly one of --blueprints DIR and --count N")
    config: dict[str, Any] = {"dataset": "trajectories", "method": method}
    # Only what differs from the scripted default, so earlier runs' directories still continue.
    config |= {k: v for k, v in (("teacher", teacher), ("user", user)) if v != mcts.SCRIPTED}
    config |= {"mistake_rate": mistake_rate} if mistake_rate else {}
    if source is not None:
        try:
            rows = datasets.read_rows(datasets.dataset_file(source))
            jobs = [(str(row["seed"]), row["blueprint"]) for row in rows]
        except (datasets.DatasetError, KeyError) as err:
            message = f"not a blueprint dataset: {err}"
            raise click.BadParameter(message, param_hint="--blueprints") from err
        config["blueprints"] = str(source.resolve())
    else:
        assert count is not None
        jobs = [(str(s), s) for s in range(seed, seed + count)]
        config |= {"count": count, "seed": seed, "error_rate": error_rate}
    work = partial(
        datasets.synthesis_record,
        method=method,
        error_rate=error_rate,
        teacher=teacher,
        user=user,
        mistake_rate=mistake_rate,
    )
    outcome = _generate(output, jobs, work, config, workers, ray, "trajectories")
    made = [row for record in outcome.records for row in record["rows"]]
    verified = sum(bool(row["done"]) for row in made)
    Console().print(
        f"{len(made)} trajectories ({verified} verified) from {len(jobs)} blueprints ({method}), "
        f"{len(outcome.fresh)} synthesized this run in {outcome.seconds:.1f} s"
    )


@data.command()
@click.argument("directory", type=click.Path(file_okay=False, exists=True, path_type=Path))
def stats(directory: Path) -> None:
    """Show what a dataset DIRECTORY holds: rows, blueprints, methods, query types, domains,
    tool calls per trajectory, and how the run's seeds ended."""
    try:
        rows = datasets.read_rows(datasets.dataset_file(directory))
        sections = datasets.summarise(rows, runner.read_records(directory))
    except datasets.DatasetError as err:
        raise click.BadParameter(str(err), param_hint="DIRECTORY") from err
    except (KeyError, TypeError, ValueError, AttributeError) as err:  # a row of another shape
        raise click.BadParameter(
            f"a row is not one `homeflow data` writes ({type(err).__name__}: {err}); give a "
            "directory made by `homeflow data blueprints|synthesize` or `homeflow bench generate`",
            param_hint="DIRECTORY",
        ) from err
    console = Console()
    for section in sections:
        table = Table(title=section.title)
        table.add_column("")
        table.add_column("count", justify="right")
        for label, value in section.rows:
            table.add_row(label, value)
        console.print(table)


def _generate(
    output: Path,
    jobs: list[tuple[str, Any]],
    work: runner.Work,
    config: dict[str, Any],
    workers: int,
    ray: bool,
    name: str,
) -> runner.Outcome:
    """Run (or continue) the generation in `output`; once every job is done, write the dataset
    and its card. An interrupted run exits with 130 and says how to continue."""
    try:  # every job's key is its blueprint's seed: none may be the benchmark's
        check_split(*(int(key) for key, _ in jobs))
    except SplitError as err:
        raise click.UsageError(str(err)) from err
    try:
        outcome = runner.run(output, jobs, work, config, workers=workers, ray=ray, description=name)
    except runner.RunError as err:
        raise click.ClickException(str(err)) from err
    except AgentError as err:
        raise click.ClickException(
            f"{err}\nWhat finished is kept; run the same command again to continue."
        ) from err
    if not outcome.complete:
        click.echo(
            f"Stopped with {len(outcome.records)} of {len(jobs)} done (all kept); "
            "run the same command again to continue.",
            err=True,
        )
        raise SystemExit(130)
    records = sorted(outcome.records, key=lambda record: record["seed"])
    rows = [row for record in records for row in record["rows"]]
    files = datasets.write_dataset(output, name, rows)
    about = ABOUT[name].format(**config)
    text = datasets.card(f"HomeFlow {name}", files, datasets.summarise(rows, records), about)
    write_text(output / "README.md", text)
    Console().print(f"wrote {len(rows)} rows to {', '.join(str(f) for f in files)} and a card")
    return outcome


ABOUT = {
    "blueprints": (
        "Blueprints for step-wise RL in the HomeFlow twin, {count} seeds from {seed} "
        "(scripter error rate {error_rate}): each row's `blueprint` column is the JSON of a "
        "`agent.flywheel.blueprints.Blueprint` (profile, home, scenes, query type, the task's "
        "turns and intents); the other columns place it."
    ),
    "trajectories": (
        "Multi-turn tool-calling dialogues ({method}) in the Hugging Face chat format, "
        "for TRL's SFTTrainer: `messages` (system, user, assistant with `tool_calls` whose "
        "`arguments` are JSON text, tool results), `tools` (JSON text of the tool schemas), and "
        "metadata. Every dialogue was executed in the twin; `done` says whether it met its goal "
        "conditions. MCTS-Flow and linear keep only those that did; role-play keeps its one "
        "dialogue per blueprint either way, as the paper's role-play baseline does."
    ),
}


def spread_tables(profiles: Sequence[Profile]) -> list[Table]:
    """Tables of how `profiles` spread over each part of a profile."""
    people = Table(title=f"{len(profiles)} users", show_header=True)
    people.add_column("part")
    people.add_column("share of users")
    for label, key in [
        ("age", lambda p: age_band(p.age)),
        ("gender", lambda p: p.gender),
        ("working pattern", lambda p: p.pattern),
        ("chronotype", lambda p: p.chronotype),
        ("feels the cold", lambda p: p.thermal),
        ("vision", lambda p: p.vision),
        ("hearing", lambda p: p.hearing),
        ("mobility", lambda p: p.mobility),
        ("sleep", lambda p: p.sleep),
        ("occupation (top 6)", lambda p: p.occupation),
    ]:
        people.add_row(label, _shares(profiles, key))
    health = Table(title="health conditions by age")
    health.add_column("condition")
    bands = [f"{low}-{high}" for low, high in AGE_BANDS]
    for band in bands:
        health.add_column(band, justify="right")
    by_band = {band: [p for p in profiles if age_band(p.age) == band] for band in bands}
    for condition in sorted({c for p in profiles for c in p.conditions}):
        health.add_row(
            condition,
            *(
                _percent(sum(condition in p.conditions for p in by_band[b]), len(by_band[b]))
                for b in bands
            ),
        )
    comfort = Table(title="preferences")
    for column in ("preference", "min", "median", "max"):
        comfort.add_column(column, justify="left" if column == "preference" else "right")
    measures: list[tuple[str, Callable[[Profile], float]]] = [
        ("day temperature °C", lambda p: p.day_temperature),
        ("night temperature °C", lambda p: p.night_temperature),
        ("humidity low %", lambda p: p.humidity[0]),
        ("humidity high %", lambda p: p.humidity[1]),
        ("brightness %", lambda p: p.brightness),
        ("reading brightness %", lambda p: p.reading_brightness),
        ("evening light K", lambda p: p.evening_kelvin),
        ("work light K", lambda p: p.work_kelvin),
        ("volume", lambda p: p.volume),
        ("wake (h)", lambda p: p.wake),
    ]
    for label, value in measures:
        values = [value(p) for p in profiles]
        comfort.add_row(
            label, *(f"{v:g}" for v in (min(values), statistics.median(values), max(values)))
        )
    return [people, health, comfort]


def _shares(profiles: Sequence[Profile], key: Callable[[Profile], Any]) -> str:
    counts = Counter(key(p) for p in profiles)
    return ", ".join(f"{k} {_percent(n, len(profiles))}" for k, n in counts.most_common(6))


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"

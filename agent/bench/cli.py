"""`homeflow bench`: SmartHome-Bench's commands."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from . import instances as bench_instances
from .commands import compare, report, run
from .instances import NAME, SIZE, TASK_TYPES, BenchError, BenchInstance, write_bench


@click.group()
def bench() -> None:
    """SmartHome-Bench: generate the benchmark, run a policy on it, report and compare results."""


@bench.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(NAME),
    show_default=True,
    help="The directory to write the instances, manifest and card to.",
)
@click.option(
    "--count",
    type=click.IntRange(min=1),
    default=SIZE,
    show_default=True,
    help=f"Instances; {SIZE:,} is SmartHome-Bench v1, another count another benchmark.",
)
def generate(output: Path, count: int) -> None:
    """Generate the benchmark's instances (the same every time) into OUTPUT: instances.jsonl
    (and .parquet), manifest.json and a card, README.md. Each instance is checked to need what
    its task type says and to be solved by the scripted teacher."""
    with Progress() as bar:
        task = bar.add_task("instances", total=count)

        def advance(_: BenchInstance) -> None:
            bar.advance(task)

        try:
            made = bench_instances.generate(count, on_instance=advance)
        except BenchError as err:
            raise click.ClickException(str(err)) from err
    files = write_bench(output, made)
    table = Table(title=f"{len(made.instances)} instances in {made.seconds:.1f} s")
    table.add_column("task type")
    table.add_column("instances", justify="right")
    counts = made.counts()
    for kind in TASK_TYPES:
        table.add_row(kind, str(counts[kind]))
    dropped = ", ".join(f"{n} {why}" for why, n in made.dropped.items())
    console = Console()
    console.print(table)
    console.print(f"{made.walked} seeds walked from {made.first}; dropped: {dropped}")
    console.print(f"wrote {', '.join(str(f) for f in files)}")


bench.add_command(run)
bench.add_command(report)
bench.add_command(compare)

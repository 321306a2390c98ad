"""`homeflow data`: the data flywheel's commands."""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import track
from rich.table import Table

from .profiles import AGE_BANDS, Profile, age_band, make_profile


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
    """Draw user profiles (seeds SEED .. SEED+COUNT-1) and show how they spread: who the users
    are, their physiology and health, and their comfort preferences."""
    drawn = [make_profile(s) for s in track(range(seed, seed + count), description="profiles")]
    console = Console()
    for table in spread_tables(drawn):
        console.print(table)
    if output is not None:
        lines = "".join(json.dumps(p.to_dict()) + "\n" for p in drawn)
        partial = output.with_name(output.name + ".partial")
        partial.write_text(lines, encoding="utf-8")
        os.replace(partial, output)
        console.print(f"wrote {count} profiles to {output}")


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

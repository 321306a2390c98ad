"""`homeflow home`: generate, show, plot and simulate virtual homes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import track
from rich.tree import Tree

from .errors import TwinError
from .home import Home
from .homefile import load_home, save_home
from .homemaker import make_home, plan_home, summary
from .weather import cities

HOME_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
# Control characters (C0, DEL and C1), which a home's text may hold but a terminal would obey.
_CONTROL = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0)])


@click.group()
def home() -> None:
    """Generate, inspect, plot and simulate virtual homes (HomeMaker)."""


def _load(path: Path) -> Home:
    """The home file at `path`; a bad one is one line of error and exit status 1."""
    try:
        return load_home(path)
    except TwinError as err:
        raise click.ClickException(_printable(" ".join(str(err).split()))) from None


def _printable(text: str) -> str:
    """Text from a home as a terminal shows it: no control characters, no rich markup."""
    return escape(text.translate(_CONTROL))


@home.command()
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed, same home.")
@click.option(
    "--type", "home_type", help="studio, apartment, house, duplex or villa (default: drawn)."
)
@click.option("--size", help="A device count, or small / medium / large (default: drawn).")
@click.option("--city", help="A city of the built-in weather data, e.g. Oslo (default: drawn).")
@click.option(
    "--when",
    type=click.DateTime(["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"]),
    help="Start time in the city's local standard time, e.g. 2026-01-15T18:00 (default: drawn).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the home (YAML).",
)
def generate(
    seed: int,
    home_type: str | None,
    size: str | None,
    city: str | None,
    when: datetime | None,
    output: Path,
) -> None:
    """Generate a home with HomeMaker and save it as YAML."""
    count: int | str | None = int(size) if size and size.isdigit() else size
    try:
        generated = make_home(seed, home_type, count, city, when)
    except TwinError as err:
        raise click.ClickException(str(err)) from None
    save_home(generated, output)
    click.echo(
        f"{generated.name}: {len(generated.areas)} rooms, {len(generated.devices)} devices, "
        f"{len(generated.entities)} entities -> {output}"
    )


@home.command()
@click.argument("path", type=HOME_FILE)
def show(path: Path) -> None:
    """Show a home as a tree: floors, rooms, devices and their entities with state."""
    Console().print(home_tree(_load(path)))


def home_tree(shown: Home) -> Tree:
    """The home as a rich tree; names are shown as written, never read as rich markup."""
    tree = Tree(f"[bold]{_printable(shown.name)}[/]")
    floors = sorted(shown.floors.values(), key=lambda floor: floor.level)
    branches = {
        floor.floor_id: tree.add(f"[bold cyan]{_printable(floor.name)}[/]") for floor in floors
    }
    rooms: dict[str, Tree] = {}
    for area in shown.areas.values():  # a home holds each area after its parent
        parent = rooms.get(area.parent_id or "") or branches.get(area.floor_id or "", tree)
        climate = shown.rooms[area.area_id]
        rooms[area.area_id] = parent.add(
            f"[bold]{_printable(area.name)}[/] "
            f"[dim]{climate.temperature:.1f} °C, {climate.humidity:.0f} %[/]"
        )
    entities: dict[str | None, list[str]] = {}
    for entity_id, entry in shown.entities.items():
        entities.setdefault(entry.device_id, []).append(entity_id)
    for device in shown.devices.values():
        name = _printable(device.name)
        model = _printable(f"{device.manufacturer} {device.model}")
        branch = (
            rooms[device.area_id].add(f"{name} [dim]{model}[/]")
            if device.area_id
            else tree.add(name)
        )
        for entity_id in entities.get(device.device_id, ()):
            branch.add(f"{entity_id} = [green]{_printable(shown.states[entity_id].state)}[/]")
    return tree


@home.command()
@click.argument("path", type=HOME_FILE)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the picture (PNG).",
)
def plot(path: Path, output: Path) -> None:
    """Draw a home's floors, rooms and devices to a PNG."""
    from .plots import plot_home

    plot_home(_load(path), output)
    click.echo(f"wrote {output}")


@home.command()
@click.argument("path", type=HOME_FILE)
@click.option(
    "--hours",
    type=click.FloatRange(min=0, min_open=True),
    default=24.0,
    show_default=True,
    help="Simulated time.",
)
@click.option(
    "--step",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Physics step in seconds.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the plot of room temperatures (PNG).",
)
def simulate(path: Path, hours: float, step: float, output: Path) -> None:
    """Run the room physics for some hours and plot each room's temperature."""
    from .plots import plot_climate

    simulated = _load(path)
    sample = 600.0
    times, outdoor = [simulated.now], [simulated.weather.at(simulated.now).temperature]
    series = {simulated.areas[a].name: [r.temperature] for a, r in simulated.rooms.items()}
    for _ in track(range(int(hours * 3600 / sample)), description="simulating"):
        simulated.advance(sample, step)
        times.append(simulated.now)
        outdoor.append(simulated.weather.at(simulated.now).temperature)
        for area_id, room in simulated.rooms.items():
            series[simulated.areas[area_id].name].append(room.temperature)
    plot_climate(times, series, outdoor, output)
    click.echo(f"wrote {output}")


@home.command(name="summary")
@click.option(
    "--homes",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="How many homes to plan.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="First seed.")
def summarize(homes: int, seed: int) -> None:
    """Plan many homes and tabulate their diversity: types, rooms, devices, domains, cities."""
    plans = [plan_home(s) for s in track(range(seed, seed + homes), description="planning")]
    Console().print(summary(plans).table())


@home.command(name="cities")
def list_cities() -> None:
    """List the cities of the built-in weather data."""
    for city in cities().values():
        click.echo(f"{city.name} ({city.country})")

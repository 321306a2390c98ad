"""How varied a population of planned homes is: the counts that show HomeMaker covers the space
of homes (types, sizes, floors, rooms, device types, entity domains, cities), as a rich table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

from ..catalog import load_catalog
from ..domains import weather

if TYPE_CHECKING:
    from rich.table import Table

    from .plan import HomePlan


@dataclass(frozen=True, slots=True)
class PopulationSummary:
    """How varied a set of homes is: what kinds, how many floors, rooms, devices and where."""

    homes: int
    home_types: Mapping[str, int]
    sizes: Mapping[str, int]
    floors: Mapping[int, int]
    rooms: Mapping[str, int]
    device_types: Mapping[str, int]
    domains: Mapping[str, int]
    devices_per_home: Mapping[str, tuple[int, ...]]
    cities: Mapping[str, int]

    @property
    def devices(self) -> int:
        """All devices of all homes."""
        return sum(self.device_types.values())

    def table(self) -> Table:
        """The summary as a rich table (rich is imported only when a table is asked for)."""
        from rich.table import Table

        table = Table(
            title=f"{self.homes} homes, {self.devices} devices", show_header=False, show_lines=True
        )
        table.add_column("", style="bold", no_wrap=True)
        table.add_column("")
        table.add_row("home types", _listing(self.home_types))
        table.add_row("sizes", _listing(self.sizes))
        table.add_row(
            "floors", _listing({f"{n} floors": k for n, k in sorted(self.floors.items())})
        )
        spread = {
            home_type: f"{min(counts)}-{max(counts)} (median {median(counts):g})"
            for home_type, counts in self.devices_per_home.items()
        }
        table.add_row("devices per home", ", ".join(f"{k} {v}" for k, v in spread.items()))
        table.add_row("rooms", _listing(self.rooms))
        table.add_row("device types", _listing(self.device_types))
        table.add_row("entity domains", _listing(self.domains))
        table.add_row("cities", _listing(self.cities))
        return table

    def __rich__(self) -> Table:
        """Print as the table."""
        return self.table()


def _listing(counts: Mapping[Any, int]) -> str:
    """As "key count, ...", the most common first."""
    return ", ".join(f"{key} {count}" for key, count in sorted(counts.items(), key=lambda i: -i[1]))


def summary(plans: Iterable[HomePlan]) -> PopulationSummary:
    """Count the home types, floors, rooms, devices and cities of a set of planned homes."""
    catalog = load_catalog()
    planned = list(plans)
    devices = [device for plan in planned for device in plan.devices]
    per_home: dict[str, list[int]] = {}
    for plan in planned:
        per_home.setdefault(plan.home_type, []).append(len(plan.devices))
    return PopulationSummary(
        homes=len(planned),
        home_types=dict(Counter(plan.home_type for plan in planned)),
        sizes=dict(Counter(plan.size for plan in planned)),
        floors=dict(Counter(len(plan.floors) for plan in planned)),
        rooms=dict(Counter(room.kind for plan in planned for room in plan.rooms)),
        device_types=dict(Counter(device.device_type for device in devices)),
        # Every home has its weather forecast besides its devices' entities.
        domains=dict(
            Counter(
                [spec.domain for device in devices for spec in catalog[device.device_type].entities]
                + [weather.DOMAIN.name] * len(planned)
            )
        ),
        devices_per_home={
            home_type: tuple(sorted(counts)) for home_type, counts in per_home.items()
        },
        cities=dict(Counter(plan.city for plan in planned)),
    )

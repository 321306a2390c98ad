"""Pictures of a home: its floors, rooms and devices, and its rooms' climate over time.

matplotlib is imported here only, and only when a picture is asked for (it is in the `sim` extra).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .domains import DOMAINS, domain_of
from .home import Home
from .registry import Floor

# States in which a device is doing nothing.
OFF_STATES = frozenset({"off", "closed", "locked", "docked", "idle", "standby", "unknown"})


def plot_home(home: Home, path: Path) -> None:
    """Draw each floor as a panel of rooms (nested rooms inside their parent) with their devices."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    floors: list[Floor | None] = [*sorted(home.floors.values(), key=lambda f: f.level)] or [None]
    figure, axes = plt.subplots(1, len(floors), figsize=(7 * len(floors), 7), squeeze=False)
    for axis, floor in zip(axes[0], floors, strict=True):
        floor_id = floor.floor_id if floor else None
        top = [a for a in home.areas.values() if a.floor_id == floor_id and a.parent_id is None]
        columns = max(1, math.ceil(math.sqrt(len(top))))
        rows = max(1, math.ceil(len(top) / columns))
        for index, area in enumerate(sorted(top, key=lambda a: a.name)):
            x, y = index % columns, rows - 1 - index // columns
            axis.add_patch(Rectangle((x + 0.03, y + 0.03), 0.94, 0.94, fill=False, lw=1.5))
            axis.text(x + 0.06, y + 0.9, area.name, fontsize=8, weight="bold", va="top")
            children = [a for a in home.areas.values() if a.parent_id == area.area_id]
            for offset, child in enumerate(children):
                box = (x + 0.52, y + 0.06 + offset * 0.42)
                axis.add_patch(Rectangle(box, 0.42, 0.39, fill=False, lw=1, ls="--"))
                axis.text(box[0] + 0.02, box[1] + 0.36, child.name, fontsize=6, va="top")
                _draw_devices(axis, home, child.area_id, box[0] + 0.04, box[1] + 0.02, 0.38)
            _draw_devices(axis, home, area.area_id, x + 0.08, y + 0.12, 1.0)
        axis.set_xlim(0, columns)
        axis.set_ylim(0, rows)
        axis.set_aspect("equal")
        axis.axis("off")
        axis.set_title(floor.name if floor else "Home")
    legend = [Patch(color=domain.color, label=name) for name, domain in DOMAINS.items()]
    figure.legend(handles=legend, loc="lower center", ncol=7, fontsize=8, frameon=False)
    figure.suptitle(f"{home.name}: {len(home.areas)} rooms, {len(home.devices)} devices")
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def _draw_devices(axis: Any, home: Home, area_id: str, x: float, y: float, width: float) -> None:
    """One line per device of the area: a dot in its main domain's colour (ringed when the device
    is on) and its name without the room's."""
    room = home.areas[area_id].name
    devices = sorted(
        (d for d in home.devices.values() if d.area_id == area_id), key=lambda d: d.name
    )
    main_entities = {e.device_id: e.entity_id for e in reversed(home.entities.values())}
    for index, device in enumerate(devices[:11]):
        row_y = y + 0.62 * width - index * 0.065
        entity_id = main_entities[device.device_id]
        on = home.states[entity_id].state not in OFF_STATES
        axis.scatter(
            x,
            row_y,
            s=22,
            color=domain_of(entity_id.partition(".")[0]).color,
            edgecolors="black" if on else "none",
            linewidths=0.9,
        )
        label = device.name.removeprefix(room).strip() or device.name
        axis.text(x + 0.03, row_y, label, fontsize=5.5, va="center")
    if len(devices) > 11:
        axis.text(x, y + 0.62 * width - 11 * 0.065, f"+{len(devices) - 11} more", fontsize=5.5)


def plot_climate(
    times: list[float], series: dict[str, list[float]], outdoor: list[float], path: Path
) -> None:
    """Each room's temperature over time, with the outdoor temperature for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hours = [(t - times[0]) / 3600 for t in times]
    figure, axis = plt.subplots(figsize=(10, 5))
    for name, values in sorted(series.items()):
        axis.plot(hours, values, lw=1.2, label=name)
    axis.plot(hours, outdoor, color="black", lw=2, ls="--", label="outdoor")
    start = datetime.fromtimestamp(times[0], UTC).strftime("%Y-%m-%d %H:%M UTC")
    axis.set_xlabel(f"hours since {start}")
    axis.set_ylabel("temperature (°C)")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.01, 1))
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)

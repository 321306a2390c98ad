"""How fast the twin's inner-loop operations are, on a 50-device home, on one core.

Prints validated service calls, condition evaluations, pyexec snippets and snapshot+restore per
second, each with the figure the twin is built to reach.

    .venv/bin/python bench/twin_speed.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from twin.catalog import load_catalog
from twin.conditions import compile_condition
from twin.errors import TwinError
from twin.home import Home
from twin.pyexec import run
from twin.registry import Area

AREAS = ["kitchen", "living_room", "bedroom", "study", "bathroom", "hallway", "garage", "garden"]

# Typical calls an agent makes, per domain; only those an entity accepts are kept.
CANDIDATES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "light": [
        ("turn_on", {"brightness_pct": 40}),
        ("turn_on", {"color_temp_kelvin": 3000}),
        ("turn_on", {"hs_color": [30, 80]}),
        ("toggle", {}),
        ("turn_off", {}),
    ],
    "switch": [("toggle", {}), ("turn_on", {})],
    "fan": [("set_percentage", {"percentage": 50}), ("turn_on", {}), ("turn_off", {})],
    "climate": [
        ("set_temperature", {"temperature": 22}),
        ("set_hvac_mode", {"hvac_mode": "cool"}),
        ("set_hvac_mode", {"hvac_mode": "heat"}),
    ],
    "cover": [("set_cover_position", {"position": 30}), ("open_cover", {}), ("close_cover", {})],
    "media_player": [("volume_set", {"volume_level": 0.3}), ("turn_on", {}), ("media_pause", {})],
    "humidifier": [("set_humidity", {"humidity": 45}), ("turn_on", {})],
    "lock": [("lock", {})],
    "vacuum": [("start", {}), ("return_to_base", {})],
    "water_heater": [("set_temperature", {"temperature": 50})],
    "valve": [("open_valve", {}), ("close_valve", {})],
}


def fifty_device_home() -> Home:
    """50 catalog devices, one of each type in catalog order, spread over eight rooms."""
    home = Home("Bench home")
    for area_id in AREAS:
        home.add_area(Area(area_id, area_id.replace("_", " ").title()))
    types = sorted(load_catalog().values(), key=lambda t: t.type_id)[:50]
    for index, device_type in enumerate(types):
        area = AREAS[index % len(AREAS)]
        device_type.install(home, f"d{index}", f"{area} {device_type.type_id} {index}", area, index)
    return home


def valid_calls(home: Home) -> list[tuple[str, str, dict[str, Any]]]:
    """Every candidate call that the home's entities accept."""
    calls = []
    for entity_id in home.entities:
        domain = entity_id.split(".")[0]
        for service, data in CANDIDATES.get(domain, []):
            call = (domain, service, {"entity_id": entity_id, **data})
            try:
                home.copy().call_service(*call)
            except TwinError:
                continue
            calls.append(call)
    return calls


def rate(operation: Callable[[], object], seconds: float) -> float:
    """Operations per second, best of three timed runs of about `seconds` each."""
    batch, best = 100, 0.0
    for _ in range(3):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            for _ in range(batch):
                operation()
            count += batch
        best = max(best, count / elapsed)
    return best


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    home = fifty_device_home()
    calls = itertools.cycle(valid_calls(home))
    light = next(e for e in home.entities if e.startswith("light."))
    condition = compile_condition(
        f'state("{light}") == "on" and attr("{light}", "brightness") >= 100'
    )
    start = home.snapshot().states
    snippet = (
        f'if state("{light}") == "off":\n'
        f'    call_service("light", "turn_on", entity_id="{light}", brightness_pct=50)\n'
        f'print(attr("{light}", "brightness"))\n'
    )
    saved = home.snapshot()

    figures = [
        (
            "validated service calls",
            rate(lambda: home.call_service(*next(calls)), args.seconds),
            50_000,
        ),
        (
            "condition evaluations",
            rate(lambda: condition.holds(home, start), args.seconds),
            200_000,
        ),
        ("pyexec snippets", rate(lambda: run(snippet, home), args.seconds), None),
        ("snapshot + restore", rate(lambda: home.restore(home.snapshot()), args.seconds), None),
    ]
    home.restore(saved)
    table = Table(
        title=f"Twin speed on a {len(home.devices)}-device home "
        f"({len(home.entities)} entities), one core"
    )
    table.add_column("operation")
    table.add_column("per second", justify="right")
    table.add_column("target", justify="right")
    for name, per_second, target in figures:
        table.add_row(name, f"{per_second:,.0f}", f">= {target:,}" if target else "")
    Console().print(table)


if __name__ == "__main__":
    main()

"""How fast the simulation side of the twin is: HomeMaker, the room physics and HomeEnv-v0.

Prints homes generated per second (by home type), the time to advance a 50-device home by one
simulated hour in one-minute steps, outdoor weather reads per second (every home reads it each
simulated minute; the target is 100,000/s), and env steps per second (a read, a service call and
a pyexec action in turn), each on one core.

    .venv/bin/python bench/sim_speed.py [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Callable

import gymnasium as gym
from rich.console import Console
from rich.table import Table

import twin.env  # noqa: F401  (registers homeflow/HomeEnv-v0)
from twin.homemaker import make_home
from twin.weather import Weather


def rate(operation: Callable[[], object], seconds: float) -> float:
    """Operations per second, best of three timed runs of about `seconds` each."""
    best = 0.0
    for _ in range(3):
        count, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            operation()
            count += 1
        best = max(best, count / elapsed)
    return best


def homes_per_second(seconds: float) -> list[tuple[str, float, float]]:
    """(home type, mean devices, homes per second) over successive seeds."""
    rows = []
    for home_type in ("studio", "apartment", "house", "duplex", "villa"):
        made = HomeCounter(home_type)
        per_second = rate(made.make_next, seconds)
        rows.append((home_type, sum(made.devices) / len(made.devices), per_second))
    return rows


class HomeCounter:
    """Makes homes of one type from successive seeds, counting their devices."""

    def __init__(self, home_type: str) -> None:
        self.home_type = home_type
        self.seeds = itertools.count()
        self.devices: list[int] = []

    def make_next(self) -> None:
        """Make the next home."""
        self.devices.append(len(make_home(next(self.seeds), self.home_type).devices))


def hour_of_physics_ms() -> tuple[int, float]:
    """Milliseconds to advance a 50-device home by an hour in one-minute steps (best of 20)."""
    home = make_home(1, "house", 50)
    saved = home.snapshot()
    best = float("inf")
    for _ in range(20):
        home.restore(saved)
        start = time.perf_counter()
        home.advance(3600, 60)
        best = min(best, time.perf_counter() - start)
    return len(home.devices), best * 1000


def weather_reads_per_second(seconds: float) -> float:
    """Weather.at calls per second over successive simulated minutes of one city."""
    weather = Weather("Berlin", 1)
    moments = itertools.count(1_711_000_000, 60)
    return rate(lambda: weather.at(next(moments)), seconds)


def env_steps_per_second(seconds: float) -> float:
    """HomeEnv-v0 steps per second, cycling a read, a service call and a pyexec action."""
    home = make_home(1, "house", 50)
    light = next(e for e in home.entities if e.startswith("light."))
    env = gym.make(
        "homeflow/HomeEnv-v0", home=home, goal=[f'state("{light}") == "off"'], max_turns=10**9
    )
    env.reset(seed=0)
    actions = itertools.cycle(
        [
            json.dumps({"name": "get_state", "arguments": {"entity_id": light}}),
            json.dumps(
                {
                    "name": "call_service",
                    "arguments": {
                        "domain": "light",
                        "service": "turn_on",
                        "target": {"entity_id": light},
                        "data": {"brightness_pct": 60},
                    },
                }
            ),
            json.dumps(
                {"name": "pyexec", "arguments": {"code": f'print(attr("{light}", "brightness"))'}}
            ),
        ]
    )

    def step() -> None:
        *_, terminated, truncated, _info = env.step(next(actions))
        if terminated or truncated:
            env.reset()

    return rate(step, seconds)


def main() -> None:
    """Measure and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    args = parser.parse_args()
    console = Console()

    homes = Table(title="HomeMaker: homes generated per second, one core")
    for column in ("home type", "devices (mean)", "homes/s"):
        homes.add_column(column, justify="right")
    for home_type, devices, per_second in homes_per_second(args.seconds):
        homes.add_row(home_type, f"{devices:.0f}", f"{per_second:,.0f}")
    console.print(homes)

    devices, milliseconds = hour_of_physics_ms()
    console.print(
        f"Room physics: one simulated hour in one-minute steps on a {devices}-device "
        f"home takes {milliseconds:.2f} ms (target < 5 ms)"
    )
    console.print(
        f"Weather: {weather_reads_per_second(args.seconds):,.0f} reads/s (target 100,000)"
    )
    console.print(
        f"HomeEnv-v0: {env_steps_per_second(args.seconds):,.0f} steps/s "
        "(get_state, call_service, pyexec in turn)"
    )


if __name__ == "__main__":
    main()

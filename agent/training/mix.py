"""The training mix: what share of an SFT run's rows each task type, language and kind of
trajectory takes, set in the run config (`mix`) and reported after sampling.

A mix maps a facet (FACETS) to shares of `max_samples` for some of its values, e.g.
`{"task_type": {"QT3": 0.2, "QS": 0.1}, "recovers": {"yes": 0.2}}`; the values it does not list
share what is left (REST) as they come. Each facet's shares become whole quotas by the largest
remainder, so that they sum to `max_samples` exactly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent.flywheel.datasets import Row, recovers

from .common import TrainingError

FACETS = ("task_type", "language", "recovers")
REST = "rest"  # the quota of the values a facet's mix does not list
Mix = Mapping[str, Mapping[str, float]]


def facets(row: Row) -> dict[str, str]:
    """The row's value of each facet: its task type, its user's language, and whether it
    recovers from a failed call ("yes"/"no")."""
    return {
        "task_type": str(row.get("task_type", "?")),  # rows written before it have none
        "language": str(row.get("language", "en")),
        "recovers": "yes" if recovers(row["messages"]) else "no",
    }


def check_mix(mix: Any, max_samples: int | None) -> None:
    """Refuse a mix that is not facets of shares in (0, 1] summing to at most 1, or one without
    `max_samples` to take its shares of."""
    if mix is None:
        return
    if max_samples is None:
        raise TrainingError("mix needs max_samples: its shares are of that many rows")
    if not isinstance(mix, Mapping) or not set(mix) <= set(FACETS):
        raise TrainingError(f"mix maps facets ({', '.join(FACETS)}) to shares, got {mix!r}")
    for facet, shares in mix.items():
        if not isinstance(shares, Mapping) or not shares:
            raise TrainingError(f"mix.{facet} maps values to shares, got {shares!r}")
        if not all(isinstance(value, str) for value in shares):
            raise TrainingError(
                f"mix.{facet}'s values are strings, got {list(shares)}; quote them in YAML "
                '("yes": 0.2, not yes: 0.2, which YAML reads as true)'
            )
        if any(not isinstance(s, int | float) or not 0 < s <= 1 for s in shares.values()):
            raise TrainingError(f"mix.{facet}'s shares are numbers in (0, 1], got {dict(shares)}")
        if sum(shares.values()) > 1 + 1e-9:
            raise TrainingError(f"mix.{facet}'s shares sum to more than 1: {dict(shares)}")


@dataclass
class Quota:
    """How many rows each value of each facet may take, and how many it has taken."""

    wanted: dict[str, dict[str, int]]
    taken: dict[str, Counter[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.taken = {facet: Counter() for facet in self.wanted}

    @classmethod
    def of(cls, mix: Mix, count: int) -> Quota:
        """The quotas of `mix` over `count` rows."""
        return cls({facet: apportion(shares, count) for facet, shares in mix.items()})

    def admits(self, values: Mapping[str, str]) -> bool:
        """Whether a row of these facet values fits every facet's quota."""
        for facet, wanted in self.wanted.items():
            key = self._key(facet, values[facet])
            if self.taken[facet][key] >= wanted[key]:
                return False
        return True

    def take(self, values: Mapping[str, str]) -> None:
        """Count a row of these facet values."""
        for facet in self.wanted:
            self.taken[facet][self._key(facet, values[facet])] += 1

    def unfilled(self) -> list[str]:
        """The quotas not met, as 'facet=value: taken of wanted'."""
        return [
            f"{facet}={key}: {self.taken[facet][key]} of {n}"
            for facet, wanted in self.wanted.items()
            for key, n in wanted.items()
            if self.taken[facet][key] < n
        ]

    def _key(self, facet: str, value: str) -> str:
        return value if value in self.wanted[facet] and value != REST else REST


def apportion(shares: Mapping[str, float], count: int) -> dict[str, int]:
    """Whole quotas for `shares` of `count` (and REST for what they leave) by the largest
    remainder: they sum to `count`."""
    exact = {value: share * count for value, share in shares.items()}
    exact[REST] = max(0.0, count - sum(exact.values()))
    quotas = {value: math.floor(n) for value, n in exact.items()}
    by_remainder = sorted(exact, key=lambda value: quotas[value] - exact[value])
    for value in by_remainder[: count - sum(quotas.values())]:
        quotas[value] += 1
    return quotas


def mix_counts(rows: Iterable[Row]) -> dict[str, dict[str, int]]:
    """How many of the rows have each value of each facet."""
    counts: dict[str, Counter[str]] = {facet: Counter() for facet in FACETS}
    for row in rows:
        for facet, value in facets(row).items():
            counts[facet][value] += 1
    return {facet: dict(sorted(found.items())) for facet, found in counts.items()}

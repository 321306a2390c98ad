"""The household of a made home: who lives there, and where they are at a given local time.

HomeMaker draws the people when it plans a home (children get rooms of their own) and asks where
they are when it sets the home's initial state: lights, heating and TVs follow the people.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

SLEEPING = frozenset({"master_bedroom", "kids_room", "studio"})


@dataclass(frozen=True, slots=True)
class Household:
    """Who lives in the home (children have their own rooms)."""

    surname: str
    adults: tuple[str, ...]
    children: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Routine:
    """How likely the household is home by part of the day, someone is awake in a room of each
    kind while it is home, and a TV is on while someone is in its room (see homemaker.yaml)."""

    at_home: Mapping[str, float]
    awake: Mapping[str, Mapping[str, float]]
    tv_on: Mapping[str, Mapping[str, float]]


def draw_household(
    rng: random.Random,
    names: Mapping[str, tuple[str, ...]],
    adults: tuple[int, int],
    children: tuple[int, int],
) -> Household:
    """A surname and first names within the bounds; 40% of households have the fewest children."""
    adult_count = rng.randint(*adults)
    child_count = rng.randint(*children) if rng.random() < 0.6 else children[0]
    return Household(
        rng.choice(names["surnames"]),
        tuple(rng.sample(names["adults"], adult_count)),
        tuple(rng.sample(names["children"], child_count)),
    )


def part_of_day(hour: float) -> str:
    """night from 23:00, morning from 6:30, day from 9:00, evening from 17:00 (local time)."""
    if hour < 6.5 or hour >= 23:
        return "night"
    if hour < 9:
        return "morning"
    return "day" if hour < 17 else "evening"


def is_home(routine: Routine, phase: str, weekend: bool, rng: random.Random) -> bool:
    """Whether the household is in now; by day that depends on the day of the week."""
    moment = phase if phase != "day" else "weekend" if weekend else "weekday"
    return rng.random() < routine.at_home[moment]


def room_activity(
    routine: Routine, room_kind: str, phase: str, hour: float, rng: random.Random
) -> str:
    """awake, asleep or empty: who is in a room of `room_kind` while the household is home."""
    chance = rng.random()
    if phase == "night" and room_kind in SLEEPING:
        return "asleep"
    if phase == "night" and room_kind == "bedroom" and chance < 0.15:
        return "asleep"
    if phase == "morning" and hour < 7.5 and room_kind == "kids_room" and chance < 0.5:
        return "asleep"
    return "awake" if chance < routine.awake[phase].get(room_kind, 0.0) else "empty"

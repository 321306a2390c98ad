"""lawn_mower: robot lawn mowers (Home Assistant's LawnMowerEntity).

Services and their required features are HA's (none takes data). The activities follow HA's demo
mower where it behaves like a real robot, and a real robot where it does not: pausing or stopping
a mower that is not out leaves it as it is, and a docked mower sent home stays docked. A mower sent
home shows `returning`; reaching the dock is left to the simulation clock, as for a vacuum.
"""

from __future__ import annotations

from typing import Any

from ..service import EntityDraft, Service
from .descriptor import Carrying, Domain, Spoken
from .rules import EntityRules

# LawnMowerActivity.
MOWING = "mowing"
DOCKED = "docked"
PAUSED = "paused"
RETURNING = "returning"
IDLE = "idle"
ERROR = "error"
OUT = frozenset((MOWING, PAUSED, RETURNING))

# LawnMowerEntityFeature.
START_MOWING = 1
PAUSE = 2
DOCK = 4
STOP = 8

# What a synthetic-home inventory names the state (the entity's `_attr_activity`).
ATTR_ACTIVITY = "activity"


def start_mowing(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Start mowing, or resume a paused mow."""
    entity.state = MOWING


def pause(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Pause mowing; a mower that is not mowing stays as it is."""
    if entity.state == MOWING:
        entity.state = PAUSED


def dock(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Head for the dock; a docked mower stays docked."""
    if entity.state != DOCKED:
        entity.state = RETURNING


def stop(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop where it is: a mower that is out goes idle."""
    if entity.state in OUT:
        entity.state = IDLE


DOMAIN = Domain.of(
    "lawn_mower",
    [
        Service(
            "start_mowing",
            start_mowing,
            required_features=(START_MOWING,),
            description="Starts the mowing task.",
        ),
        Service("pause", pause, required_features=(PAUSE,), description="Pauses the mowing task."),
        Service(
            "dock", dock, required_features=(DOCK,), description="Stops the mowing task and docks."
        ),
        Service("stop", stop, required_features=(STOP,), description="Stops the mowing task."),
    ],
    {"start_mowing": START_MOWING, "pause": PAUSE, "dock": DOCK, "stop": STOP},
    rules=EntityRules(states=frozenset((MOWING, DOCKED, PAUSED, RETURNING, IDLE, ERROR))),
    device=True,
    state_outcomes={
        "start_mowing": '== "mowing"',
        "pause": '== "paused"',
        "dock": 'in ("returning", "docked")',
        "stop": 'in ("idle", "docked")',
    },
    carrying=Carrying(state_attribute=ATTR_ACTIVITY, enums=frozenset({ATTR_ACTIVITY})),
    spoken={
        "start_mowing": (Spoken("HassLawnMowerStartMowing"),),
        "dock": (Spoken("HassLawnMowerDock"),),
    },
    color="#588157",
)

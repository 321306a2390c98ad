"""valve: water and gas valves, with or without a reported position.

Schemas, feature flags, attributes and toggle rules follow Home Assistant's ValveEntity. A valve
reports its position (HA's `reports_position`) when its state shows `current_position`; its state
is then `closed` at 0 and `open` above. `open_valve`/`close_valve` go to 100/0, through
`set_valve_position` when the valve supports it, as HA routes them. Home Assistant raises no
ServiceValidationError for valves: the schema (position 0-100, coerced to int) refuses bad data.

The twin has no motion time yet, so a movement completes within the call and the state after it
is final; `opening`/`closing` only come from a home's initial state, and `stop_valve` settles such
a valve where it is (a settled one stays as it is). A valve that shows no position still knows it
(`hidden["current_position"]`), and `hidden["last_move_open"]` is HA's memory of the last
direction it saw, which decides how a part-open valve toggles.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..service import EntityDraft, Service, schema
from ..validation import Numeric
from .descriptor import (
    Asked,
    Carrying,
    Domain,
    Spoken,
    flag_state,
    shows_closed,
)
from .rules import PERCENT, EntityRules, flag, optional

OPEN = 1
CLOSE = 2
SET_POSITION = 4
STOP = 8

STATE_OPEN = "open"
STATE_CLOSED = "closed"
STATE_OPENING = "opening"
STATE_CLOSING = "closing"

ATTR_POSITION = "position"
ATTR_CURRENT_POSITION = "current_position"
ATTR_IS_CLOSED = "is_closed"
LAST_MOVE_OPEN = "last_move_open"

# Where a valve that shows no position is taken to be when stopped mid-way: without a clock the
# twin cannot know how far it went.
PART_WAY = 50


def _note_motion(entity: EntityDraft) -> None:
    """Remember the direction of a moving valve, as Home Assistant does when it sees the state."""
    if entity.state == STATE_OPENING:
        entity.hidden[LAST_MOVE_OPEN] = True
    elif entity.state == STATE_CLOSING:
        entity.hidden[LAST_MOVE_OPEN] = False


def _move(entity: EntityDraft, position: int) -> None:
    """Bring the valve to `position` at once (the twin has no motion time yet)."""
    _note_motion(entity)
    if ATTR_CURRENT_POSITION in entity.attributes:
        entity.attributes[ATTR_CURRENT_POSITION] = position
    else:
        entity.hidden[ATTR_CURRENT_POSITION] = position
    closed = position == 0
    entity.state = STATE_CLOSED if closed else STATE_OPEN
    entity.attributes[ATTR_IS_CLOSED] = closed


def open_valve(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Open fully."""
    _move(entity, 100)


def close_valve(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Close fully."""
    _move(entity, 0)


def set_valve_position(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Move to a position, 0 (closed) to 100 (open)."""
    _move(entity, data[ATTR_POSITION])


def stop_valve(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop a moving valve where it is; a settled valve stays as it is."""
    if entity.state in (STATE_OPENING, STATE_CLOSING):
        _move(entity, entity.attributes.get(ATTR_CURRENT_POSITION, PART_WAY))


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop, open or close, by Home Assistant's ValveEntity.async_toggle rules: they read the
    valve's is_closed. A valve without a position shows it, and one opening from closed may
    still say closed; one that reports its position shows is_closed from the position, so its
    own is the state being `closed`, as in HA's demo valve (a moving valve is not closed)."""
    _note_motion(entity)
    attributes = entity.attributes
    closed = entity.state == STATE_CLOSED
    if ATTR_CURRENT_POSITION not in attributes:
        closed = attributes.get(ATTR_IS_CLOSED, closed)
    if entity.state in (STATE_OPENING, STATE_CLOSING) and entity.supports(STOP):
        stop_valve(entity, data)
    elif closed:
        _move(entity, 100)
    else:
        _move(entity, 0 if entity.hidden.get(LAST_MOVE_OPEN, True) else 100)


_percent = Numeric(int, 0, 100)


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """ValveEntity's state and attributes from a synthetic-home valve's arguments: a valve that
    reports_position shows its position, which decides is_closed; another shows is_closed."""
    reports = arguments.pop("reports_position", False)
    position = arguments.pop("current_valve_position", None)
    if reports:
        arguments[ATTR_CURRENT_POSITION] = position
        arguments[ATTR_IS_CLOSED] = None if position is None else position == 0
    return flag_state(
        arguments,
        {"is_opening": STATE_OPENING, "is_closing": STATE_CLOSING},
        (ATTR_IS_CLOSED, STATE_CLOSED, STATE_OPEN),
    )


# What a valve may hold (twin.domains.rules).
RULES = EntityRules(
    {
        ATTR_CURRENT_POSITION: optional(PERCENT),
        ATTR_IS_CLOSED: optional(flag),
        LAST_MOVE_OPEN: optional(flag),
    },
    states=frozenset((STATE_OPEN, STATE_CLOSED, STATE_OPENING, STATE_CLOSING)),
)


DOMAIN = Domain.of(
    "valve",
    [
        Service("open_valve", open_valve, required_features=(OPEN,), description="Opens a valve."),
        Service(
            "close_valve", close_valve, required_features=(CLOSE,), description="Closes a valve."
        ),
        Service(
            "set_valve_position",
            set_valve_position,
            schema({vol.Required(ATTR_POSITION): _percent}),
            (SET_POSITION,),
            "Moves a valve to a specific position.",
        ),
        Service("stop_valve", stop_valve, required_features=(STOP,), description="Stops a valve."),
        Service(
            "toggle",
            toggle,
            required_features=(OPEN | CLOSE,),
            description="Toggles a valve open/closed.",
        ),
    ],
    {"open": OPEN, "close": CLOSE, "set_position": SET_POSITION, "stop": STOP},
    rules=RULES,
    device=True,
    key_attributes=(ATTR_CURRENT_POSITION,),
    state_outcomes={"open_valve": '== "open"', "close_valve": '== "closed"'},
    carrying=Carrying(
        arguments=from_arguments, boolean_states=(STATE_OPEN, STATE_CLOSED), shows=shows_closed
    ),
    spoken={
        "open_valve": (Spoken("HassTurnOn"),),
        "close_valve": (Spoken("HassTurnOff"),),
        "set_valve_position": (Spoken("HassSetPosition", {"position": "position"}),),
    },
    asked=Asked(("open", "closed")),
    color="#2a9d8f",
)

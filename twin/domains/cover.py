"""cover: blinds, shades, curtains, shutters, awnings, windows and garage doors.

Schemas, feature flags, attributes and toggle rules follow Home Assistant's CoverEntity. The twin
has no motion time yet, so a movement completes within the call: the state after it is final
(`open` when the position is above 0, `closed` at 0) and never `opening`/`closing`. Those two
states only come from a home's initial state; `stop_cover` settles such a cover where it is, and
does nothing to a settled one. Tilting is instant too, so `stop_cover_tilt` changes nothing.

A cover that shows no `current_position` (a garage door) still knows how far it is open, as its
limit switches do: `hidden["current_position"]` keeps it (likewise the tilt). Home Assistant
remembers the direction of the last `opening`/`closing` state it saw and toggles a part-open
cover the other way; `hidden["last_move_open"]` keeps that memory.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..service import EntityDraft, Service, schema
from ..validation import Numeric, string
from .descriptor import (
    Asked,
    Carrying,
    Domain,
    FieldNotes,
    Spoken,
    flag_state,
    has_feature,
    renamed,
    shows_closed,
)
from .rules import PERCENT, EntityRules, flag, names, optional

OPEN = 1
CLOSE = 2
SET_POSITION = 4
STOP = 8
OPEN_TILT = 16
CLOSE_TILT = 32
STOP_TILT = 64
SET_TILT_POSITION = 128
SPEED = 256

STATE_OPEN = "open"
STATE_CLOSED = "closed"
STATE_OPENING = "opening"
STATE_CLOSING = "closing"

ATTR_POSITION = "position"
ATTR_TILT_POSITION = "tilt_position"
ATTR_SPEED = "speed"
ATTR_CURRENT_POSITION = "current_position"
ATTR_CURRENT_TILT_POSITION = "current_tilt_position"
ATTR_IS_CLOSED = "is_closed"
ATTR_SUPPORTED_SPEEDS = "supported_speeds"
LAST_MOVE_OPEN = "last_move_open"

# Where a cover that shows no position is taken to be when stopped mid-way: without a clock the
# twin cannot know how far it went.
PART_WAY = 50

_percent = Numeric(int, 0, 100)
_SPEED_SCHEMA = schema({vol.Optional(ATTR_SPEED): string})


def _note_motion(entity: EntityDraft) -> None:
    """Remember the direction of a moving cover, as Home Assistant does when it sees the state."""
    if entity.state == STATE_OPENING:
        entity.hidden[LAST_MOVE_OPEN] = True
    elif entity.state == STATE_CLOSING:
        entity.hidden[LAST_MOVE_OPEN] = False


def _put(entity: EntityDraft, attribute: str, value: int) -> None:
    """Show a position if the cover reports it, else keep it where the device keeps it."""
    if attribute in entity.attributes:
        entity.attributes[attribute] = value
    else:
        entity.hidden[attribute] = value


def _move(entity: EntityDraft, position: int) -> None:
    """Bring the cover to `position` at once (the twin has no motion time yet)."""
    _note_motion(entity)
    _put(entity, ATTR_CURRENT_POSITION, position)
    closed = position == 0
    entity.state = STATE_CLOSED if closed else STATE_OPEN
    entity.attributes[ATTR_IS_CLOSED] = closed


def _check_speed(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Refuse a speed the cover does not list; covers without speeds ignore it (as in HA)."""
    speed = data.get(ATTR_SPEED)
    speeds = entity.capabilities.get(ATTR_SUPPORTED_SPEEDS)
    if speed is not None and speeds and speed not in speeds:
        raise ServiceValidationError(
            f"Speed {speed} is not valid. Valid speeds are: {', '.join(speeds)}."
        )


def open_cover(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Open fully."""
    _check_speed(entity, data)
    _move(entity, 100)


def close_cover(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Close fully."""
    _check_speed(entity, data)
    _move(entity, 0)


def set_cover_position(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Move to a position, 0 (closed) to 100 (open)."""
    _check_speed(entity, data)
    _move(entity, data[ATTR_POSITION])


def stop_cover(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop a moving cover where it is; a settled cover stays as it is."""
    if entity.state in (STATE_OPENING, STATE_CLOSING):
        _move(entity, entity.attributes.get(ATTR_CURRENT_POSITION, PART_WAY))


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop, open or close, by Home Assistant's CoverEntity._get_toggle_function rules."""
    state = entity.state
    if state in (STATE_OPENING, STATE_CLOSING) and entity.supports(STOP):
        stop_cover(entity, data)
    elif entity.attributes.get(ATTR_IS_CLOSED) or state == STATE_CLOSING:
        _move(entity, 100)
    elif entity.attributes.get(ATTR_CURRENT_POSITION) == 100 or state == STATE_OPENING:
        _move(entity, 0)
    else:
        _move(entity, 0 if entity.hidden.get(LAST_MOVE_OPEN, True) else 100)


def open_cover_tilt(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Tilt the slats fully open."""
    _put(entity, ATTR_CURRENT_TILT_POSITION, 100)


def close_cover_tilt(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Tilt the slats closed."""
    _put(entity, ATTR_CURRENT_TILT_POSITION, 0)


def set_cover_tilt_position(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Tilt the slats to a position, 0 (closed) to 100 (open)."""
    _put(entity, ATTR_CURRENT_TILT_POSITION, data[ATTR_TILT_POSITION])


def stop_cover_tilt(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Nothing to stop: tilting completes within the call."""


def toggle_cover_tilt(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Open the slats if closed (tilt 0), else close them, as Home Assistant does."""
    closed = entity.attributes.get(ATTR_CURRENT_TILT_POSITION) == 0
    _put(entity, ATTR_CURRENT_TILT_POSITION, 100 if closed else 0)


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """CoverEntity's state and positions from a synthetic-home cover's arguments (a position
    shows only when known)."""
    renamed(
        arguments,
        {
            "current_cover_position": ATTR_CURRENT_POSITION,
            "current_cover_tilt_position": ATTR_CURRENT_TILT_POSITION,
        },
    )
    for key in (ATTR_CURRENT_POSITION, ATTR_CURRENT_TILT_POSITION):
        if key in arguments and arguments[key] is None:
            del arguments[key]
    return flag_state(
        arguments,
        {"is_opening": STATE_OPENING, "is_closing": STATE_CLOSING},
        (ATTR_IS_CLOSED, STATE_CLOSED, STATE_OPEN),
    )


# What a cover may hold (twin.domains.rules).
RULES = EntityRules(
    {
        ATTR_SUPPORTED_SPEEDS: optional(names()),
        ATTR_CURRENT_POSITION: optional(PERCENT),
        ATTR_CURRENT_TILT_POSITION: optional(PERCENT),
        ATTR_IS_CLOSED: optional(flag),
        LAST_MOVE_OPEN: optional(flag),
    },
    states=frozenset((STATE_OPEN, STATE_CLOSED, STATE_OPENING, STATE_CLOSING)),
)


DOMAIN = Domain.of(
    "cover",
    [
        Service("open_cover", open_cover, _SPEED_SCHEMA, (OPEN,), "Opens a cover."),
        Service("close_cover", close_cover, _SPEED_SCHEMA, (CLOSE,), "Closes a cover."),
        Service(
            "set_cover_position",
            set_cover_position,
            schema({vol.Required(ATTR_POSITION): _percent, vol.Optional(ATTR_SPEED): string}),
            (SET_POSITION,),
            "Moves a cover to a specific position.",
        ),
        Service("stop_cover", stop_cover, required_features=(STOP,), description="Stops a cover."),
        Service(
            "toggle",
            toggle,
            required_features=(OPEN | CLOSE,),
            description="Toggles a cover open/closed.",
        ),
        Service(
            "open_cover_tilt",
            open_cover_tilt,
            required_features=(OPEN_TILT,),
            description="Tilts a cover open.",
        ),
        Service(
            "close_cover_tilt",
            close_cover_tilt,
            required_features=(CLOSE_TILT,),
            description="Tilts a cover to close.",
        ),
        Service(
            "stop_cover_tilt",
            stop_cover_tilt,
            required_features=(STOP_TILT,),
            description="Stops a tilting cover movement.",
        ),
        Service(
            "set_cover_tilt_position",
            set_cover_tilt_position,
            schema({vol.Required(ATTR_TILT_POSITION): _percent}),
            (SET_TILT_POSITION,),
            "Moves a cover tilt to a specific position.",
        ),
        Service(
            "toggle_cover_tilt",
            toggle_cover_tilt,
            required_features=(OPEN_TILT | CLOSE_TILT,),
            description="Toggles a cover tilt open/closed.",
        ),
    ],
    {
        "open": OPEN,
        "close": CLOSE,
        "set_position": SET_POSITION,
        "stop": STOP,
        "open_tilt": OPEN_TILT,
        "close_tilt": CLOSE_TILT,
        "stop_tilt": STOP_TILT,
        "set_tilt_position": SET_TILT_POSITION,
        "speed": SPEED,
    },
    rules=RULES,
    device=True,
    key_attributes=(ATTR_CURRENT_POSITION,),
    fields={ATTR_SPEED: FieldNotes(options_from=ATTR_SUPPORTED_SPEEDS, applies=has_feature(SPEED))},
    state_outcomes={"open_cover": '== "open"', "close_cover": '== "closed"'},
    attribute_outcomes={
        "open_cover_tilt": (ATTR_CURRENT_TILT_POSITION, 100),
        "close_cover_tilt": (ATTR_CURRENT_TILT_POSITION, 0),
    },
    carrying=Carrying(
        capabilities=frozenset({ATTR_SUPPORTED_SPEEDS}),
        arguments=from_arguments,
        boolean_states=(STATE_OPEN, STATE_CLOSED),
        shows=shows_closed,
    ),
    spoken={
        "open_cover": (Spoken("HassTurnOn"),),
        "close_cover": (Spoken("HassTurnOff"),),
        "set_cover_position": (Spoken("HassSetPosition", {"position": "position"}),),
    },
    asked=Asked(
        ("open", "closed"),
        nouns=("blind", "blinds", "shade", "shades", "curtain", "curtains", "shutter", "shutters"),
        request=("open_cover", {}),
        feature_requests=(("set_cover_position", {"position": 50}),),
    ),
    color="#6a994e",
)

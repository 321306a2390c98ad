"""vacuum: robot vacuum cleaners (Home Assistant's StateVacuumEntity).

Schemas and required features are HA's. The activities follow HA's demo vacuum where it behaves
like a real robot, and a real robot where it does not: stopping or recalling a docked robot leaves
it docked, and locate only beeps (the demo goes idle on both). A robot sent home shows
`returning`; reaching the dock takes time and is left to the simulation clock (the demo docks it
30 s later). HA's clean_area needs per-entity area mappings the twin does not keep, so it is not
offered.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..service import EntityDraft, Service, schema
from ..validation import ensure_list, string
from .descriptor import Carrying, Domain, FieldNotes, Spoken
from .rules import EntityRules, names, optional, text

CLEANING = "cleaning"
DOCKED = "docked"
IDLE = "idle"
PAUSED = "paused"
RETURNING = "returning"
ERROR = "error"
RUNNING = frozenset((CLEANING, PAUSED, RETURNING))

# VacuumEntityFeature, without the flags StateVacuumEntity no longer supports.
PAUSE = 4
STOP = 8
RETURN_HOME = 16
FAN_SPEED = 32
SEND_COMMAND = 256
LOCATE = 512
CLEAN_SPOT = 1024
MAP = 2048
STATE = 4096
START = 8192

FEATURES = {
    "pause": PAUSE,
    "stop": STOP,
    "return_home": RETURN_HOME,
    "fan_speed": FAN_SPEED,
    "send_command": SEND_COMMAND,
    "locate": LOCATE,
    "clean_spot": CLEAN_SPOT,
    "map": MAP,
    "state": STATE,
    "start": START,
}

ATTR_FAN_SPEED = "fan_speed"
ATTR_FAN_SPEED_LIST = "fan_speed_list"
ATTR_COMMAND = "command"
ATTR_PARAMS = "params"


def start(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Start cleaning, or resume a paused clean."""
    entity.state = CLEANING


def pause(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Pause a clean; a robot that is not cleaning stays as it is."""
    if entity.state == CLEANING:
        entity.state = PAUSED


def stop(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop where it is: a cleaning, paused or returning robot goes idle."""
    if entity.state in RUNNING:
        entity.state = IDLE


def return_to_base(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Head for the dock; a docked robot stays docked."""
    if entity.state != DOCKED:
        entity.state = RETURNING


def clean_spot(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Clean the area around the robot."""
    entity.state = CLEANING


def locate(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Beep so that someone can find the robot; nothing shows in its state."""


def set_fan_speed(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set one of the fan_speed_list speeds; others are rejected, as Roborock's vacuum does."""
    speed = data[ATTR_FAN_SPEED]
    speeds = entity.capabilities.get(ATTR_FAN_SPEED_LIST) or ()
    if speed not in speeds:
        choices = ", ".join(speeds) or "none"
        raise ServiceValidationError(
            f"{entity.entity_id} has no fan speed {speed!r}; choose one of: {choices}"
        )
    entity.attributes[ATTR_FAN_SPEED] = speed


def send_command(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Pass a vendor command on; its meaning is the vendor's, so nothing shows in the state."""


# What a vacuum may hold (twin.domains.rules), and VacuumEntityFeature's bits the twin offers no
# service for: TURN_ON, TURN_OFF and STATUS (retired), BATTERY and CLEAN_AREA.
RULES = EntityRules(
    {ATTR_FAN_SPEED_LIST: optional(names()), ATTR_FAN_SPEED: optional(text)},
    unmodelled_features=1 | 2 | 64 | 128 | 16384,
    states=frozenset((CLEANING, DOCKED, IDLE, PAUSED, RETURNING, ERROR)),
)


DOMAIN = Domain.of(
    "vacuum",
    [
        Service("start", start, required_features=(START,), description="Start cleaning."),
        Service("pause", pause, required_features=(PAUSE,), description="Pause cleaning."),
        Service("stop", stop, required_features=(STOP,), description="Stop where it is."),
        Service(
            "return_to_base",
            return_to_base,
            required_features=(RETURN_HOME,),
            description="Go back to the dock.",
        ),
        Service(
            "clean_spot",
            clean_spot,
            required_features=(CLEAN_SPOT,),
            description="Clean around where it is.",
        ),
        Service("locate", locate, required_features=(LOCATE,), description="Beep to be found."),
        Service(
            "set_fan_speed",
            set_fan_speed,
            schema({vol.Required(ATTR_FAN_SPEED): string}),
            (FAN_SPEED,),
            "Set the suction to one of fan_speed_list.",
        ),
        Service(
            "send_command",
            send_command,
            schema(
                {
                    vol.Required(ATTR_COMMAND): string,
                    vol.Optional(ATTR_PARAMS): vol.Any(dict, ensure_list),
                }
            ),
            (SEND_COMMAND,),
            "Send a vendor-specific command.",
        ),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(ATTR_FAN_SPEED,),
    fields={ATTR_FAN_SPEED: FieldNotes(options_from=ATTR_FAN_SPEED_LIST)},
    state_outcomes={
        "start": '== "cleaning"',
        "clean_spot": '== "cleaning"',
        "pause": '== "paused"',
        "stop": 'in ("idle", "docked")',
        "return_to_base": 'in ("returning", "docked")',
    },
    carrying=Carrying(capabilities=frozenset({ATTR_FAN_SPEED_LIST}), state_attribute="activity"),
    spoken={
        "start": (Spoken("HassVacuumStart"),),
        "return_to_base": (Spoken("HassVacuumReturnToBase"),),
    },
    color="#b08968",
)

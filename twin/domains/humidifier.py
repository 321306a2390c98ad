"""humidifier: humidifiers and dehumidifiers with a target humidity and modes (HumidifierEntity).

Schemas, feature checks and the humidity range check are Home Assistant's; what the entity does
follows its demo humidifier. Two things a real device does beyond the demo: it refuses a mode it
does not have, and its `action` follows its state, target and the room's current humidity.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import Numeric, string
from .descriptor import (
    ON_OFF_OUTCOMES,
    CapabilityRange,
    Carrying,
    Domain,
    FieldNotes,
    renamed,
    toggle_state,
)
from .rules import ON_OFF, PERCENT, STEP, EntityRules, names, optional, ordered, text

# HumidifierEntityFeature.
MODES = 1
FEATURES = {"modes": MODES}

ATTR_HUMIDITY = "humidity"
ATTR_CURRENT_HUMIDITY = "current_humidity"
ATTR_MIN_HUMIDITY = "min_humidity"
ATTR_MAX_HUMIDITY = "max_humidity"
ATTR_MODE = "mode"
ATTR_AVAILABLE_MODES = "available_modes"
ATTR_ACTION = "action"
DEFAULT_MIN_HUMIDITY = 0
DEFAULT_MAX_HUMIDITY = 100

# HumidifierAction.
HUMIDIFYING = "humidifying"
DRYING = "drying"
IDLE = "idle"
OFF = "off"


def action(state: str, dehumidifier: bool, current: float | None, target: float | None) -> str:
    """What the device is doing: off, idle at its target, else humidifying or drying towards it."""
    if state != "on":
        return OFF
    working = DRYING if dehumidifier else HUMIDIFYING
    if current is None or target is None:
        return working
    needed = current > target if dehumidifier else current < target
    return working if needed else IDLE


def _update_action(entity: EntityDraft) -> None:
    """Refresh `action` for a device that reports one."""
    attributes = entity.attributes
    if ATTR_ACTION in attributes:
        attributes[ATTR_ACTION] = action(
            entity.state,
            entity.entry.device_class == "dehumidifier",
            attributes.get(ATTR_CURRENT_HUMIDITY),
            attributes.get(ATTR_HUMIDITY),
        )


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on."""
    entity.state = "on"
    _update_action(entity)


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off."""
    entity.state = "off"
    _update_action(entity)


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off if on, else on (ToggleEntity.async_toggle)."""
    entity.state = "off" if entity.state == "on" else "on"
    _update_action(entity)


def set_humidity(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the target humidity within the device's min_humidity-max_humidity (HA's check)."""
    humidity = data[ATTR_HUMIDITY]
    low = entity.capabilities.get(ATTR_MIN_HUMIDITY, DEFAULT_MIN_HUMIDITY)
    high = entity.capabilities.get(ATTR_MAX_HUMIDITY, DEFAULT_MAX_HUMIDITY)
    if humidity < low or humidity > high:
        raise ServiceValidationError(
            f"Provided humidity {humidity} is not valid. Accepted range is {low} to {high}."
        )
    entity.attributes[ATTR_HUMIDITY] = humidity
    _update_action(entity)


def set_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch to one of the device's available_modes (Home Assistant leaves the check to it)."""
    mode = data[ATTR_MODE]
    modes = entity.capabilities.get(ATTR_AVAILABLE_MODES) or ()
    if mode not in modes:
        valid = ", ".join(modes) or "none"
        raise ServiceValidationError(
            f"Mode {mode} is not valid for {entity.entity_id}, valid modes are: {valid}."
        )
    entity.attributes[ATTR_MODE] = mode


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """A synthetic-home humidifier's arguments as HumidifierEntity writes them: target_humidity
    as humidity, the humidities and action only when known (an off device's action is off), the
    default humidity range; and the state, from is_on."""
    state = toggle_state(arguments)
    renamed(arguments, {"target_humidity": ATTR_HUMIDITY})
    for key in (ATTR_HUMIDITY, ATTR_CURRENT_HUMIDITY, ATTR_ACTION):
        if key in arguments and arguments[key] is None:
            del arguments[key]
    if state == "off" and ATTR_ACTION in arguments:
        arguments[ATTR_ACTION] = OFF
    arguments.setdefault(ATTR_MIN_HUMIDITY, DEFAULT_MIN_HUMIDITY)
    arguments.setdefault(ATTR_MAX_HUMIDITY, DEFAULT_MAX_HUMIDITY)
    return state


# --- what a humidifier may hold (twin.domains.rules) ----------------------------------------------


def _consistent(entry: EntityEntry, state: State) -> None:
    """Its humidity range in order, as set_humidity reads it."""
    caps = entry.capabilities
    ordered(caps, ATTR_MIN_HUMIDITY, ATTR_MAX_HUMIDITY, DEFAULT_MIN_HUMIDITY, DEFAULT_MAX_HUMIDITY)


RULES = EntityRules(
    {
        ATTR_MIN_HUMIDITY: PERCENT,
        ATTR_MAX_HUMIDITY: PERCENT,
        "target_humidity_step": optional(STEP),
        ATTR_AVAILABLE_MODES: optional(names()),
        ATTR_HUMIDITY: optional(PERCENT),
        ATTR_CURRENT_HUMIDITY: optional(PERCENT),
        ATTR_MODE: optional(text),
        ATTR_ACTION: optional(text),
    },
    _consistent,
    states=ON_OFF,
)


DOMAIN = Domain.of(
    "humidifier",
    [
        Service("turn_on", turn_on, description="Turn the device on."),
        Service("turn_off", turn_off, description="Turn the device off."),
        Service("toggle", toggle, description="Turn the device off if on, else on."),
        Service(
            "set_mode",
            set_mode,
            schema({vol.Required(ATTR_MODE): string}),
            (MODES,),
            "Switch to one of the device's available_modes.",
        ),
        Service(
            "set_humidity",
            set_humidity,
            schema({vol.Required(ATTR_HUMIDITY): Numeric(int, 0, 100)}),
            description="Set the target humidity, within min_humidity and max_humidity.",
        ),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(ATTR_HUMIDITY, ATTR_CURRENT_HUMIDITY),
    fields={
        ATTR_HUMIDITY: FieldNotes(
            CapabilityRange(
                ATTR_MIN_HUMIDITY, ATTR_MAX_HUMIDITY, DEFAULT_MIN_HUMIDITY, DEFAULT_MAX_HUMIDITY
            )
        ),
        ATTR_MODE: FieldNotes(options_from=ATTR_AVAILABLE_MODES),
    },
    state_outcomes=ON_OFF_OUTCOMES,
    carrying=Carrying(
        capabilities=frozenset(
            {ATTR_MIN_HUMIDITY, ATTR_MAX_HUMIDITY, "target_humidity_step", ATTR_AVAILABLE_MODES}
        ),
        arguments=from_arguments,
    ),
    color="#48cae4",
)

"""water_heater: hot-water tanks (Home Assistant's WaterHeaterEntity).

The state is the current operation mode. Schemas and the ServiceValidationError cases are those of
Home Assistant's water_heater services. Home Assistant leaves the rest to the device; the twin
behaves as a well-behaved tank: it refuses a target outside min_temp..max_temp and an operation mode
that is not in its operation_list (also when set_temperature carries one), and turn_on returns to
the last mode before off (HA's demo always turns on into eco).
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, check_range, schema
from ..state import State
from ..validation import Numeric, boolean, string
from .climate import TARGET_ARGUMENTS, display_temperature
from .descriptor import CapabilityRange, Carrying, Domain, FieldNotes, renamed
from .rules import STEP, TEMPERATURE, EntityRules, names, one_of, optional, ordered, text

# WaterHeaterEntityFeature, by the names device types use.
TARGET_TEMPERATURE = 1
OPERATION_MODE = 2
AWAY_MODE = 4
ON_OFF = 8
FEATURES = {
    "target_temperature": TARGET_TEMPERATURE,
    "operation_mode": OPERATION_MODE,
    "away_mode": AWAY_MODE,
    "on_off": ON_OFF,
}

# Attribute names, as Home Assistant shows them.
ATTR_TEMPERATURE = "temperature"
ATTR_OPERATION_MODE = "operation_mode"
ATTR_OPERATION_LIST = "operation_list"
ATTR_AWAY_MODE = "away_mode"
ATTR_MIN_TEMP = "min_temp"
ATTR_MAX_TEMP = "max_temp"

STATE_OFF = "off"
STATE_ON = "on"
# Home Assistant's defaults, 110 °F and 140 °F, in Celsius.
DEFAULT_MIN_TEMP = 43.3
DEFAULT_MAX_TEMP = 60.0
LAST_ON_MODE = "last_on_mode"


def _check_operation_mode(entity: EntityDraft, mode: str) -> None:
    """WaterHeaterEntity.async_handle_set_operation_mode: the mode must be in operation_list."""
    operations = entity.capabilities.get(ATTR_OPERATION_LIST)
    if operations is None:
        raise ServiceValidationError(
            f"Operation mode {mode} is not valid for {entity.entity_id}. "
            "The operation list is not defined"
        )
    if mode not in operations:
        raise ServiceValidationError(
            f"Operation mode {mode} is not valid for {entity.entity_id}. "
            f"Valid operation modes are: {', '.join(operations)}"
        )


def _set_operation(entity: EntityDraft, mode: str) -> None:
    """Switch operation mode, remembering the last one before off."""
    if mode == STATE_OFF and entity.state != STATE_OFF:
        entity.hidden[LAST_ON_MODE] = entity.state
    entity.state = mode
    if entity.supports(OPERATION_MODE):
        entity.attributes[ATTR_OPERATION_MODE] = mode


def set_temperature(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the target temperature, and the operation mode if given."""
    temperature = data[ATTR_TEMPERATURE]
    low = entity.capabilities.get(ATTR_MIN_TEMP, DEFAULT_MIN_TEMP)
    high = entity.capabilities.get(ATTR_MAX_TEMP, DEFAULT_MAX_TEMP)
    check_range(entity, "temperature", temperature, low, high)
    mode = data.get(ATTR_OPERATION_MODE)
    if mode is not None:
        _check_operation_mode(entity, mode)
        _set_operation(entity, mode)
    entity.attributes[ATTR_TEMPERATURE] = display_temperature(temperature)


def set_operation_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the operation mode, one of the entity's operation_list."""
    mode = data[ATTR_OPERATION_MODE]
    _check_operation_mode(entity, mode)
    _set_operation(entity, mode)


def set_away_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn away mode on or off; Home Assistant shows it as "on"/"off"."""
    entity.attributes[ATTR_AWAY_MODE] = STATE_ON if data[ATTR_AWAY_MODE] else STATE_OFF


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on into the last mode before off, else the first of operation_list that is not off."""
    if entity.state != STATE_OFF:
        return
    mode = entity.hidden.get(LAST_ON_MODE)
    if mode is None:
        operations = entity.capabilities.get(ATTR_OPERATION_LIST) or ()
        mode = next((op for op in operations if op != STATE_OFF), STATE_ON)
    _set_operation(entity, mode)


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off (operation mode off)."""
    _set_operation(entity, STATE_OFF)


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """A synthetic-home water heater's arguments as WaterHeaterEntity writes them: the targets
    under its names (all three shown, known or not), is_away_mode_on as away_mode, the default
    temperature range, no temperature_unit (the entity's unit); its state is current_operation."""
    renamed(arguments, TARGET_ARGUMENTS)
    arguments.pop("temperature_unit", None)
    away = arguments.pop("is_away_mode_on", None)
    if away is not None:
        arguments[ATTR_AWAY_MODE] = STATE_ON if away else STATE_OFF
    for key, default in (
        (ATTR_TEMPERATURE, None),
        ("target_temp_high", None),
        ("target_temp_low", None),
        (ATTR_MIN_TEMP, DEFAULT_MIN_TEMP),
        (ATTR_MAX_TEMP, DEFAULT_MAX_TEMP),
    ):
        arguments.setdefault(key, default)
    operation: str | None = arguments.pop("current_operation", None)
    return operation


def show(entity: EntityDraft) -> None:
    """The operation mode (and list) and away mode, shown only by a water heater with those
    features."""
    attributes = entity.attributes
    if entity.supports(OPERATION_MODE):
        attributes[ATTR_OPERATION_MODE] = entity.state
    else:
        attributes.pop(ATTR_OPERATION_MODE, None)
        attributes.pop(ATTR_OPERATION_LIST, None)
    if entity.supports(AWAY_MODE):
        attributes.setdefault(ATTR_AWAY_MODE, STATE_OFF)
    else:
        attributes.pop(ATTR_AWAY_MODE, None)


# --- what a water heater may hold (twin.domains.rules) --------------------------------------------


def _consistent(entry: EntityEntry, state: State) -> None:
    """Its temperature range in order, as set_temperature reads it."""
    ordered(entry.capabilities, ATTR_MIN_TEMP, ATTR_MAX_TEMP, DEFAULT_MIN_TEMP, DEFAULT_MAX_TEMP)


RULES = EntityRules(
    {
        ATTR_MIN_TEMP: TEMPERATURE,
        ATTR_MAX_TEMP: TEMPERATURE,
        "target_temp_step": optional(STEP),
        ATTR_OPERATION_LIST: optional(names()),
        ATTR_TEMPERATURE: optional(TEMPERATURE),
        "current_temperature": optional(TEMPERATURE),
        ATTR_OPERATION_MODE: optional(text),
        ATTR_AWAY_MODE: optional(one_of((STATE_ON, STATE_OFF))),
        LAST_ON_MODE: optional(text),
        "tank_temperature": optional(TEMPERATURE),  # twin.physics.TANK_TEMPERATURE: the exact tank
    },
    _consistent,
)


DOMAIN = Domain.of(
    "water_heater",
    [
        Service(
            "set_temperature",
            set_temperature,
            schema(
                {
                    vol.Required(ATTR_TEMPERATURE): Numeric(float),
                    vol.Optional(ATTR_OPERATION_MODE): string,
                }
            ),
            (TARGET_TEMPERATURE,),
            "Set the target water temperature, and optionally the operation mode.",
        ),
        Service(
            "set_operation_mode",
            set_operation_mode,
            schema({vol.Required(ATTR_OPERATION_MODE): string}),
            (OPERATION_MODE,),
            "Set the operation mode (one of operation_list).",
        ),
        Service(
            "set_away_mode",
            set_away_mode,
            schema({vol.Required(ATTR_AWAY_MODE): boolean}),
            (AWAY_MODE,),
            "Turn away mode on or off.",
        ),
        Service("turn_on", turn_on, required_features=(ON_OFF,), description="Turn on."),
        Service("turn_off", turn_off, required_features=(ON_OFF,), description="Turn off."),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(ATTR_TEMPERATURE, "current_temperature"),
    fields={
        ATTR_TEMPERATURE: FieldNotes(
            CapabilityRange(
                ATTR_MIN_TEMP, ATTR_MAX_TEMP, DEFAULT_MIN_TEMP, DEFAULT_MAX_TEMP, "target_temp_step"
            )
        ),
        ATTR_OPERATION_MODE: FieldNotes(options_from=ATTR_OPERATION_LIST),
    },
    state_outcomes={"turn_on": '!= "off"', "turn_off": '== "off"'},
    carrying=Carrying(
        capabilities=frozenset(
            {ATTR_MIN_TEMP, ATTR_MAX_TEMP, "target_temp_step", ATTR_OPERATION_LIST}
        ),
        arguments=from_arguments,
        temperature_unit=True,
        shows=show,
    ),
    color="#d62828",
)

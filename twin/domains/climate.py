"""climate: thermostats, air conditioners and heat pumps (Home Assistant's ClimateEntity).

The state is the HVAC mode. Schemas and the ServiceValidationError cases are those of Home
Assistant's climate services; what HA leaves to the device follows a well-behaved thermostat:
a thermostat with both a single target and a range (ecobee, Nest) shows the range in heat_cool and
the single target in every other mode, and refuses the kind of target its mode does not use;
turn_on returns to the last mode the device was in before it was turned off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Handler, Service, check_range, schema
from ..state import State
from ..validation import Numeric, string
from .descriptor import (
    ON_OFF_SPOKEN,
    Asked,
    CapabilityRange,
    Carrying,
    Domain,
    FieldNotes,
    Spoken,
    has_feature,
    renamed,
)
from .rules import (
    PERCENT,
    STEP,
    TEMPERATURE,
    EntityRules,
    names,
    number,
    one_of,
    optional,
    ordered,
    text,
)

# ClimateEntityFeature, by the names device types use.
TARGET_TEMPERATURE = 1
TARGET_TEMPERATURE_RANGE = 2
TARGET_HUMIDITY = 4
FAN_MODE = 8
PRESET_MODE = 16
SWING_MODE = 32
TURN_OFF = 128
TURN_ON = 256
SWING_HORIZONTAL_MODE = 512
FEATURES = {
    "target_temperature": TARGET_TEMPERATURE,
    "target_temperature_range": TARGET_TEMPERATURE_RANGE,
    "target_humidity": TARGET_HUMIDITY,
    "fan_mode": FAN_MODE,
    "preset_mode": PRESET_MODE,
    "swing_mode": SWING_MODE,
    "turn_off": TURN_OFF,
    "turn_on": TURN_ON,
    "swing_horizontal_mode": SWING_HORIZONTAL_MODE,
}
DUAL_TARGETS = TARGET_TEMPERATURE | TARGET_TEMPERATURE_RANGE

# HVACMode and HVACAction values.
OFF = "off"
HEAT = "heat"
COOL = "cool"
HEAT_COOL = "heat_cool"
AUTO = "auto"
DRY = "dry"
FAN_ONLY = "fan_only"
HVAC_MODES = {mode: mode for mode in (OFF, HEAT, COOL, HEAT_COOL, AUTO, DRY, FAN_ONLY)}
HEATING_MODES = frozenset((HEAT, HEAT_COOL, AUTO))
COOLING_MODES = frozenset((COOL, HEAT_COOL, AUTO))
ACTION_OF_MODE = {OFF: "off", DRY: "drying", FAN_ONLY: "fan"}

# Attribute names, as Home Assistant shows them.
ATTR_HVAC_MODE = "hvac_mode"
ATTR_HVAC_MODES = "hvac_modes"
ATTR_HVAC_ACTION = "hvac_action"
ATTR_CURRENT_TEMPERATURE = "current_temperature"
ATTR_TEMPERATURE = "temperature"
ATTR_TARGET_TEMP_LOW = "target_temp_low"
ATTR_TARGET_TEMP_HIGH = "target_temp_high"
ATTR_MIN_TEMP = "min_temp"
ATTR_MAX_TEMP = "max_temp"
ATTR_HUMIDITY = "humidity"
ATTR_MIN_HUMIDITY = "min_humidity"
ATTR_MAX_HUMIDITY = "max_humidity"
ATTR_FAN_MODE = "fan_mode"
ATTR_PRESET_MODE = "preset_mode"
ATTR_SWING_MODE = "swing_mode"
ATTR_SWING_HORIZONTAL_MODE = "swing_horizontal_mode"
TEMPERATURE_KEYS = (ATTR_TEMPERATURE, ATTR_TARGET_TEMP_HIGH, ATTR_TARGET_TEMP_LOW)

DEFAULT_MIN_TEMP = 7
DEFAULT_MAX_TEMP = 35
DEFAULT_MIN_HUMIDITY = 30
DEFAULT_MAX_HUMIDITY = 99
# Half the width of the range a dual thermostat starts with when it never had one.
RANGE_HALF_WIDTH = 1.0
# The `_attr_*` names of a thermostat's (and a water heater's) targets, and Home Assistant's.
TARGET_ARGUMENTS = {
    "target_temperature": ATTR_TEMPERATURE,
    "target_temperature_low": ATTR_TARGET_TEMP_LOW,
    "target_temperature_high": ATTR_TARGET_TEMP_HIGH,
    "target_temperature_step": "target_temp_step",
    "target_humidity": ATTR_HUMIDITY,
}
LAST_ON_MODE = "last_on_mode"

# For each mode-like field: its label, its plural and the capability listing its options.
OPTIONS = {
    ATTR_HVAC_MODE: ("HVAC mode", "HVAC modes", ATTR_HVAC_MODES),
    ATTR_FAN_MODE: ("Fan mode", "fan modes", "fan_modes"),
    ATTR_PRESET_MODE: ("Preset mode", "preset modes", "preset_modes"),
    ATTR_SWING_MODE: ("Swing mode", "swing modes", "swing_modes"),
    ATTR_SWING_HORIZONTAL_MODE: (
        "Horizontal swing mode",
        "horizontal swing modes",
        "swing_horizontal_modes",
    ),
}


def hvac_mode(value: Any) -> str:
    """An HVAC mode, as Home Assistant's `vol.Coerce(HVACMode)` accepts it."""
    try:
        return HVAC_MODES[value]
    except (KeyError, TypeError):
        raise vol.CoerceInvalid("expected HVACMode") from None


def any_temperature(data: dict[str, Any]) -> dict[str, Any]:
    """At least one target temperature, as Home Assistant's `AtLeastOne` demands."""
    if not any(key in data for key in TEMPERATURE_KEYS):
        raise vol.Invalid(
            "must contain at least one of temperature, target_temp_high, target_temp_low"
        )
    return data


SET_TEMPERATURE_SCHEMA = vol.All(
    any_temperature,
    schema(
        {
            vol.Exclusive(ATTR_TEMPERATURE, "temperature"): Numeric(float),
            vol.Inclusive(ATTR_TARGET_TEMP_HIGH, "temperature"): Numeric(float),
            vol.Inclusive(ATTR_TARGET_TEMP_LOW, "temperature"): Numeric(float),
            vol.Optional(ATTR_HVAC_MODE): hvac_mode,
        }
    ),
)


def derive_hvac_action(mode: str, attributes: Mapping[str, Any]) -> str:
    """What the device is doing in `mode` given its current and target temperatures.

    Heating below the target (or the range's low end), cooling above it (or the range's high
    end), idle once reached or when the room temperature is unknown. The physics reuses this.
    """
    action = ACTION_OF_MODE.get(mode)
    if action is not None:
        return action
    current = attributes.get(ATTR_CURRENT_TEMPERATURE)
    low = attributes.get(ATTR_TARGET_TEMP_LOW)
    high = attributes.get(ATTR_TARGET_TEMP_HIGH)
    if low is None or high is None:
        low = high = attributes.get(ATTR_TEMPERATURE)
    if current is None or low is None or high is None:
        return "idle"
    if mode in HEATING_MODES and current < low:
        return "heating"
    if mode in COOLING_MODES and current > high:
        return "cooling"
    return "idle"


def display_temperature(value: float) -> float:
    """A temperature as Home Assistant shows it: Celsius to a tenth (PRECISION_TENTHS)."""
    return round(value, 1)


def _check_option(entity: EntityDraft, key: str, value: str) -> None:
    """ClimateEntity._valid_mode_or_raise: the value must be one of the entity's options."""
    label, plural, options_key = OPTIONS[key]
    options = entity.capabilities.get(options_key) or ()
    if value in options:
        return
    valid = ", ".join(options) or "none"
    raise ServiceValidationError(
        f"{label} {value} is not valid for {entity.entity_id}. Valid {plural} are: {valid}"
    )


def _refresh_action(entity: EntityDraft) -> None:
    """Keep hvac_action consistent, for devices that report it."""
    if ATTR_HVAC_ACTION in entity.attributes:
        entity.attributes[ATTR_HVAC_ACTION] = derive_hvac_action(entity.state, entity.attributes)


def _set_mode(entity: EntityDraft, mode: str) -> None:
    """Switch mode, remembering the last one before off and showing the mode's targets."""
    old = entity.state
    if mode == old:
        return
    if mode == OFF:
        entity.hidden[LAST_ON_MODE] = old
    entity.state = mode
    if entity.supports(DUAL_TARGETS) and (old == HEAT_COOL) != (mode == HEAT_COOL):
        _swap_targets(entity, to_range=mode == HEAT_COOL)
    _refresh_action(entity)


def _swap_targets(entity: EntityDraft, to_range: bool) -> None:
    """A dual thermostat shows one kind of target; it remembers the other in `hidden`."""
    attributes, hidden = entity.attributes, entity.hidden
    if to_range:
        temperature = attributes.get(ATTR_TEMPERATURE)
        hidden[ATTR_TEMPERATURE] = temperature
        attributes[ATTR_TEMPERATURE] = None
        low = hidden.pop(ATTR_TARGET_TEMP_LOW, None)
        high = hidden.pop(ATTR_TARGET_TEMP_HIGH, None)
        if (low is None or high is None) and temperature is not None:
            caps = entity.capabilities
            low = display_temperature(
                max(temperature - RANGE_HALF_WIDTH, caps.get(ATTR_MIN_TEMP, DEFAULT_MIN_TEMP))
            )
            high = display_temperature(
                min(temperature + RANGE_HALF_WIDTH, caps.get(ATTR_MAX_TEMP, DEFAULT_MAX_TEMP))
            )
        attributes[ATTR_TARGET_TEMP_LOW] = low
        attributes[ATTR_TARGET_TEMP_HIGH] = high
        return
    low = attributes.get(ATTR_TARGET_TEMP_LOW)
    high = attributes.get(ATTR_TARGET_TEMP_HIGH)
    hidden[ATTR_TARGET_TEMP_LOW] = low
    hidden[ATTR_TARGET_TEMP_HIGH] = high
    attributes[ATTR_TARGET_TEMP_LOW] = attributes[ATTR_TARGET_TEMP_HIGH] = None
    temperature = hidden.pop(ATTR_TEMPERATURE, None)
    if temperature is None and low is not None and high is not None:
        # Never set: heat keeps the heating setpoint, cool the cooling one, as ecobee does.
        temperature = {HEAT: low, COOL: high}.get(
            entity.state, display_temperature((low + high) / 2)
        )
    attributes[ATTR_TEMPERATURE] = temperature


def _on_mode(entity: EntityDraft) -> str:
    """The mode turn_on returns to: the last one before off, else HA's own choice."""
    last: str | None = entity.hidden.get(LAST_ON_MODE)
    if last is not None:
        return last
    modes = entity.capabilities.get(ATTR_HVAC_MODES) or ()
    for mode in (HEAT_COOL, HEAT, COOL):
        if mode in modes:
            return mode
    return next((mode for mode in modes if mode != OFF), OFF)


def _check_target_kind(entity: EntityDraft, data: dict[str, Any], mode: str) -> None:
    """A dual thermostat takes the range in heat_cool and the single target in other modes."""
    if mode == HEAT_COOL and ATTR_TEMPERATURE in data:
        raise ServiceValidationError(
            f"{entity.entity_id} in heat_cool mode takes target_temp_low and target_temp_high, "
            "not temperature; set those, or pass hvac_mode heat or cool with the temperature"
        )
    if mode != HEAT_COOL and ATTR_TARGET_TEMP_LOW in data:
        raise ServiceValidationError(
            f"{entity.entity_id} in {mode} mode takes temperature, not target_temp_low and "
            "target_temp_high; set temperature, or pass hvac_mode heat_cool with the range"
        )


def set_temperature(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the target temperature or range, and the mode if given (climate's
    _async_service_temperature_set, then a thermostat that validates the mode it is given)."""
    if ATTR_TEMPERATURE in data and not entity.supports(TARGET_TEMPERATURE):
        raise ServiceValidationError(
            f"{entity.entity_id} has no single target temperature; "
            "set target_temp_low and target_temp_high instead"
        )
    if ATTR_TARGET_TEMP_LOW in data and not entity.supports(TARGET_TEMPERATURE_RANGE):
        raise ServiceValidationError(
            f"{entity.entity_id} has no target temperature range; set temperature instead"
        )
    low, high = data.get(ATTR_TARGET_TEMP_LOW), data.get(ATTR_TARGET_TEMP_HIGH)
    if low and high and low > high:
        raise ServiceValidationError(
            f"target_temp_low ({low}) cannot be higher than target_temp_high ({high})"
        )
    caps = entity.capabilities
    min_temp = caps.get(ATTR_MIN_TEMP, DEFAULT_MIN_TEMP)
    max_temp = caps.get(ATTR_MAX_TEMP, DEFAULT_MAX_TEMP)
    for key, value in data.items():
        if key in TEMPERATURE_KEYS:
            check_range(entity, "temperature", value, min_temp, max_temp)
    mode = data.get(ATTR_HVAC_MODE, entity.state)
    if ATTR_HVAC_MODE in data:
        _check_option(entity, ATTR_HVAC_MODE, mode)
    if entity.supports(DUAL_TARGETS):
        _check_target_kind(entity, data, mode)
    _set_mode(entity, mode)
    for key in TEMPERATURE_KEYS:
        if key in data:
            entity.attributes[key] = display_temperature(data[key])
    _refresh_action(entity)


def set_hvac_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the HVAC mode, one of the entity's hvac_modes."""
    mode = data[ATTR_HVAC_MODE]
    _check_option(entity, ATTR_HVAC_MODE, mode)
    _set_mode(entity, mode)


def set_humidity(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the target humidity within min_humidity..max_humidity (_async_service_humidity_set)."""
    humidity = data[ATTR_HUMIDITY]
    low = entity.capabilities.get(ATTR_MIN_HUMIDITY, DEFAULT_MIN_HUMIDITY)
    high = entity.capabilities.get(ATTR_MAX_HUMIDITY, DEFAULT_MAX_HUMIDITY)
    check_range(entity, "humidity", humidity, low, high)
    entity.attributes[ATTR_HUMIDITY] = humidity


def _set_option(key: str) -> Handler:
    """A handler that sets `key` to one of the entity's options (async_handle_set_*_service)."""

    def handler(entity: EntityDraft, data: dict[str, Any]) -> None:
        value = data[key]
        _check_option(entity, key, value)
        entity.attributes[key] = value

    return handler


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on into the last mode before off; an entity already on stays as it is."""
    if entity.state == OFF:
        _set_mode(entity, _on_mode(entity))


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off (HVAC mode off)."""
    _set_mode(entity, OFF)


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on when off, else off (ClimateEntity.async_toggle)."""
    if entity.state == OFF:
        turn_on(entity, data)
    else:
        turn_off(entity, data)


def _option_service(key: str, feature: int, description: str) -> Service:
    return Service(
        f"set_{key}",
        _set_option(key),
        schema({vol.Required(key): string}),
        (feature,),
        description,
    )


# --- what a climate entity may hold (twin.domains.rules) ------------------------------------------

AUX_HEAT = 64  # ClimateEntityFeature.AUX_HEAT, which Home Assistant has retired


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """A synthetic-home thermostat's arguments under ClimateEntity's attribute names, with its
    default temperature range (shown always); its temperature_unit is the entity's unit, no
    attribute, and a current humidity or action shows only when known."""
    renamed(arguments, TARGET_ARGUMENTS)
    arguments.pop("temperature_unit", None)
    for key in ("current_humidity", ATTR_HVAC_ACTION):
        if key in arguments and arguments[key] is None:
            del arguments[key]
    arguments.setdefault(ATTR_MIN_TEMP, DEFAULT_MIN_TEMP)
    arguments.setdefault(ATTR_MAX_TEMP, DEFAULT_MAX_TEMP)
    return None


def show(entity: EntityDraft) -> None:
    """ClimateEntity's humidity range, shown with TARGET_HUMIDITY: its defaults if not given."""
    if entity.supports(TARGET_HUMIDITY):
        entity.attributes.setdefault(ATTR_MIN_HUMIDITY, DEFAULT_MIN_HUMIDITY)
        entity.attributes.setdefault(ATTR_MAX_HUMIDITY, DEFAULT_MAX_HUMIDITY)


def _consistent(entry: EntityEntry, state: State) -> None:
    """Its temperature and humidity ranges in order, as set_temperature and set_humidity use."""
    caps = entry.capabilities
    ordered(caps, ATTR_MIN_TEMP, ATTR_MAX_TEMP, DEFAULT_MIN_TEMP, DEFAULT_MAX_TEMP)
    ordered(caps, ATTR_MIN_HUMIDITY, ATTR_MAX_HUMIDITY, DEFAULT_MIN_HUMIDITY, DEFAULT_MAX_HUMIDITY)


RULES = EntityRules(
    {
        **{options_key: optional(names()) for _, _, options_key in OPTIONS.values()},
        **{key: optional(text) for key in OPTIONS},
        ATTR_HVAC_MODES: optional(names(one_of(HVAC_MODES))),
        ATTR_MIN_TEMP: TEMPERATURE,
        ATTR_MAX_TEMP: TEMPERATURE,
        "target_temp_step": optional(STEP),
        ATTR_MIN_HUMIDITY: PERCENT,
        ATTR_MAX_HUMIDITY: PERCENT,
        "target_humidity_step": optional(STEP),
        ATTR_CURRENT_TEMPERATURE: optional(TEMPERATURE),
        **{key: optional(TEMPERATURE) for key in TEMPERATURE_KEYS},
        ATTR_HUMIDITY: optional(PERCENT),
        "current_humidity": optional(PERCENT),
        ATTR_HVAC_ACTION: optional(text),
        LAST_ON_MODE: optional(one_of(HVAC_MODES)),
        "capacity": optional(number(0)),  # twin.physics.CAPACITY: how fast it heats a room, °C/h
    },
    _consistent,
    AUX_HEAT,
    states=frozenset(HVAC_MODES),
)

# What bounds a target temperature, for the device manual.
_TEMPERATURE_RANGE = CapabilityRange(
    ATTR_MIN_TEMP, ATTR_MAX_TEMP, DEFAULT_MIN_TEMP, DEFAULT_MAX_TEMP, "target_temp_step"
)

DOMAIN = Domain.of(
    "climate",
    [
        Service(
            "set_hvac_mode",
            set_hvac_mode,
            schema({vol.Required(ATTR_HVAC_MODE): hvac_mode}),
            description="Set the HVAC mode (off, heat, cool, heat_cool, auto, dry, fan_only).",
        ),
        Service(
            "set_temperature",
            set_temperature,
            SET_TEMPERATURE_SCHEMA,
            (TARGET_TEMPERATURE, TARGET_TEMPERATURE_RANGE),
            "Set the target temperature, or the target_temp_low/target_temp_high range.",
        ),
        Service(
            "set_humidity",
            set_humidity,
            schema({vol.Required(ATTR_HUMIDITY): Numeric(int)}),
            (TARGET_HUMIDITY,),
            "Set the target humidity.",
        ),
        _option_service(ATTR_FAN_MODE, FAN_MODE, "Set the fan mode."),
        _option_service(ATTR_PRESET_MODE, PRESET_MODE, "Set the preset mode."),
        _option_service(ATTR_SWING_MODE, SWING_MODE, "Set the swing mode."),
        _option_service(
            ATTR_SWING_HORIZONTAL_MODE, SWING_HORIZONTAL_MODE, "Set the horizontal swing mode."
        ),
        Service("turn_on", turn_on, required_features=(TURN_ON,), description="Turn on."),
        Service("turn_off", turn_off, required_features=(TURN_OFF,), description="Turn off."),
        Service(
            "toggle",
            toggle,
            required_features=(TURN_OFF, TURN_ON),
            description="Turn on when off, else off.",
        ),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(
        ATTR_CURRENT_TEMPERATURE,
        ATTR_TEMPERATURE,
        ATTR_TARGET_TEMP_LOW,
        ATTR_TARGET_TEMP_HIGH,
    ),
    fields={
        ATTR_TEMPERATURE: FieldNotes(_TEMPERATURE_RANGE, applies=has_feature(TARGET_TEMPERATURE)),
        **{
            key: FieldNotes(_TEMPERATURE_RANGE, applies=has_feature(TARGET_TEMPERATURE_RANGE))
            for key in (ATTR_TARGET_TEMP_LOW, ATTR_TARGET_TEMP_HIGH)
        },
        ATTR_HUMIDITY: FieldNotes(
            CapabilityRange(
                ATTR_MIN_HUMIDITY,
                ATTR_MAX_HUMIDITY,
                DEFAULT_MIN_HUMIDITY,
                DEFAULT_MAX_HUMIDITY,
                "target_humidity_step",
            )
        ),
        **{
            key: FieldNotes(options_from=options_key)
            for key, (_, _, options_key) in OPTIONS.items()
        },
    },
    state_outcomes={"turn_on": '!= "off"', "turn_off": '== "off"'},
    carrying=Carrying(
        capabilities=frozenset(
            {
                ATTR_MIN_TEMP,
                ATTR_MAX_TEMP,
                "target_temp_step",
                ATTR_MIN_HUMIDITY,
                ATTR_MAX_HUMIDITY,
                "target_humidity_step",
                *(options_key for _, _, options_key in OPTIONS.values()),
            }
        ),
        arguments=from_arguments,
        state_attribute=ATTR_HVAC_MODE,
        temperature_unit=True,
        shows=show,
    ),
    spoken={
        **ON_OFF_SPOKEN,
        "set_temperature": (Spoken("HassClimateSetTemperature", {"temperature": "temperature"}),),
    },
    asked=Asked(
        nouns=("thermostat", "heater", "heating", "radiator", "ac"),
        request=("set_temperature", {"temperature": 21}),
    ),
    color="#e76f51",
)

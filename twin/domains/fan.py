"""fan: speed as a percentage, preset modes, oscillation and direction (Home Assistant's FanEntity).

Schemas, feature checks, preset validation and the speed arithmetic are Home Assistant's; what the
entity does with a call follows its demo fan (`DemoPercentageFan`), plus what a real fan does: it
resumes its last speed or preset when turned on without one.
"""

from __future__ import annotations

import math
from typing import Any

import voluptuous as vol

from ..errors import HomeDefinitionError, ServiceValidationError
from ..service import EntityDraft, Service, schema
from ..validation import Numeric, boolean, shown, string
from .descriptor import (
    ON_OFF_OUTCOMES,
    Asked,
    CapabilityRange,
    Carrying,
    Domain,
    FieldNotes,
    Spoken,
    has_feature,
    renamed,
    toggle_state,
)
from .rules import ON_OFF, PERCENT, EntityRules, flag, names, number, optional, text

# FanEntityFeature.
SET_SPEED = 1
OSCILLATE = 2
DIRECTION = 4
PRESET_MODE = 8
TURN_OFF = 16
TURN_ON = 32
FEATURES = {
    "set_speed": SET_SPEED,
    "oscillate": OSCILLATE,
    "direction": DIRECTION,
    "preset_mode": PRESET_MODE,
    "turn_off": TURN_OFF,
    "turn_on": TURN_ON,
}
# FanEntity.state_attributes shows preset_mode when either of these is supported.
_SHOWS_PRESET = SET_SPEED | PRESET_MODE

ATTR_PERCENTAGE = "percentage"
ATTR_PERCENTAGE_STEP = "percentage_step"
ATTR_PRESET_MODE = "preset_mode"
ATTR_PRESET_MODES = "preset_modes"
ATTR_OSCILLATING = "oscillating"
ATTR_DIRECTION = "direction"
DIRECTIONS = ("forward", "reverse")

# The demo fan's speed when turned on with none given; here only when it has no speed to resume.
DEFAULT_PERCENTAGE = 67
_PERCENTAGE = Numeric(int, 0, 100)


class NotValidPresetModeError(ServiceValidationError):
    """The preset mode is not one of the fan's preset_modes (as Home Assistant names it)."""


def speed_count(entity: EntityDraft) -> int:
    """The number of speeds, from the static `percentage_step` (Home Assistant's 100 / count)."""
    step = entity.capabilities.get(ATTR_PERCENTAGE_STEP)
    return round(100 / step) if step else 100


def speed_to_percentage(count: int, speed: float) -> int:
    """Home Assistant's `ranged_value_to_percentage((1, count), speed)`, with the same rounding."""
    return int(speed * 100 // count)


def percentage_to_speed(count: int, percentage: float) -> float:
    """Home Assistant's `percentage_to_ranged_value((1, count), percentage)`."""
    return percentage * count / 100


def adjusted_percentage(current: int, modifier: int, step: int | None, count: int) -> int:
    """FanEntity._async_adjust_speed: by `step` up or down, else to the next of `count` speeds."""
    if step is not None:
        new = current + step * modifier
    else:
        speed = math.ceil(percentage_to_speed(count, current))
        new = speed_to_percentage(count, speed + modifier)
    return max(0, min(100, new))


def _check_preset_mode(entity: EntityDraft, preset_mode: str) -> None:
    """FanEntity._valid_preset_mode_or_raise."""
    preset_modes = entity.capabilities.get(ATTR_PRESET_MODES)
    if not preset_modes or preset_mode not in preset_modes:
        valid = ", ".join(preset_modes) if preset_modes else "none (this fan has no preset modes)"
        raise NotValidPresetModeError(
            f"Preset mode {preset_mode} is not valid for {entity.entity_id}, "
            f"valid preset modes are: {valid}."
        )


def _set_speed(entity: EntityDraft, percentage: int) -> None:
    """Run at `percentage` and leave any preset (the demo's set_percentage); 0 turns the fan off."""
    if percentage == 0:
        _turn_off(entity)
        return
    if entity.supports(SET_SPEED):
        entity.attributes[ATTR_PERCENTAGE] = percentage
    if entity.entry.supported_features & _SHOWS_PRESET:
        entity.attributes[ATTR_PRESET_MODE] = None
    entity.state = "on"


def _set_preset(entity: EntityDraft, preset_mode: str) -> None:
    """Run in a preset, which has no percentage (the demo's set_preset_mode)."""
    entity.attributes[ATTR_PRESET_MODE] = preset_mode
    if entity.supports(SET_SPEED):
        entity.attributes[ATTR_PERCENTAGE] = None
    entity.state = "on"


def _turn_off(entity: EntityDraft) -> None:
    """Stop at percentage 0 with no preset (the demo's turn_off), remembering what it ran at."""
    attributes = entity.attributes
    if entity.state == "on":
        entity.hidden[ATTR_PRESET_MODE] = attributes.get(ATTR_PRESET_MODE)
        if attributes.get(ATTR_PERCENTAGE):
            entity.hidden[ATTR_PERCENTAGE] = attributes[ATTR_PERCENTAGE]
    if entity.supports(SET_SPEED):
        attributes[ATTR_PERCENTAGE] = 0
    if entity.entry.supported_features & _SHOWS_PRESET:
        attributes[ATTR_PRESET_MODE] = None
    entity.state = "off"


def _resume(entity: EntityDraft) -> None:
    """Turn on as a real fan does: in the preset or at the speed it last ran at."""
    preset_mode = entity.hidden.get(ATTR_PRESET_MODE)
    if preset_mode is not None:
        _set_preset(entity, preset_mode)
    else:
        _set_speed(entity, entity.hidden.get(ATTR_PERCENTAGE, DEFAULT_PERCENTAGE))


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on in a preset, at a speed, or as it last ran; a fan already on keeps running as is.

    A percentage is ignored by a fan without set_speed (it has no speed to set).
    """
    preset_mode = data.get(ATTR_PRESET_MODE)
    if preset_mode is not None:
        _check_preset_mode(entity, preset_mode)
        _set_preset(entity, preset_mode)
    elif data.get(ATTR_PERCENTAGE) is not None and entity.supports(SET_SPEED):
        _set_speed(entity, data[ATTR_PERCENTAGE])
    elif entity.state != "on":
        _resume(entity)


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off."""
    _turn_off(entity)


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off if on, else on as it last ran (ToggleEntity.async_toggle)."""
    if entity.state == "on":
        _turn_off(entity)
    else:
        _resume(entity)


def set_percentage(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the speed; 0 turns the fan off (FanEntity.async_set_percentage)."""
    _set_speed(entity, data[ATTR_PERCENTAGE])


def increase_speed(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Speed up by `percentage_step`, else to the next of the fan's speeds."""
    current = entity.attributes.get(ATTR_PERCENTAGE) or 0
    step = data.get(ATTR_PERCENTAGE_STEP)
    _set_speed(entity, adjusted_percentage(current, 1, step, speed_count(entity)))


def decrease_speed(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Slow down by `percentage_step`, else to the previous speed; at 0 the fan is off."""
    current = entity.attributes.get(ATTR_PERCENTAGE) or 0
    step = data.get(ATTR_PERCENTAGE_STEP)
    _set_speed(entity, adjusted_percentage(current, -1, step, speed_count(entity)))


def oscillate(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Start or stop oscillating."""
    entity.attributes[ATTR_OSCILLATING] = data[ATTR_OSCILLATING]


def set_direction(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the direction; a real fan knows only forward and reverse (the demo takes any text)."""
    direction = data[ATTR_DIRECTION]
    if direction not in DIRECTIONS:
        raise ServiceValidationError(
            f"direction must be forward or reverse, got {direction!r} for {entity.entity_id}"
        )
    entity.attributes[ATTR_DIRECTION] = direction


def set_preset_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Run in one of the fan's preset modes."""
    preset_mode = data[ATTR_PRESET_MODE]
    _check_preset_mode(entity, preset_mode)
    _set_preset(entity, preset_mode)


def show(entity: EntityDraft) -> None:
    """Show every attribute FanEntity.state_attributes writes for the fan's features, with
    Home Assistant's defaults for what an imported fan does not say, and no others."""
    features = entity.entry.supported_features
    shown: dict[str, Any] = {}
    if features & DIRECTION:
        shown[ATTR_DIRECTION] = None
    if features & OSCILLATE:
        shown[ATTR_OSCILLATING] = None
    if features & SET_SPEED:
        shown[ATTR_PERCENTAGE] = 0
        shown[ATTR_PERCENTAGE_STEP] = 100 / speed_count(entity)
    else:
        # FanEntity shows no speed for a fan that cannot set one.
        entity.attributes.pop(ATTR_PERCENTAGE, None)
        entity.attributes.pop(ATTR_PERCENTAGE_STEP, None)
    if features & _SHOWS_PRESET:
        shown[ATTR_PRESET_MODE] = None
        shown[ATTR_PRESET_MODES] = entity.capabilities.get(ATTR_PRESET_MODES)
    for key, value in shown.items():
        entity.attributes.setdefault(key, value)


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """A synthetic-home fan's arguments as Home Assistant shows them: its speed_count as the
    percentage_step (FanEntity.percentage_step is 100 / speed_count), its current_direction as
    the direction; and its state, from is_on."""
    renamed(arguments, {"current_direction": ATTR_DIRECTION})
    count = arguments.pop("speed_count", None)
    if count is not None:
        arguments[ATTR_PERCENTAGE_STEP] = 100 / _speed_count(count)
    return toggle_state(arguments)


def _speed_count(count: Any) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 10_000:
        raise HomeDefinitionError(
            "attributes.speed_count: expected a whole number of speeds, 1-10000, got "
            f"{shown(count)}"
        )
    return count


_STEP_SCHEMA = schema({vol.Optional(ATTR_PERCENTAGE_STEP): _PERCENTAGE})


# What a fan may hold (twin.domains.rules); speed_count divides by its percentage_step.
RULES = EntityRules(
    {
        ATTR_PERCENTAGE_STEP: optional(number(0.01, 100)),
        ATTR_PRESET_MODES: optional(names()),
        ATTR_PERCENTAGE: optional(PERCENT),
        ATTR_PRESET_MODE: optional(text),
        ATTR_OSCILLATING: optional(flag),
        ATTR_DIRECTION: optional(text),
    },
    states=ON_OFF,
)


DOMAIN = Domain.of(
    "fan",
    [
        Service(
            "turn_on",
            turn_on,
            schema(
                {
                    vol.Optional(ATTR_PERCENTAGE): _PERCENTAGE,
                    vol.Optional(ATTR_PRESET_MODE): string,
                }
            ),
            (TURN_ON,),
            "Turn the fan on, optionally at a percentage or in a preset mode.",
        ),
        Service(
            "turn_off", turn_off, required_features=(TURN_OFF,), description="Turn the fan off."
        ),
        Service(
            "toggle",
            toggle,
            required_features=(TURN_OFF, TURN_ON),
            description="Turn the fan off if on, else on.",
        ),
        Service(
            "increase_speed",
            increase_speed,
            _STEP_SCHEMA,
            (SET_SPEED,),
            "Speed up by percentage_step, or to the next speed.",
        ),
        Service(
            "decrease_speed",
            decrease_speed,
            _STEP_SCHEMA,
            (SET_SPEED,),
            "Slow down by percentage_step, or to the previous speed.",
        ),
        Service(
            "oscillate",
            oscillate,
            schema({vol.Required(ATTR_OSCILLATING): boolean}),
            (OSCILLATE,),
            "Start or stop oscillating.",
        ),
        Service(
            "set_direction",
            set_direction,
            schema({vol.Required(ATTR_DIRECTION): string}),
            (DIRECTION,),
            "Set the direction: forward or reverse.",
        ),
        Service(
            "set_percentage",
            set_percentage,
            schema({vol.Required(ATTR_PERCENTAGE): _PERCENTAGE}),
            (SET_SPEED,),
            "Set the speed as a percentage; 0 turns the fan off.",
        ),
        Service(
            "set_preset_mode",
            set_preset_mode,
            schema({vol.Required(ATTR_PRESET_MODE): string}),
            (SET_SPEED, PRESET_MODE),
            "Run in one of the fan's preset_modes.",
        ),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(ATTR_PERCENTAGE, ATTR_PRESET_MODE),
    fields={
        ATTR_PERCENTAGE: FieldNotes(
            CapabilityRange(step=ATTR_PERCENTAGE_STEP), applies=has_feature(SET_SPEED)
        ),
        ATTR_PRESET_MODE: FieldNotes(
            options_from=ATTR_PRESET_MODES, applies=has_feature(PRESET_MODE)
        ),
        ATTR_DIRECTION: FieldNotes(options=DIRECTIONS),
    },
    state_outcomes=ON_OFF_OUTCOMES,
    relative_outcomes={
        "increase_speed": (ATTR_PERCENTAGE, 1),
        "decrease_speed": (ATTR_PERCENTAGE, -1),
    },
    carrying=Carrying(
        capabilities=frozenset({ATTR_PRESET_MODES, ATTR_PERCENTAGE_STEP}),
        arguments=from_arguments,
        shows=show,
    ),
    spoken={
        "turn_on": (Spoken("HassTurnOn"), Spoken("HassFanSetSpeed", {"percentage": "percentage"})),
        "turn_off": (Spoken("HassTurnOff"),),
        "set_percentage": (Spoken("HassFanSetSpeed", {"percentage": "percentage"}),),
    },
    asked=Asked(
        ("on", "off"),
        nouns=("fan", "ventilator", "extractor"),
        request=("turn_on", {}),
        feature_requests=(("set_percentage", {"percentage": 50}),),
    ),
    color="#4ea8de",
)

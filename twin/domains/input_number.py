"""input_number: a user's number helper (a slider or a box), as Home Assistant's input_number.

An InputNumber is a NumberEntity with no device behind it. Its capabilities are `min`, `max`,
`step` and `mode` (floats, and `slider` or `box`); `initial` and `editable` are attributes. Its
state is the value as Home Assistant writes a float (`str(20.0)` is `20.0`); one that is no
number (`unknown`) counts as `min`, the value Home Assistant starts such a helper at.
`set_value` coerces the value to a float and refuses one outside min..max with HA's own
vol.Invalid (invalid data, raised by the entity); `increment` and `decrement` move one step,
clamped to the range. Unlike Home Assistant, which takes `nan` (it compares false with both ends),
the twin refuses a value that is not finite, as every numeric field of the twin does.
"""

from __future__ import annotations

import math
from contextlib import suppress
from typing import Any

import voluptuous as vol

from ..errors import InvalidServiceDataError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import Numeric
from .descriptor import CapabilityRange, Carrying, Domain, FieldNotes
from .rules import EntityRules, flag, number, one_of, optional

ATTR_VALUE = "value"
ATTR_MIN = "min"
ATTR_MAX = "max"
ATTR_STEP = "step"
ATTR_MODE = "mode"
ATTR_INITIAL = "initial"
ATTR_EDITABLE = "editable"
MODES = ("box", "slider")
# Home Assistant's defaults: NumberEntity's range, and the input_number schema's step.
DEFAULT_MIN = 0.0
DEFAULT_MAX = 100.0
DEFAULT_STEP = 1.0


def _limits(entity: EntityDraft | EntityEntry) -> tuple[float, float, float]:
    """min, max and step, with Home Assistant's defaults for those the helper lacks."""
    caps = entity.capabilities
    return (
        caps.get(ATTR_MIN, DEFAULT_MIN),
        caps.get(ATTR_MAX, DEFAULT_MAX),
        caps.get(ATTR_STEP, DEFAULT_STEP),
    )


def _value(entity: EntityDraft) -> float:
    """The helper's value; `min` when its state is no number, as Home Assistant starts it."""
    try:
        value = float(entity.state)
    except ValueError:
        return _limits(entity)[0]
    return value if math.isfinite(value) else _limits(entity)[0]


def _set(entity: EntityDraft, value: float) -> None:
    """InputNumber.async_set_native_value: the value, if within min..max."""
    low, high, _ = _limits(entity)
    if value < low or value > high:
        raise InvalidServiceDataError(
            f"Invalid value for {entity.entity_id}: {value} (range {low} - {high})"
        )
    entity.state = str(value)


def set_value(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the value."""
    _set(entity, data[ATTR_VALUE])


def increment(entity: EntityDraft, data: dict[str, Any]) -> None:
    """One step up, at most `max`."""
    _, high, step = _limits(entity)
    _set(entity, min(_value(entity) + step, high))


def decrement(entity: EntityDraft, data: dict[str, Any]) -> None:
    """One step down, at least `min`."""
    low, _, step = _limits(entity)
    _set(entity, max(_value(entity) - step, low))


def show(entity: EntityDraft) -> None:
    """An inventory's value (`_attr_native_value`, maybe an int) as Home Assistant writes it."""
    # `unknown` stays: Home Assistant starts such a helper at min, which the services read it as.
    with suppress(ValueError):
        entity.state = str(float(entity.state))


def _consistent(entry: EntityEntry, state: State) -> None:
    """Home Assistant's input_number config check: max above min."""
    low, high, _ = _limits(entry)
    if low >= high:
        raise vol.Invalid(f"capabilities: max ({high}) is not greater than min ({low})")


_finite = number()
RULES = EntityRules(
    {
        ATTR_MIN: _finite,
        ATTR_MAX: _finite,
        ATTR_STEP: number(1e-9),
        ATTR_MODE: one_of(MODES),
        ATTR_INITIAL: optional(_finite),
        ATTR_EDITABLE: flag,
    },
    consistent=_consistent,
)


DOMAIN = Domain.of(
    "input_number",
    [
        Service(
            "set_value",
            set_value,
            schema({vol.Required(ATTR_VALUE): Numeric(float)}),
            description="Sets the value of an input number.",
        ),
        Service(
            "increment", increment, description="Increments the value of an input number by 1 step."
        ),
        Service(
            "decrement", decrement, description="Decrements the value of an input number by 1 step."
        ),
    ],
    rules=RULES,
    key_attributes=(ATTR_MIN, ATTR_MAX, ATTR_STEP),
    fields={
        ATTR_VALUE: FieldNotes(
            bounds=CapabilityRange(ATTR_MIN, ATTR_MAX, DEFAULT_MIN, DEFAULT_MAX, ATTR_STEP)
        )
    },
    carrying=Carrying(
        capabilities=frozenset({ATTR_MIN, ATTR_MAX, ATTR_STEP, ATTR_MODE}), shows=show
    ),
    # Assist acts on an exposed one as on a device: an agent may set it by default.
    device=True,
    color="#b56576",
)

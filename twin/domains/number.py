"""number: a device's numeric setting, such as a robot mower's cutting height (NumberEntity).

The schema, the range check and its message are Home Assistant's (number's `_async_set_value`):
`value` is coerced to a float and must lie within the entity's `min`..`max` (its capabilities,
which default to 0..100), else ServiceValidationError. Home Assistant 2026.10 has no increment or
decrement service for numbers, so neither has the twin. The state is the value as Home Assistant
writes a float (`f"{value:.15}"`: 4.0 is "4.0"); like the rest of the twin, and unlike
Home Assistant's plain Coerce(float), the twin refuses a value that is no quantity (nan, inf) as
invalid data. A number converts no units: its value is in its own unit.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import Numeric, shown
from .descriptor import CapabilityRange, Carrying, Domain, FieldNotes, renamed
from .rules import ANY_ENTITY_STATES, EntityRules, number, one_of, ordered

ATTR_VALUE = "value"
ATTR_MIN = "min"
ATTR_MAX = "max"
ATTR_STEP = "step"
ATTR_MODE = "mode"
DEFAULT_MIN_VALUE = 0.0
DEFAULT_MAX_VALUE = 100.0
DEFAULT_STEP = 1.0
MODES = ("auto", "box", "slider")  # NumberMode
DEFAULT_MODE = "auto"


def state_of(value: float) -> str:
    """A number's state as Home Assistant writes a float state (Entity._stringify_state)."""
    return f"{value:.15}"


def set_value(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the value; one outside min..max is refused in Home Assistant's words."""
    value = data[ATTR_VALUE]
    low = entity.capabilities.get(ATTR_MIN, DEFAULT_MIN_VALUE)
    high = entity.capabilities.get(ATTR_MAX, DEFAULT_MAX_VALUE)
    if value < low or value > high:
        raise ServiceValidationError(
            f"Value {value} for {entity.entity_id} is outside valid range {low} - {high}."
        )
    entity.state = state_of(value)


def _consistent(entry: EntityEntry, state: State) -> None:
    """A range in order, and a state that is a number (or unknown)."""
    ordered(entry.capabilities, ATTR_MIN, ATTR_MAX, DEFAULT_MIN_VALUE, DEFAULT_MAX_VALUE)
    if state.state not in ANY_ENTITY_STATES:
        try:
            float(state.state)
        except ValueError:
            raise vol.Invalid(f"state: expected a number, got {shown(state.state)}") from None


# What a number may hold (twin.domains.rules).
RULES = EntityRules(
    {
        ATTR_MIN: number(),
        ATTR_MAX: number(),
        ATTR_STEP: number(low=0),
        ATTR_MODE: one_of(MODES),
    },
    consistent=_consistent,
)


def from_arguments(arguments: dict[str, Any]) -> None:
    """A synthetic-home number's native limits under the names Home Assistant shows, with the
    range, mode and step NumberEntity shows for those it is not given."""
    renamed(
        arguments,
        {"native_min_value": ATTR_MIN, "native_max_value": ATTR_MAX, "native_step": ATTR_STEP},
    )
    for key, default in ((ATTR_MIN, DEFAULT_MIN_VALUE), (ATTR_MAX, DEFAULT_MAX_VALUE)):
        if arguments.get(key) is None:  # an argument of None is one not given
            arguments[key] = default
    arguments.setdefault(ATTR_MODE, DEFAULT_MODE)
    low, high = arguments[ATTR_MIN], arguments[ATTR_MAX]
    # A range that is no pair of numbers gets no step: RULES refuse it, naming the argument.
    quantities = all(
        isinstance(end, int | float) and not isinstance(end, bool) for end in (low, high)
    )
    if arguments.get(ATTR_STEP) is None and quantities:
        arguments[ATTR_STEP] = default_step(low, high)


def default_step(low: float, high: float) -> float:
    """NumberEntity._calculate_step without a native step: 1, or a tenth of it as often as the
    range needs to be wider than the step."""
    step = DEFAULT_STEP
    if span := abs(high - low):
        while span <= step:
            step /= 10.0
    return step


DOMAIN = Domain.of(
    "number",
    [
        Service(
            "set_value",
            set_value,
            schema({vol.Required(ATTR_VALUE): Numeric(float)}),
            description="Sets the value of a number.",
        ),
    ],
    rules=RULES,
    key_attributes=("unit_of_measurement",),
    fields={
        ATTR_VALUE: FieldNotes(
            bounds=CapabilityRange(
                ATTR_MIN, ATTR_MAX, DEFAULT_MIN_VALUE, DEFAULT_MAX_VALUE, ATTR_STEP
            )
        )
    },
    carrying=Carrying(
        capabilities=frozenset({ATTR_MIN, ATTR_MAX, ATTR_STEP, ATTR_MODE}),
        enums=frozenset({ATTR_MODE}),
        arguments=from_arguments,
    ),
    # Assist acts on an exposed one as on a device: an agent may set it by default.
    device=True,
    color="#9c6644",
)

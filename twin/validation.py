"""Validators that mirror Home Assistant's `config_validation` helpers, so that the twin accepts,
coerces and rejects service data exactly as Home Assistant does."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Number
from typing import Any

import voluptuous as vol

from .errors import InvalidServiceDataError

# Target keys of an entity service call (Home Assistant's ENTITY_SERVICE_FIELDS).
ATTR_ENTITY_ID = "entity_id"
ATTR_DEVICE_ID = "device_id"
ATTR_AREA_ID = "area_id"
ATTR_FLOOR_ID = "floor_id"
ATTR_LABEL_ID = "label_id"
TARGET_KEYS = (ATTR_ENTITY_ID, ATTR_DEVICE_ID, ATTR_AREA_ID, ATTR_FLOOR_ID, ATTR_LABEL_ID)
ENTITY_MATCH_ALL = "all"
ENTITY_MATCH_NONE = "none"

_OBJECT_ID = r"(?!_)[\da-z_]+(?<!_)"
_DOMAIN = r"(?!.+__)" + _OBJECT_ID
VALID_ENTITY_ID = re.compile(r"^" + _DOMAIN + r"\." + _OBJECT_ID + r"$")

_SHOWN = 40  # characters of a bad value an error message repeats, by default


@dataclass(frozen=True, slots=True)
class Numeric:
    """Every numeric service field's validator: `vol.Coerce(kind)`, then `vol.Range` (or
    `vol.Clamp` with `clamp`) as Home Assistant's schemas chain them, but refusing what cannot be a
    quantity (inf, nan, numbers too large for a float) as invalid data instead of letting them
    escape as OverflowError or slip through range checks (NaN compares false with every bound).

    Errors say what Home Assistant's do ("expected int", "value must be at most 100"), or, with
    `name`, "<name> must be <low>-<high>, got <value>". The device manual reads kind and bounds.
    """

    kind: type[int] | type[float]
    low: float | None = None
    high: float | None = None
    clamp: bool = False
    name: str | None = None

    def __call__(self, value: Any) -> Any:
        """The value as a finite `kind` within the bounds, or vol.Invalid."""
        try:
            coerced = self.kind(value)
            finite = math.isfinite(coerced)
        except (TypeError, ValueError, OverflowError):
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise vol.CoerceInvalid(f"expected {self.kind.__name__}") from None
            finite = False
        if not finite:
            raise vol.Invalid(f"{self.name or 'value'} must be a finite number, got {shown(value)}")
        low, high = self.low, self.high
        if self.clamp:
            if low is not None:
                coerced = max(coerced, low)
            return min(coerced, high) if high is not None else coerced
        if (low is not None and coerced < low) or (high is not None and coerced > high):
            raise vol.RangeInvalid(self._out_of_range(coerced))
        return coerced

    def _out_of_range(self, value: float) -> str:
        if self.name is not None:
            allowed = f"{self.low}-{self.high}" if self.high is not None else f"at least {self.low}"
            return f"{self.name} must be {allowed}, got {shown(value)}"
        if self.low is not None and value < self.low:
            return f"value must be at least {self.low}"
        return f"value must be at most {self.high}"


def validated(schema: Callable[[Any], Any], data: Any, domain: str, service: str) -> dict[str, Any]:
    """`data` as `schema` gives it back; InvalidServiceDataError naming the action if it fails."""
    try:
        result: dict[str, Any] = schema(data)
    except vol.Invalid as err:
        raise InvalidServiceDataError(f"Invalid data for {domain}.{service}: {err}") from None
    return result


def shown(value: Any, limit: int = _SHOWN) -> str:
    """A bad value as an error message repeats it: its repr, cut to `limit` characters."""
    try:
        text = repr(value)
    except ValueError:  # an int past Python's 4,300-digit limit for str()
        return "a value too large to show"
    return text if len(text) <= limit else text[: limit - 3] + "..."


small_float = Numeric(float, 0, 1)


def valid_entity_id(entity_id: str) -> bool:
    """Whether `entity_id` has Home Assistant's `<domain>.<object_id>` slug format."""
    return VALID_ENTITY_ID.match(entity_id) is not None


def boolean(value: Any) -> bool:
    """Validate and coerce a boolean value."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        value = value.lower().strip()
        if value in ("1", "true", "yes", "on", "enable"):
            return True
        if value in ("0", "false", "no", "off", "disable"):
            return False
    elif isinstance(value, Number):
        return bool(value)
    raise vol.Invalid(f"invalid boolean value {value}")


def string(value: Any) -> str:
    """Coerce a value to a string, except None, lists and dicts."""
    if value is None:
        raise vol.Invalid("string value is None")
    if isinstance(value, str):
        return value
    if isinstance(value, list | dict):
        raise vol.Invalid("value should be a string")
    try:
        return str(value)
    except ValueError:  # an int past Python's digit limit for str()
        raise vol.Invalid(f"value should be a string, got {shown(value)}") from None


def entity_id(value: Any) -> str:
    """Validate an entity id (lower-cased, as Home Assistant does)."""
    str_value = string(value).lower()
    if valid_entity_id(str_value):
        return str_value
    raise vol.Invalid(f"Entity ID {value} is an invalid entity ID")


def entity_ids(value: str | list[Any]) -> list[str]:
    """Validate a comma-separated string or a list of entity ids."""
    if value is None:
        raise vol.Invalid("Entity IDs cannot be None")
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    elif not isinstance(value, list | tuple):
        # Home Assistant's cv.entity_ids fails here with a TypeError; the twin says what is wrong.
        raise vol.Invalid(f"Entity IDs must be a string or a list, got {value!r}")
    return [entity_id(part) for part in value]


def ensure_list(value: Any) -> list[Any]:
    """Wrap a value in a list if it is not one."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


comp_entity_ids = vol.Any(
    vol.All(vol.Lower, vol.Any(ENTITY_MATCH_ALL, ENTITY_MATCH_NONE)), entity_ids
)

_ids = vol.Any(ENTITY_MATCH_NONE, vol.All(ensure_list, [str]))
TARGET_SCHEMA = vol.Schema(
    {
        vol.Optional(ATTR_ENTITY_ID): comp_entity_ids,
        vol.Optional(ATTR_DEVICE_ID): _ids,
        vol.Optional(ATTR_AREA_ID): _ids,
        vol.Optional(ATTR_FLOOR_ID): _ids,
        vol.Optional(ATTR_LABEL_ID): _ids,
    }
)

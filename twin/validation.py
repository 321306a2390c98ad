"""Validators that mirror Home Assistant's `config_validation` helpers, so that the twin accepts,
coerces and rejects service data exactly as Home Assistant does."""

from __future__ import annotations

import re
from numbers import Number
from typing import Any

import voluptuous as vol

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

small_float = vol.All(vol.Coerce(float), vol.Range(min=0, max=1))


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
    return str(value)


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

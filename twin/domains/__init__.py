"""One module per Home Assistant entity domain: its services and what they do to an entity."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

import voluptuous as vol

from ..errors import HomeDefinitionError
from ..registry import EntityEntry
from ..service import Domain
from ..state import State
from ..validation import shown
from . import (
    climate,
    cover,
    fan,
    humidifier,
    light,
    lock,
    media_player,
    rules,
    sensor,
    switch,
    vacuum,
    valve,
    water_heater,
)

DOMAINS: dict[str, Domain] = {
    domain.name: domain
    for domain in (
        light.DOMAIN,
        switch.DOMAIN,
        fan.DOMAIN,
        climate.DOMAIN,
        cover.DOMAIN,
        media_player.DOMAIN,
        humidifier.DOMAIN,
        lock.DOMAIN,
        vacuum.DOMAIN,
        water_heater.DOMAIN,
        valve.DOMAIN,
        sensor.SENSOR,
        sensor.BINARY_SENSOR,
    )
}
# What each domain's entities may hold (twin.domains.rules); a domain without rules reads nothing
# more than the entity-level keys.
RULES: dict[str, rules.EntityRules] = {
    "light": light.RULES,
    "fan": fan.RULES,
    "climate": climate.RULES,
    "cover": cover.RULES,
    "media_player": media_player.RULES,
    "humidifier": humidifier.RULES,
    "lock": lock.RULES,
    "vacuum": vacuum.RULES,
    "water_heater": water_heater.RULES,
    "valve": valve.RULES,
    "sensor": sensor.SENSOR_RULES,
}
# Home Assistant's longest state (MAX_LENGTH_STATE_STATE): a longer one is an InvalidStateError.
MAX_STATE_LENGTH = 255
# What the values of a state (and of an entity's capabilities) are made of, with lists and tuples.
_JSON_SCALARS = (str, int, float, bool, type(None))
# The state attributes Home Assistant's entity layer adds to every entity.
_ENTITY_VALUES = {
    "friendly_name": rules.text,
    "supported_features": rules.index,
    "device_class": rules.optional(rules.text),
    "unit_of_measurement": rules.optional(rules.text),
}


@cache
def domain_of(name: str) -> Domain:
    """The domain's behaviour; one the twin does not simulate (`person`, `sun`, a mirrored
    home's `automation`...) offers no services: its entities are read-only, as sensors are."""
    return DOMAINS.get(name) or Domain.of(name, [])


def feature_mask(name: str) -> int | None:
    """Every supported_features bit an entity of the domain may have: the twin's and Home
    Assistant's others; None for a domain the twin does not simulate (any bits)."""
    domain = DOMAINS.get(name)
    if domain is None:
        return None
    bits = RULES[name].unmodelled_features if name in RULES else 0
    for bit in domain.features.values():
        bits |= bit
    return bits


def check_entity(entry: EntityEntry, state: State) -> None:
    """Refuse an entity that holds what its domain cannot use: a registry field, capability,
    state attribute or memory value of the wrong type or range, feature bits its domain lacks,
    or keys that contradict each other. HomeDefinitionError names the key."""
    try:
        _check_entity(entry, state)
    except vol.Invalid as err:
        raise HomeDefinitionError(err.msg) from None


def _check_entity(entry: EntityEntry, state: State) -> None:
    for key, value, validator in (
        ("name", entry.name, rules.text),
        ("device_class", entry.device_class, rules.optional(rules.text)),
        ("unit_of_measurement", entry.unit_of_measurement, rules.optional(rules.text)),
        ("entity_category", entry.entity_category, rules.optional(rules.text)),
        ("supported_features", entry.supported_features, rules.index),
        ("state", state.state, rules.text),
    ):
        _check_value(key, validator, value)
    if len(state.state) > MAX_STATE_LENGTH:
        raise vol.Invalid(f"state: at most {MAX_STATE_LENGTH} characters, got {len(state.state)}")
    mask = feature_mask(entry.domain)
    if mask is not None and entry.supported_features & ~mask:
        known = ", ".join(f"{name} {bit}" for name, bit in DOMAINS[entry.domain].features.items())
        raise vol.Invalid(
            f"supported_features: {shown(entry.supported_features)} has bits "
            f"{shown(entry.supported_features & ~mask)} that no {entry.domain} has; "
            f"its features: {known or 'none'}"
        )
    domain_rules = RULES.get(entry.domain, rules.EntityRules())
    values = {**_ENTITY_VALUES, **domain_rules.values}
    for place, held in (
        ("capabilities", entry.capabilities),
        ("attributes", state.attributes),
        ("hidden", state.hidden),
    ):
        for key, value in held.items():
            if not isinstance(key, str):
                raise vol.Invalid(f"{place}: keys are names (strings), got {shown(key)}")
            _check_json(f"{place}.{key}", value)
            if (check := values.get(key)) is not None:
                _check_value(f"{place}.{key}", check, value)
    if domain_rules.consistent is not None:
        domain_rules.consistent(entry, state)


def _check_json(where: str, value: object) -> None:
    """Refuse what a Home Assistant state cannot hold: its values are JSON's (and the twin's
    tuples), so a YAML date or set is no attribute, nor a tuple a key."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Mapping):
            odd = next((key for key in item if not isinstance(key, _JSON_SCALARS)), None)
            if odd is not None:
                _not_json(where, odd)
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif not isinstance(item, _JSON_SCALARS):
            _not_json(where, item)


def _not_json(where: str, item: object) -> None:
    raise vol.Invalid(
        f"{where}: {shown(item)} is no value of a Home Assistant state; use strings (a time as "
        "ISO 8601 text), numbers, booleans, null, lists and mappings"
    )


def _check_value(where: str, validator: rules.Validator, value: object) -> None:
    try:
        validator(value)
    except vol.Invalid as err:
        raise vol.Invalid(f"{where}: {err.msg}") from None

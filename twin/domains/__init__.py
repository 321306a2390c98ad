"""The registry of entity domains: every module of this package that declares a `DOMAIN`.

Each domain is declared once, in its own module (twin.domains.descriptor says what a declaration
holds), and its device types in the catalog's YAML (twin/device_types/). Adding a domain is adding
its module and YAML: the registry finds the module, and the tables below, the device manual, the
auditor, the tools, the home files and the agent's goals read the domain from here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

import voluptuous as vol

from ..errors import HomeDefinitionError
from ..registry import EntityEntry
from ..state import State
from ..validation import shown
from . import rules
from .descriptor import Domain


def _discover() -> dict[str, Domain]:
    """The `DOMAIN` of every module of this package that has one, by name, sorted."""
    found: dict[str, Domain] = {}
    for module in pkgutil.iter_modules(__path__):
        domain = getattr(importlib.import_module(f"{__name__}.{module.name}"), "DOMAIN", None)
        if domain is None:
            continue
        if not isinstance(domain, Domain) or domain.name != module.name:
            raise TypeError(
                f"{__name__}.{module.name}.DOMAIN must be the Domain named {module.name!r}: a "
                "domain's module is named after it"
            )
        found[domain.name] = domain
    return dict(sorted(found.items()))


DOMAINS: dict[str, Domain] = _discover()
# What each domain's entities may hold (twin.domains.rules).
RULES: dict[str, rules.EntityRules] = {name: domain.rules for name, domain in DOMAINS.items()}
# The domains whose entities are devices, which an agent may act on by default (twin.auditor).
DEVICE_DOMAINS = frozenset(name for name, domain in DOMAINS.items() if domain.device)
# The state attributes list_entities shows beside the state, by domain (when set).
KEY_ATTRIBUTES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {name: domain.key_attributes for name, domain in DOMAINS.items() if domain.key_attributes}
)
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
    return DOMAINS.get(name) or Domain(name, {})


def responder(name: str) -> tuple[str, str] | None:
    """The domain's service that answers with what its entities hold beyond their state, and the
    key of the answer that holds it (todo.get_items and its `items`); None for none."""
    domain = DOMAINS.get(name)
    if domain is None or domain.contents is None:
        return None
    service = next((s.name for s in domain.services.values() if s.response_only), None)
    return None if service is None else (service, domain.contents)


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
    rules.check_state(domain_rules, state.state)
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

"""One service call through Home Assistant and on an independent twin: same outcome, same states."""

from __future__ import annotations

import json
from typing import Any

import probatio
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import (
    HomeAssistantError,
    ServiceNotFound,
    ServiceNotSupported,
    ServiceValidationError,
)
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.json import json_encoder_default
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import CONF_HOME
from twin.catalog import load_catalog
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import load_home

# Home Assistant's errors, most specific first, as the twin's error codes.
HA_ERROR_CODES: tuple[tuple[type[Exception], str], ...] = (
    (probatio.Invalid, "invalid_data"),
    (ServiceNotFound, "service_not_found"),
    (ServiceNotSupported, "service_not_supported"),
    (ServiceValidationError, "validation_error"),
    (HomeAssistantError, "error"),
)


def independent_twin(entry: MockConfigEntry) -> Home:
    """A second twin of the entry's home, which Home Assistant never touches."""
    return load_home(entry.data[CONF_HOME])


def ha_target(entry: MockConfigEntry, target: dict[str, Any]) -> dict[str, Any]:
    """A target in the twin's ids, in Home Assistant's (its floors and areas have their own)."""
    ids = entry.runtime_data.registry_ids
    translated = dict(target)
    for key, kind in (("floor_id", "floors"), ("area_id", "areas")):
        if key in target:
            translated[key] = ids[kind][target[key]]
    return translated


def ha_error_code(err: Exception) -> str:
    """The twin error code a Home Assistant error corresponds to."""
    return next(code for kind, code in HA_ERROR_CODES if isinstance(err, kind))


def as_json(state: str, attributes: Any) -> str:
    """A state as Home Assistant's API shows it: types count (50 is not 50.0), order does not;
    a datetime is its ISO text, as in the API."""
    shown = {"state": state, "attributes": dict(attributes)}
    return json.dumps(shown, sort_keys=True, default=json_encoder_default)


async def call_both(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    independent: Home,
    domain: str,
    service: str,
    target: dict[str, Any],
    data: dict[str, Any],
) -> str | None:
    """Call a service on `target` (in the twin's ids) through Home Assistant and on `independent`.

    Returns the error code (None on success) after checking that both agree and that every entity
    of the domain is the same in Home Assistant, in the entry's twin and in `independent`.
    """
    try:
        # A copy: Home Assistant merges the target into the data it is given.
        await hass.services.async_call(
            domain, service, dict(data), blocking=True, target=ha_target(entry, target)
        )
        through_ha = None
    except (HomeAssistantError, probatio.Invalid) as err:
        through_ha = ha_error_code(err)
    try:
        independent.call_service(domain, service, data, target)
        direct = None
    except TwinError as err:
        direct = err.code
    assert through_ha == direct, f"{domain}.{service} {target} {data}"
    await hass.async_block_till_done()
    assert_same(hass, entry, independent, domain)
    return direct


def assert_same(
    hass: HomeAssistant, entry: MockConfigEntry, independent: Home, domain: str
) -> None:
    """Every entity of `domain`: Home Assistant's state == its twin's == the independent twin's."""
    twin: Home = entry.runtime_data.home
    for entity_id in (e for e in twin.entities if e.startswith(f"{domain}.")):
        ha_state = hass.states.get(entity_id)
        assert ha_state is not None, entity_id
        mine, other = twin.states[entity_id], independent.states[entity_id]
        shown = as_json(ha_state.state, ha_state.attributes)
        assert shown == as_json(mine.state, mine.attributes), entity_id
        assert shown == as_json(other.state, other.attributes), entity_id
        assert mine.hidden == other.hidden, entity_id


def catalog_types(domain: str) -> list[str]:
    """The catalog's device types that carry an entity of `domain`, sorted."""
    return sorted(
        type_id
        for type_id, device_type in load_catalog().items()
        if any(spec.domain == domain for spec in device_type.entities)
    )


def shown(hass: HomeAssistant, entity_id: str) -> dict[str, Any]:
    """The state and attributes Home Assistant shows."""
    state = hass.states.get(entity_id)
    assert state is not None
    return {"state": state.state, **state.attributes}


def assert_registered_as_the_twin(
    hass: HomeAssistant, entry: MockConfigEntry, domain: str, entity_ids: list[str]
) -> None:
    """The twin's `domain` entities are exactly `entity_ids`, each registered under its twin id
    with the twin's device class, and showing the twin's state and attributes."""
    entities = er.async_get(hass)
    twin = entry.runtime_data.home
    assert {e for e in twin.entities if e.startswith(f"{domain}.")} == set(entity_ids)
    for entity_id in entity_ids:
        registered = entities.async_get(entity_id)
        assert registered is not None, entity_id
        assert registered.unique_id == f"{entry.entry_id}_{entity_id}"
        assert registered.original_device_class == twin.entities[entity_id].device_class
        state, mine = hass.states.get(entity_id), twin.states[entity_id]
        assert as_json(state.state, state.attributes) == as_json(mine.state, mine.attributes)

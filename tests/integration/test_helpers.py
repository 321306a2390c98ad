"""Helpers and scripts: a home's input_boolean, input_number, input_select and script entities
live in Home Assistant's own components, and behave as Home Assistant's own helpers set up from
YAML do, call for call."""

from __future__ import annotations

from contextlib import suppress
from datetime import UTC, datetime
from typing import Any
from unittest.mock import patch

import probatio
import pytest
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.entity_component import DATA_INSTANCES
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_capture_events

from custom_components.homeflow.helper import HomeFlowHelper
from tests.twin.helpers import BOOLEAN, NUMBER, OPTIONS, SCRIPT, SELECT
from twin.errors import TwinError

from .parity import as_json, assert_registered_as_the_twin, ha_error_code, independent_twin

# Home Assistant's own helpers, from YAML, configured as the twin's are (tests/twin/helpers.py).
YAML = {
    "input_boolean": {"real": {"name": "Guest mode"}},
    "input_number": {
        "real": {
            "name": "Target humidity",
            "min": 30,
            "max": 60,
            "step": 2.5,
            "initial": 45,
            "unit_of_measurement": "%",
        }
    },
    "input_select": {"real": {"name": "House mode", "options": OPTIONS}},
    "script": {"real": {"alias": "Movie night", "sequence": [{"event": "movie_night"}]}},
}
HOMEFLOW = {
    "input_boolean": BOOLEAN,
    "input_number": NUMBER,
    "input_select": SELECT,
    "script": SCRIPT,
}
# Calls of each domain, valid and not, in order.
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("input_boolean", "turn_on", {}),
    ("input_boolean", "toggle", {}),
    ("input_boolean", "toggle", {}),
    ("input_boolean", "turn_off", {}),
    ("input_boolean", "turn_on", {"brightness": 3}),
    ("input_number", "set_value", {"value": 50}),
    ("input_number", "set_value", {"value": "32.5"}),
    ("input_number", "set_value", {"value": 61}),
    ("input_number", "set_value", {"value": 29.9}),
    ("input_number", "set_value", {"value": "high"}),
    ("input_number", "set_value", {}),
    ("input_number", "decrement", {}),
    ("input_number", "decrement", {}),
    ("input_number", "increment", {}),
    ("input_number", "set_value", {"value": 59}),
    ("input_number", "increment", {}),
    ("input_number", "increment", {}),
    ("input_select", "select_option", {"option": "Night"}),
    ("input_select", "select_option", {"option": "Party"}),
    ("input_select", "select_option", {"option": 3}),
    ("input_select", "select_next", {}),
    ("input_select", "select_next", {"cycle": False}),
    ("input_select", "select_previous", {}),
    ("input_select", "select_previous", {"cycle": False}),
    ("input_select", "select_last", {}),
    ("input_select", "select_next", {"cycle": "yes"}),
    ("input_select", "select_first", {}),
    ("input_select", "set_options", {"options": ["Away", "Away"]}),
    ("input_select", "set_options", {"options": []}),
    ("input_select", "set_options", {"options": ["Away", "Vacation"]}),
    ("input_select", "set_options", {"options": "Solo"}),
    ("input_select", "set_options", {"options": ["Solo", "Home"]}),
    ("script", "turn_on", {}),
    ("script", "turn_on", {"variables": {"volume": 3}}),
    ("script", "turn_on", {"variables": "loud"}),
    ("script", "toggle", {}),
    ("script", "turn_off", {}),
]


def comparable(hass: HomeAssistant, entity_id: str) -> str:
    """A state as Home Assistant's API gives it, without its name and entity id, and with only
    whether a script has run (Home Assistant's clock, or the twin's)."""
    state = hass.states.get(entity_id)
    assert state is not None, entity_id
    attributes = dict(state.attributes)
    del attributes["friendly_name"]
    if "last_triggered" in attributes:
        attributes["last_triggered"] = attributes["last_triggered"] is not None
    return as_json(state.state, attributes)


async def outcome(
    hass: HomeAssistant, domain: str, service: str, data: dict[str, Any], entity_id: str
) -> str:
    """`done`, or the call's error: its twin code and message, the entity named `<entity>`."""
    try:
        await hass.services.async_call(
            domain, service, {**data, "entity_id": entity_id}, blocking=True
        )
    except (HomeAssistantError, probatio.Invalid) as err:
        return f"{ha_error_code(err)}: {str(err).replace(entity_id, '<entity>')}"
    await hass.async_block_till_done()
    return "done"


@pytest.fixture
async def both(hass: HomeAssistant, home_entry: MockConfigEntry) -> MockConfigEntry:
    """Home Assistant's own helpers from YAML, then the home's, in the same components."""
    for domain, config in YAML.items():
        assert await async_setup_component(hass, domain, {domain: config})
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    return home_entry


async def test_each_call_does_what_home_assistants_own_helper_does(
    hass: HomeAssistant, both: MockConfigEntry
) -> None:
    """The same calls on Home Assistant's helper and on the home's: the same outcome and state,
    which is the state an independent twin reaches with the same call."""
    independent = independent_twin(both)
    for domain, service, data in CALLS:
        real, mine = f"{domain}.real", HOMEFLOW[domain]
        expected = await outcome(hass, domain, service, data, real)
        assert await outcome(hass, domain, service, data, mine) == expected, (service, data)
        assert comparable(hass, mine) == comparable(hass, real), (service, data)
        with suppress(TwinError):
            independent.call_service(domain, service, data, {"entity_id": mine})
        twin, ha_state = independent.states[mine], hass.states.get(mine)
        assert ha_state is not None
        assert as_json(ha_state.state, ha_state.attributes) == as_json(twin.state, twin.attributes)


async def test_the_helpers_are_the_twins_in_their_components(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    entities = er.async_get(hass)
    for domain, entity_id in HOMEFLOW.items():
        assert_registered_as_the_twin(hass, loaded_home, domain, [entity_id])
        assert isinstance(hass.data[DATA_INSTANCES][domain].get_entity(entity_id), HomeFlowHelper)
        registered = entities.async_get(entity_id)
        assert registered is not None
        assert (registered.platform, registered.config_entry_id) == (
            "homeflow",
            loaded_home.entry_id,
        )
        assert registered.area_id == "hallway"
    state = hass.states.get(NUMBER)
    assert state is not None
    assert (state.state, state.attributes["step"], state.attributes["mode"]) == (
        "45.0",
        2.5,
        "slider",
    )
    assert hass.states.get(SCRIPT).attributes["last_triggered"] is None


async def test_a_script_runs_in_the_twin(hass: HomeAssistant, loaded_home: MockConfigEntry) -> None:
    assert await async_setup_component(hass, "homeassistant", {})
    started = async_capture_events(hass, "script_started")
    twin = loaded_home.runtime_data.home
    twin.now += 3600
    response = await hass.services.async_call(
        "script", "movie_night", {"volume": 3}, blocking=True, return_response=True
    )
    assert response == {}
    ran = twin.states[SCRIPT].attributes["last_triggered"]
    assert ran == datetime.fromtimestamp(twin.now, UTC).isoformat()
    state = hass.states.get(SCRIPT)
    assert state is not None
    assert state.attributes["last_triggered"] == datetime.fromtimestamp(twin.now, UTC)
    assert (state.state, state.attributes["current"]) == ("off", 0)
    twin.now += 60
    await hass.services.async_call("homeassistant", "turn_on", {"entity_id": SCRIPT}, blocking=True)
    await hass.async_block_till_done()
    assert hass.states.get(SCRIPT).attributes["last_triggered"] == datetime.fromtimestamp(
        twin.now, UTC
    )
    assert [event.data for event in started] == [
        {"name": "Movie night", "entity_id": SCRIPT},
        {"name": "Movie night", "entity_id": SCRIPT},
    ]


async def test_they_outlive_a_reload_of_their_components(
    hass: HomeAssistant, both: MockConfigEntry
) -> None:
    """Reloading a helper domain, or the scripts (as saving a script in the UI does), keeps the
    home's: the script component drops every script its YAML lacks, and the home's comes back."""
    config = {domain: {} for domain in YAML}
    with patch("homeassistant.config.load_yaml_config_file", return_value=config):
        for domain in YAML:
            await hass.services.async_call(domain, "reload", blocking=True)
            await hass.async_block_till_done()
    for domain, entity_id in HOMEFLOW.items():
        component = hass.data[DATA_INSTANCES][domain]
        assert component.get_entity(f"{domain}.real") is None, domain  # gone from the YAML
        assert isinstance(component.get_entity(entity_id), HomeFlowHelper)
        assert hass.states.get(entity_id) is not None
    await hass.services.async_call("script", "movie_night", blocking=True)
    assert hass.states.get(SCRIPT).attributes["last_triggered"] is not None
    er.async_get(hass).async_update_entity(SCRIPT, disabled_by=er.RegistryEntryDisabler.USER)
    await hass.async_block_till_done()
    assert hass.states.get(SCRIPT) is None  # a disabled one stays away


async def test_unloading_takes_them_away_and_removing_leaves_nothing(
    hass: HomeAssistant, loaded_home: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    entities = er.async_get(hass)
    assert await hass.config_entries.async_unload(loaded_home.entry_id)
    await hass.async_block_till_done()
    assert loaded_home.state is ConfigEntryState.NOT_LOADED
    for domain, entity_id in HOMEFLOW.items():
        assert hass.data[DATA_INSTANCES][domain].get_entity(entity_id) is None
        assert entities.async_get(entity_id) is not None  # kept for the next load, as any entity's
    assert not hass.services.has_service("script", "movie_night")
    assert await hass.config_entries.async_setup(loaded_home.entry_id)  # and back
    await hass.async_block_till_done()
    assert hass.states.get(BOOLEAN).state == "off"
    assert hass.services.has_service("script", "movie_night")
    assert await hass.config_entries.async_remove(loaded_home.entry_id)
    await hass.async_block_till_done()
    for domain, entity_id in HOMEFLOW.items():
        assert entities.async_get(entity_id) is None
        assert hass.states.get(entity_id) is None
        assert domain not in hass_storage  # no helper made in the helpers' storage
    assert not hass.services.has_service("script", "movie_night")

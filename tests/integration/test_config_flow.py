"""The config and options flows, and set-up and unload of the entries they create."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import DOMAIN
from twin.homefile import dump_home

from .conftest import every_device_home


async def _start(hass: HomeAssistant, choice: str) -> dict[str, Any]:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.MENU
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": choice}
    )
    assert result["type"] is FlowResultType.FORM
    return result


async def _generate(hass: HomeAssistant, **fields: Any) -> dict[str, Any]:
    result = await _start(hass, "generate")
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {"name": "Beach House", "seed": 3, **fields}
    )


async def test_generate_set_up_and_unload(hass: HomeAssistant) -> None:
    """A generated home sets up with its areas and entities, then unloads cleanly."""
    result = await _generate(hass, home_type="studio", city="Oslo")
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Beach House"
    assert result["data"] == {
        "source": "generate",
        "seed": 3,
        "home_type": "studio",
        "city": "Oslo",
        "seed_time": False,
    }
    entry = result["result"]
    assert entry.unique_id == "beach_house"
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert hass.states.async_entity_ids("switch") or hass.states.async_entity_ids("sensor")

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.NOT_LOADED


async def test_import_a_home_file(hass: HomeAssistant) -> None:
    result = await _start(hass, "import_home")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"name": "Copy", "home": dump_home(every_device_home())}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert result["result"].state is ConfigEntryState.LOADED


async def test_a_broken_home_file_is_refused_with_the_reason(hass: HomeAssistant) -> None:
    result = await _start(hass, "import_home")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {"name": "Copy", "home": "devices: [{id: x, name: Toast, type: toaster}]"},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_home"}
    assert "toaster" in result["description_placeholders"]["error"]
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_same_home_twice_aborts(hass: HomeAssistant) -> None:
    await _generate(hass)
    result = await _generate(hass, name="beach house ")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


@pytest.mark.parametrize("name", [" !! ", ""])
async def test_a_name_without_letters_is_refused(hass: HomeAssistant, name: str) -> None:
    result = await _generate(hass, name=name)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"name": "invalid_name"}
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_options_set_the_simulation(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    result = await hass.config_entries.options.async_init(loaded_home.entry_id)
    assert result["type"] is FlowResultType.FORM
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"physics": True, "speed": 60, "tick": 5}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert loaded_home.options == {"physics": True, "speed": 60.0, "tick": 5}
    assert loaded_home.state is ConfigEntryState.LOADED


async def test_options_refuse_more_than_a_day_per_tick(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Each tick's physics runs on the event loop: speed x tick is held to a simulated day."""
    before = dict(loaded_home.options)
    result = await hass.config_entries.options.async_init(loaded_home.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"physics": True, "speed": 3600, "tick": 25}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "too_fast"}
    assert loaded_home.options == before
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"physics": True, "speed": 3600, "tick": 24}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()  # the reload the options scheduled, before teardown
    assert loaded_home.state is ConfigEntryState.LOADED

"""The config flow, and set-up and unload of the entry it creates, in a real Home Assistant."""

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.homeflow.const import DOMAIN


async def _create_home(hass: HomeAssistant, name: str) -> dict:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    return await hass.config_entries.flow.async_configure(result["flow_id"], {CONF_NAME: name})


async def test_create_set_up_and_unload(hass: HomeAssistant) -> None:
    """A home made through the flow sets up, then unloads cleanly."""
    result = await _create_home(hass, "Beach House")
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Beach House"
    assert result["data"] == {CONF_NAME: "Beach House"}

    entry = result["result"]
    assert entry.unique_id == "beach_house"
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.NOT_LOADED


async def test_same_home_twice_aborts(hass: HomeAssistant) -> None:
    await _create_home(hass, "Beach House")
    result = await _create_home(hass, "beach house ")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


async def test_blank_name_is_refused(hass: HomeAssistant) -> None:
    result = await _create_home(hass, " !! ")
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_name"}
    assert hass.config_entries.async_entries(DOMAIN) == []

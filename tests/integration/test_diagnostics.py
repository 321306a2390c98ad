"""Diagnostics: how a home was made, its size, its clock, its goal and its registry ids."""

from __future__ import annotations

from collections import Counter

from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from syrupy.assertion import SnapshotAssertion
from syrupy.filters import props

from custom_components.homeflow.const import DOMAIN


async def test_an_imported_home_with_a_goal(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loaded_home: MockConfigEntry,
    snapshot: SnapshotAssertion,
) -> None:
    await hass.services.async_call(
        DOMAIN,
        "set_goal",
        {
            "config_entry_id": loaded_home.entry_id,
            "conditions": [
                'state("switch.smart_plug") == "on"',
                'attr("switch.smart_plug", "friendly_name") > 3',  # fails when evaluated
            ],
        },
        blocking=True,
    )
    await hass.services.async_call(
        "switch", "turn_on", {"entity_id": "switch.wall_switch"}, blocking=True
    )
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, loaded_home)
    # The imported text is summarised by its length, which follows the twin's home file format.
    assert diagnostics["data"]["home_length"] == len(loaded_home.data["home"])
    assert "home" not in diagnostics["data"]
    assert diagnostics == snapshot(exclude=props("home_length"))


async def test_a_generated_home_without_a_goal(
    hass: HomeAssistant, hass_client: ClientSessionGenerator
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Beach House",
        data={"source": "generate", "seed": 3, "home_type": "studio", "city": "Oslo"},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    home = entry.runtime_data.home

    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, entry)
    assert diagnostics["data"] == dict(entry.data)
    assert diagnostics["options"] == {}
    assert diagnostics["counts"] == {
        "floors": len(home.floors),
        "areas": len(home.areas),
        "devices": len(home.devices),
        "entities": dict(Counter(entity_id.split(".")[0] for entity_id in home.entities)),
    }
    assert list(diagnostics["counts"]["entities"]) == sorted(diagnostics["counts"]["entities"])
    assert diagnostics["goal"] is None
    assert diagnostics["registry_ids"] == entry.runtime_data.registry_ids
    assert set(diagnostics["registry_ids"]["areas"]) == set(home.areas)

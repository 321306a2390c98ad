"""A home survives a reload and a restart: every state, its clock, its goal and its registry ids."""

from __future__ import annotations

from copy import deepcopy
from datetime import timedelta
from typing import Any
from unittest.mock import patch

import pytest
from freezegun.api import FrozenDateTimeFactory
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import EVENT_HOMEASSISTANT_FINAL_WRITE
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import floor_registry as fr
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from custom_components.homeflow.const import DEFAULT_TICK, DOMAIN
from custom_components.homeflow.virtual_home import SAVE_DELAY, STORAGE_VERSION, build_home
from twin.homefile import dump_home, load_home

PLUG = "switch.smart_plug"
WALL = "switch.wall_switch"


def _key(entry: MockConfigEntry) -> str:
    return f"{DOMAIN}.{entry.entry_id}"


def _ha_states(
    hass: HomeAssistant, entry: MockConfigEntry
) -> dict[str, tuple[str, dict[str, Any]]]:
    """The Home Assistant state and attributes of every entity of the entry."""
    entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
    return {
        e.entity_id: (state.state, dict(state.attributes))
        for e in entities
        if (state := hass.states.get(e.entity_id)) is not None
    }


def _registries(hass: HomeAssistant) -> tuple[list[str], list[str], int]:
    """The ids of every floor and area, and how many devices there are."""
    return (
        sorted(f.floor_id for f in fr.async_get(hass).async_list_floors()),
        sorted(a.id for a in ar.async_get(hass).async_list_areas()),
        len(dr.async_get(hass).devices),
    )


async def _change_everything(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Switch things, move the clock and set a goal, all through actions."""
    home = {"config_entry_id": entry.entry_id}
    await hass.services.async_call(
        DOMAIN, "set_goal", {**home, "conditions": [f'state("{PLUG}") == "on"']}, blocking=True
    )
    await hass.services.async_call("switch", "turn_on", {"entity_id": PLUG}, blocking=True)
    await hass.services.async_call("switch", "turn_on", {"entity_id": WALL}, blocking=True)
    await hass.services.async_call(
        DOMAIN, "advance_time", {**home, "seconds": 5 * 3600}, blocking=True
    )


async def _verify(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    return await hass.services.async_call(
        DOMAIN,
        "verify",
        {"config_entry_id": entry.entry_id},
        blocking=True,
        return_response=True,
    )


async def _let_the_save_happen(hass: HomeAssistant) -> None:
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=SAVE_DELAY + 1))
    await hass.async_block_till_done()


async def test_changes_are_saved_soon_after(
    hass: HomeAssistant, hass_storage: dict[str, Any], loaded_home: MockConfigEntry
) -> None:
    home = {"config_entry_id": loaded_home.entry_id}
    await _let_the_save_happen(hass)  # setup's own save, of what it made
    await hass.services.async_call("switch", "turn_on", {"entity_id": PLUG}, blocking=True)
    assert load_home(hass_storage[_key(loaded_home)]["data"]["home"]).states[PLUG].state == "off"
    await _let_the_save_happen(hass)
    stored = hass_storage[_key(loaded_home)]
    assert stored["version"] == STORAGE_VERSION
    assert load_home(stored["data"]["home"]).states[PLUG].state == "on"
    assert stored["data"]["registry"] == loaded_home.runtime_data.registry_ids
    assert stored["data"]["goal"] is None

    condition = f'state("{WALL}") == "on"'
    await hass.services.async_call(
        DOMAIN, "set_goal", {**home, "conditions": [condition]}, blocking=True
    )
    await _let_the_save_happen(hass)
    goal = hass_storage[_key(loaded_home)]["data"]["goal"]
    assert goal["conditions"] == [condition]
    assert load_home(goal["start"]).states == loaded_home.runtime_data.home.states

    await hass.services.async_call(DOMAIN, "reset", home, blocking=True)
    await _let_the_save_happen(hass)
    stored = hass_storage[_key(loaded_home)]["data"]
    assert stored["goal"] is None
    assert load_home(stored["home"]).states[PLUG].state == "off"


async def test_a_reload_brings_back_every_state_and_the_goal(
    hass: HomeAssistant, hass_storage: dict[str, Any], loaded_home: MockConfigEntry
) -> None:
    await _change_everything(hass, loaded_home)
    before = _ha_states(hass, loaded_home)
    twin = loaded_home.runtime_data.home
    twin_states, rooms, now = dict(twin.states), dict(twin.rooms), twin.now
    registries = _registries(hass)
    report = await _verify(hass, loaded_home)
    assert report["done"] is True
    initial = build_home(loaded_home.data, dt_util.now()).states
    changed = [eid for eid, (state, _) in before.items() if state != initial[eid].state]
    assert {PLUG, WALL} <= set(changed)
    assert any(eid.startswith("sensor.") for eid in changed)

    assert await hass.config_entries.async_reload(loaded_home.entry_id)
    await hass.async_block_till_done()

    assert loaded_home.runtime_data.home is not twin
    again = loaded_home.runtime_data.home
    assert (again.states, again.rooms, again.now) == (twin_states, rooms, now)
    assert _ha_states(hass, loaded_home) == before
    assert _registries(hass) == registries
    assert await _verify(hass, loaded_home) == report


async def test_a_restart_starts_from_the_stored_home(
    hass: HomeAssistant, hass_storage: dict[str, Any], loaded_home: MockConfigEntry
) -> None:
    """Unload (as a stop does), then set up again from nothing but the stored data."""
    await _change_everything(hass, loaded_home)
    before = _ha_states(hass, loaded_home)
    report = await _verify(hass, loaded_home)
    registries = _registries(hass)
    assert await hass.config_entries.async_unload(loaded_home.entry_id)
    await hass.async_block_till_done()
    stored = deepcopy(hass_storage[_key(loaded_home)])

    # Storage is all that carries over: replace it with its saved copy and start afresh.
    hass_storage[_key(loaded_home)] = stored
    assert await hass.config_entries.async_setup(loaded_home.entry_id)
    await hass.async_block_till_done()

    assert _ha_states(hass, loaded_home) == before
    assert _registries(hass) == registries
    assert await _verify(hass, loaded_home) == report


async def _stop_and_start(
    hass: HomeAssistant, hass_storage: dict[str, Any], entry: MockConfigEntry
) -> None:
    """A restart: Home Assistant writes what is due and stops without unloading the entry."""
    hass.bus.async_fire(EVENT_HOMEASSISTANT_FINAL_WRITE)
    await hass.async_block_till_done()
    stored = deepcopy(hass_storage.get(_key(entry)))
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    hass_storage.pop(_key(entry))
    if stored is not None:
        hass_storage[_key(entry)] = stored
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


async def test_restarts_before_any_change_keep_the_floors_and_areas(
    hass: HomeAssistant, hass_storage: dict[str, Any], loaded_home: MockConfigEntry
) -> None:
    """The ids of what setup made are stored at once, not with the first change."""
    registries = _registries(hass)
    made = loaded_home.runtime_data.registry_ids
    for _ in range(2):
        await _stop_and_start(hass, hass_storage, loaded_home)
        assert loaded_home.state is ConfigEntryState.LOADED
        assert loaded_home.runtime_data.registry_ids == made
        assert _registries(hass) == registries


async def test_time_home_assistant_was_down_passes_in_the_home(
    hass: HomeAssistant,
    hass_storage: dict[str, Any],
    home_entry: MockConfigEntry,
    freezer: FrozenDateTimeFactory,
) -> None:
    """A restart an hour later finds the home an hour on, with its physics run; with physics
    off, or back within a tick, its clock stays where it was saved."""
    hass.config_entries.async_update_entry(home_entry, options={"physics": True})
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    hass.bus.async_fire(EVENT_HOMEASSISTANT_FINAL_WRITE)
    await hass.async_block_till_done()
    assert await hass.config_entries.async_unload(home_entry.entry_id)
    await hass.async_block_till_done()
    stored = deepcopy(hass_storage[_key(home_entry)])
    saved = load_home(stored["data"]["home"]).now

    freezer.tick(timedelta(seconds=DEFAULT_TICK - 1))
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    assert home_entry.runtime_data.home.now == saved
    assert await hass.config_entries.async_unload(home_entry.entry_id)
    await hass.async_block_till_done()

    hass_storage[_key(home_entry)] = deepcopy(stored)
    freezer.tick(timedelta(hours=1))
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    behind = dt_util.utcnow().timestamp() - stored["data"]["saved_at"]
    assert behind > 3600
    assert home_entry.runtime_data.home.now == pytest.approx(saved + behind)
    assert await hass.config_entries.async_unload(home_entry.entry_id)
    await hass.async_block_till_done()

    hass.config_entries.async_update_entry(home_entry, options={"physics": False})
    hass_storage[_key(home_entry)] = deepcopy(stored)
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    assert home_entry.runtime_data.home.now == saved


async def test_a_removed_home_leaves_no_storage_behind(
    hass: HomeAssistant, hass_storage: dict[str, Any], home_entry: MockConfigEntry
) -> None:
    """The clock stops before the last save: a tick while unloading would store the home again."""
    hass.config_entries.async_update_entry(home_entry, options={"physics": True})
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    unload_platforms = hass.config_entries.async_unload_platforms

    async def tick_then_unload(*args: Any) -> bool:
        async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=DEFAULT_TICK + 1))
        return await unload_platforms(*args)

    with patch.object(hass.config_entries, "async_unload_platforms", tick_then_unload):
        await hass.config_entries.async_remove(home_entry.entry_id)
    await _let_the_save_happen(hass)
    assert _key(home_entry) not in hass_storage


async def test_a_home_set_up_from_seeded_storage(
    hass: HomeAssistant, hass_storage: dict[str, Any], home_entry: MockConfigEntry
) -> None:
    """What an earlier run left: the home's floors and areas in the registries, and its store."""
    floors = fr.async_get(hass)
    areas = ar.async_get(hass)
    first = floors.async_create("Upstairs", level=1)
    bedroom = areas.async_create("Sleeping room", floor_id=first.floor_id)
    home = build_home(home_entry.data, dt_util.now())
    home.call_service("switch", "turn_on", {}, {"entity_id": PLUG})
    home.advance(3600)
    hass_storage[_key(home_entry)] = {
        "version": STORAGE_VERSION,
        "key": _key(home_entry),
        "data": {
            "home": dump_home(home),
            "registry": {"floors": {"first": first.floor_id}, "areas": {"bedroom": bedroom.id}},
        },
    }

    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()

    virtual = home_entry.runtime_data
    assert virtual.home.states == home.states
    assert virtual.home.now == home.now
    assert virtual.goal is None
    assert hass.states.get(PLUG).state == "on"
    # The kept floor and area are used, not made again; the rest are made.
    assert virtual.registry_ids["floors"]["first"] == first.floor_id
    assert virtual.registry_ids["areas"]["bedroom"] == bedroom.id
    assert len(floors.async_list_floors()) == len(home.floors)
    assert len(areas.async_list_areas()) == len(home.areas)
    assert areas.async_get_area_by_name("Bedroom") is None


async def test_a_stored_home_that_no_longer_loads_fails_setup_with_the_reason(
    hass: HomeAssistant, hass_storage: dict[str, Any], home_entry: MockConfigEntry
) -> None:
    hass_storage[_key(home_entry)] = {
        "version": STORAGE_VERSION,
        "key": _key(home_entry),
        "data": {"home": "name: Broken\ndevices: [{id: x, name: Toast, type: toaster}]\n"},
    }
    assert not await hass.config_entries.async_setup(home_entry.entry_id)
    assert home_entry.state is ConfigEntryState.SETUP_ERROR
    assert "toaster" in str(home_entry.reason)

"""A generated home on an onboarded Home Assistant: its rooms in the user's own areas and floors,
names that dashboards shorten, icons, removal that keeps the user's areas, and its clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from freezegun.api import FrozenDateTimeFactory
from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import floor_registry as fr
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import DOMAIN
from twin.homemaker import make_home

# Seed 2 in Berlin: a house whose rooms include a Living Room, a Kitchen and a Master Bedroom on
# its Ground Floor, and a garden with an illuminance sensor; the seed's moment is a July noon.
HOME = {"name": "Beach House", "seed": 2, "city": "Berlin"}
CEILING = "light.living_room_ceiling_light"
GARDEN_LUX = "sensor.garden_motion_sensor_illuminance"
# The areas onboarding makes, with its icons (homeassistant/components/onboarding/const.py).
ONBOARDING = {"Living Room": "mdi:sofa", "Kitchen": "mdi:stove", "Bedroom": "mdi:bed"}


@pytest.fixture
def onboarded(hass: HomeAssistant) -> dict[str, str]:
    """The user's areas as onboarding makes them: name -> area id."""
    areas = ar.async_get(hass)
    return {name: areas.async_create(name, icon=icon).id for name, icon in ONBOARDING.items()}


async def _generate(hass: HomeAssistant, **fields: Any) -> dict[str, Any]:
    """The config flow up to the step after the generate form."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "generate"}
    )
    return await hass.config_entries.flow.async_configure(result["flow_id"], HOME | fields)


async def _add(hass: HomeAssistant, rooms: dict[str, Any], **fields: Any) -> ConfigEntry:
    """A generated home, with `rooms` answering the rooms step."""
    return await _finish(hass, await _generate(hass, **fields), rooms)


async def _finish(
    hass: HomeAssistant, result: dict[str, Any], rooms: dict[str, Any]
) -> ConfigEntry:
    """The home of a flow at the rooms step, with `rooms` answering it."""
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "rooms"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], rooms)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    entry: ConfigEntry = result["result"]
    return entry


def _defaults(result: dict[str, Any]) -> dict[str, Any]:
    """The rooms step's fields and their defaults."""
    return {str(key): key.default() for key in result["data_schema"].schema}


async def test_rooms_go_into_the_users_empty_areas(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    result = await _generate(hass)
    assert result["step_id"] == "rooms"
    # The user's Bedroom is not the home's Master Bedroom: only same names are offered.
    assert _defaults(result) == {"areas": ["living_room", "kitchen"]}
    entry = await _finish(hass, result, {})
    areas = ar.async_get(hass)
    assert {area.name for area in areas.async_list_areas()} >= {*ONBOARDING, "Master Bedroom"}
    assert not any("Beach House" in area.name for area in areas.async_list_areas())
    # The user's areas keep their names and icons; the devices are in them.
    assert areas.async_get_area(onboarded["Living Room"]).icon == "mdi:sofa"
    devices = dr.async_entries_for_area(dr.async_get(hass), onboarded["Living Room"])
    assert "Living Room Ceiling Light" in {device.name for device in devices}
    assert all(device.config_entry_id == entry.entry_id for device in devices)
    assert hass.states.get(CEILING).attributes["friendly_name"] == "Living Room Ceiling Light"
    assert not dr.async_entries_for_area(dr.async_get(hass), onboarded["Bedroom"])
    # On no floor, as onboarding makes them: put on the home's, so floor targets reach them.
    ground = fr.async_get(hass).async_get_floor_by_name("Ground Floor")
    assert ground is not None
    living_room = areas.async_get_area(onboarded["Living Room"])
    assert living_room is not None
    assert living_room.floor_id == ground.floor_id


async def test_made_areas_and_floors_get_icons(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    await _add(hass, {})
    areas = ar.async_get(hass)
    icons = {area.name: area.icon for area in areas.async_list_areas()}
    assert icons["Master Bedroom"] == "mdi:bed"
    assert icons["Garden"] == "mdi:flower"
    assert icons["Hallway"] == "mdi:door"
    assert icons["Ensuite Bathroom"] == "mdi:shower"
    floor = fr.async_get(hass).async_get_floor_by_name("Ground Floor")
    assert floor is not None
    assert floor.icon == "mdi:home-floor-0"
    assert floor.level == 0


async def test_an_area_with_devices_is_offered_but_not_chosen(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    other = MockConfigEntry(domain="demo")
    other.add_to_hass(hass)
    toaster = dr.async_get(hass).async_get_or_create(
        config_entry_id=other.entry_id, identifiers={("demo", "toaster")}, name="Toaster"
    )
    dr.async_get(hass).async_update_device(toaster.id, area_id=onboarded["Kitchen"])
    result = await _generate(hass)
    assert _defaults(result) == {"areas": ["living_room"]}
    await _finish(hass, result, {})
    areas = ar.async_get(hass)
    made = areas.async_get_area_by_name("Beach House Kitchen")
    assert made is not None
    assert made.icon == "mdi:stove"
    names = {d.name for d in dr.async_entries_for_area(dr.async_get(hass), made.id)}
    # Led by its area's name, so that the area's page shows "Ceiling Light".
    assert "Beach House Kitchen Ceiling Light" in names
    kitchen = dr.async_entries_for_area(dr.async_get(hass), onboarded["Kitchen"])
    assert [device.name for device in kitchen] == ["Toaster"]


async def test_mapping_off_leaves_the_users_areas_empty(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    await _add(hass, {"areas": []})
    assert not dr.async_entries_for_area(dr.async_get(hass), onboarded["Living Room"])
    made = ar.async_get(hass).async_get_area_by_name("Beach House Living Room")
    assert made is not None
    names = {d.name for d in dr.async_entries_for_area(dr.async_get(hass), made.id)}
    assert "Beach House Living Room Ceiling Light" in names


async def test_the_users_floor_is_used_and_kept(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    floors = fr.async_get(hass)
    ground = floors.async_create("Ground floor", level=0)  # names match as HA's do
    upstairs = floors.async_create("Upstairs", level=1)
    ar.async_get(hass).async_update(onboarded["Kitchen"], floor_id=upstairs.floor_id)
    result = await _generate(hass)
    assert _defaults(result) == {"areas": ["living_room", "kitchen"], "floors": ["ground_floor"]}
    entry = await _finish(hass, result, {})
    areas = ar.async_get(hass)
    hallway = areas.async_get_area_by_name("Hallway")
    assert hallway is not None
    assert hallway.floor_id == ground.floor_id
    assert len(floors.async_list_floors()) == 2
    kitchen = areas.async_get_area(onboarded["Kitchen"])
    assert kitchen is not None
    assert kitchen.floor_id == upstairs.floor_id  # where the user put it

    assert await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    assert fr.async_get(hass).async_get_floor(ground.floor_id) is not None


async def test_removal_keeps_the_users_areas_and_removes_what_it_made(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    entry = await _add(hass, {})
    assert await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    areas = ar.async_get(hass)
    assert {area.name for area in areas.async_list_areas()} == set(ONBOARDING)
    assert all(area.floor_id is None for area in areas.async_list_areas())
    assert all(areas.async_get_area(area_id) for area_id in onboarded.values())
    assert not fr.async_get(hass).async_list_floors()
    assert not dr.async_get(hass).devices


async def test_a_reload_keeps_the_home_in_the_users_areas(
    hass: HomeAssistant, onboarded: dict[str, str]
) -> None:
    entry = await _add(hass, {})
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()
    assert not any("Beach House" in area.name for area in ar.async_get(hass).async_list_areas())
    devices = dr.async_entries_for_area(dr.async_get(hass), onboarded["Living Room"])
    assert "Living Room Ceiling Light" in {device.name for device in devices}


async def test_the_home_lives_on_home_assistants_night(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """December, 02:00 in Berlin: the garden sees no daylight, whatever the seed's moment."""
    await hass.config.async_set_time_zone("Europe/Berlin")
    freezer.move_to("2026-12-02T01:00:00+00:00")
    result = await _generate(hass)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    home = result["result"].runtime_data.home
    assert home.now == datetime.fromisoformat("2026-12-02T01:00:00+00:00").timestamp()
    assert home.weather.at(home.now).sun_elevation < 0
    assert hass.states.get(GARDEN_LUX).state == "0"
    # The same home as the seed's, only its moment moved.
    seeded = make_home(2, city="Berlin")
    assert set(home.entities) == set(seeded.entities)


async def test_the_home_keeps_the_seeds_moment(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    await hass.config.async_set_time_zone("Europe/Berlin")
    freezer.move_to("2026-12-02T01:00:00+00:00")
    result = await _generate(hass, seed_time=True)
    await hass.async_block_till_done()
    home = result["result"].runtime_data.home
    seeded = make_home(2, city="Berlin")
    assert home.now == seeded.now
    assert hass.states.get(GARDEN_LUX).state == seeded.states[GARDEN_LUX].state != "0"

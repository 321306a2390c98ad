"""Set-up writes the home into Home Assistant's registries; unload and removal clean up."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import floor_registry as fr
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import CONF_HOME, CONF_SOURCE, DOMAIN, SOURCE_IMPORT
from twin.home import Home
from twin.homefile import dump_home
from twin.registry import Area, EntityEntry

from .conftest import AREAS, every_device_home, set_up_home


async def test_registries_hold_the_home(hass: HomeAssistant, loaded_home: MockConfigEntry) -> None:
    twin = every_device_home()
    floors = fr.async_get(hass)
    areas = ar.async_get(hass)
    assert {f.name for f in floors.async_list_floors()} == {"Ground Floor", "First Floor"}
    assert {a.name for a in areas.async_list_areas()} == set(AREAS)
    bedroom = areas.async_get_area_by_name("Bedroom")
    assert bedroom is not None
    assert bedroom.floor_id == floors.async_get_floor_by_name("First Floor").floor_id

    devices = dr.async_entries_for_config_entry(dr.async_get(hass), loaded_home.entry_id)
    assert len(devices) == len(twin.devices)
    by_name = {device.name: device for device in devices}
    for device in twin.devices.values():
        made = by_name[device.name]
        assert (made.manufacturer, made.model) == (device.manufacturer, device.model)
        assert areas.async_get_area(made.area_id).name == twin.areas[device.area_id].name


async def test_switch_and_sensor_entities_mirror_the_twin(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    entities = er.async_get(hass)
    twin = loaded_home.runtime_data.home
    for entity_id in [e for e in twin.entities if e.split(".")[0] in ("switch", "sensor")]:
        entry = entities.async_get(entity_id)
        assert entry is not None, entity_id
        assert entry.unique_id == f"{loaded_home.entry_id}_{entity_id}"
        state = hass.states.get(entity_id)
        assert state.state == twin.states[entity_id].state
        assert state.attributes["friendly_name"] == twin.entities[entity_id].name


async def test_a_switch_acts_through_the_twin(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    twin = loaded_home.runtime_data.home
    switch = next(e for e in twin.entities if e.startswith("switch."))
    await hass.services.async_call("switch", "toggle", {"entity_id": switch}, blocking=True)
    assert hass.states.get(switch).state == twin.states[switch].state == "on"


async def test_a_second_home_does_not_collide(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    second = MockConfigEntry(
        domain=DOMAIN,
        title="Cabin",
        unique_id="cabin",
        data=dict(loaded_home.data),
        options={"physics": False},
    )
    second.add_to_hass(hass)
    assert await hass.config_entries.async_setup(second.entry_id)
    await hass.async_block_till_done()
    areas = {a.name for a in ar.async_get(hass).async_list_areas()}
    assert areas == set(AREAS) | {f"Cabin {name}" for name in AREAS}
    switch = next(e for e in loaded_home.runtime_data.home.entities if e.startswith("switch."))
    assert hass.states.get(f"{switch}_2") is not None


async def test_names_taken_twice_get_a_number(
    hass: HomeAssistant, home_entry: MockConfigEntry
) -> None:
    """What an earlier setup left, or the user's own areas, may hold both names already."""
    floors = fr.async_get(hass)
    areas = ar.async_get(hass)
    for name in ("Ground Floor", "Test Home Ground Floor"):
        floors.async_create(name)
    for name in ("Kitchen", "Test Home Kitchen", "Test Home Kitchen 2"):
        areas.async_create(name)
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    made = home_entry.runtime_data.registry_ids
    assert floors.async_get_floor(made["floors"]["ground"]).name == "Test Home Ground Floor 2"
    assert areas.async_get_area(made["areas"]["kitchen"]).name == "Test Home Kitchen 3"


def _home_with_a_garden_light() -> Home:
    """`every_device_home` with an entity in an area of its own."""
    home = every_device_home()
    home.add_entity(EntityEntry("switch.garden_light", "Garden light", area_id="garden"), "off")
    return home


async def test_areas_the_user_chose_stay_after_a_reload(hass: HomeAssistant) -> None:
    """As with Home Assistant's suggested area, the twin's area is only where things start."""
    entry = await set_up_home(hass, _home_with_a_garden_light())
    devices = dr.async_get(hass)
    entities = er.async_get(hass)
    den = ar.async_get(hass).async_create("Den")
    device = dr.async_entries_for_config_entry(devices, entry.entry_id)[0]
    devices.async_update_device(device.id, area_id=den.id)
    entities.async_update_entity("switch.garden_light", area_id=den.id)

    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()

    assert devices.async_get(device.id).area_id == den.id
    assert entities.async_get("switch.garden_light").area_id == den.id


async def test_a_deleted_area_comes_back_with_what_was_in_it(hass: HomeAssistant) -> None:
    entry = await set_up_home(hass, _home_with_a_garden_light())
    areas = ar.async_get(hass)
    devices = dr.async_get(hass)
    garden = areas.async_get_area_by_name("Garden")
    in_garden = {device.id for device in dr.async_entries_for_area(devices, garden.id)}
    assert in_garden
    areas.async_delete(garden.id)
    await hass.async_block_till_done()

    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done()

    again = areas.async_get_area_by_name("Garden")
    assert {device.id for device in dr.async_entries_for_area(devices, again.id)} == in_garden
    assert er.async_get(hass).async_get("switch.garden_light").area_id == again.id


async def test_unload_then_remove_cleans_up(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert await hass.config_entries.async_unload(loaded_home.entry_id)
    await hass.async_block_till_done()
    assert loaded_home.state is ConfigEntryState.NOT_LOADED
    await hass.config_entries.async_remove(loaded_home.entry_id)
    await hass.async_block_till_done()
    assert list(ar.async_get(hass).async_list_areas()) == []
    assert list(fr.async_get(hass).async_list_floors()) == []
    assert dr.async_entries_for_config_entry(dr.async_get(hass), loaded_home.entry_id) == []


async def test_entities_without_a_device_and_odd_sensor_states(hass: HomeAssistant) -> None:
    """Imported homes may hold entities with no device, text sensors and unreadable numbers."""
    home = Home("Odd Home")
    home.add_area(Area("porch", "Porch"))
    home.add_entity(
        EntityEntry(
            "sensor.porch_temperature",
            "Porch temperature",
            area_id="porch",
            device_class="temperature",
            unit_of_measurement="°C",
        ),
        "unknown",
    )
    home.add_entity(EntityEntry("sensor.porch_status", "Porch status"), "all clear")
    home.add_entity(EntityEntry("switch.porch_light", "Porch light", area_id="porch"), "off")
    home.add_entity(
        EntityEntry("sensor.porch_power", "Porch power", unit_of_measurement="W"), "n/a"
    )
    home.add_entity(
        EntityEntry("sensor.porch_energy", "Porch energy", unit_of_measurement="kWh"), "-3"
    )
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Odd Home",
        unique_id="odd_home",
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(home)},
        options={"physics": False},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get("sensor.porch_temperature").state == "unknown"
    assert hass.states.get("sensor.porch_temperature").attributes["friendly_name"] == (
        "Porch temperature"
    )
    assert hass.states.get("sensor.porch_status").state == "all clear"
    assert hass.states.get("sensor.porch_power").state == "unknown"
    assert hass.states.get("sensor.porch_energy").state == "-3"
    assert er.async_get(hass).async_get("sensor.porch_status").device_id is None
    # An entity placed in an area of its own is there in Home Assistant too.
    porch = ar.async_get(hass).async_get_area_by_name("Porch")
    assert er.async_get(hass).async_get("switch.porch_light").area_id == porch.id
    await hass.services.async_call("switch", "turn_on", {"area_id": porch.id}, blocking=True)
    assert hass.states.get("switch.porch_light").state == "on"

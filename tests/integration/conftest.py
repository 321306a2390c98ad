"""Fixtures for the integration's tests under Home Assistant's test harness."""

from __future__ import annotations

from dataclasses import replace

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

# Imported before Home Assistant starts, so that HA resolves `custom_components` to this repository.
import custom_components  # noqa: F401
from custom_components.homeflow.const import CONF_HOME, CONF_SOURCE, DOMAIN, SOURCE_IMPORT
from tests.twin.helpers import add_helpers
from twin.catalog import load_catalog
from twin.domains.weather import METRIC_UNITS
from twin.home import Home
from twin.homefile import dump_home
from twin.registry import Area, EntityEntry, Floor

AREAS = ["Kitchen", "Living Room", "Bedroom", "Bathroom", "Hallway", "Garden"]


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load the integration from custom_components/."""


def every_device_home() -> Home:
    """A home with one device of every catalog type, over two floors and six rooms, and a
    helper of each kind and a script in the hallway."""
    home = Home("Test Home")
    home.add_floor(Floor("ground", "Ground Floor", 0))
    home.add_floor(Floor("first", "First Floor", 1))
    for name in AREAS:
        floor = "first" if name == "Bedroom" else "ground"
        home.add_area(Area(name.lower().replace(" ", "_"), name, floor))
    areas = list(home.areas)
    for index, device_type in enumerate(load_catalog().values()):
        area = areas[index % len(areas)]
        device_type.install(home, f"d{index}", device_type.type_id.replace("_", " ").title(), area)
    add_helpers(home, "hallway")
    add_deviceless_entities(home)
    # Domains no catalog device carries, as plain entities.
    home.add_entity(
        EntityEntry("weather.forecast_home", "Forecast Home"),
        "partlycloudy",
        {
            "temperature": 14.3,
            "dew_point": 8.1,
            "humidity": 66,
            "cloud_coverage": 45,
            "pressure": 1016.4,
            "wind_bearing": 230.5,
            "wind_speed": 13.7,
            **METRIC_UNITS,
        },
    )
    return home


# Entities that no device carries, with the memory they start with: a to-do list with every
# feature and its items, one that only adds, updates and removes, and a scene.
DEVICELESS = [
    (
        EntityEntry(
            "todo.shopping_list", "Shopping list", area_id="kitchen", supported_features=127
        ),
        "2",
        {
            "items": [
                {"uid": "a1", "summary": "Milk", "status": "needs_action", "due": "2026-01-02"},
                {"uid": "a2", "summary": "Eggs", "status": "completed", "description": "Dozen"},
                {"uid": "a3", "summary": "Bread", "status": "needs_action"},
            ]
        },
    ),
    (
        EntityEntry("todo.chores", "Chores", area_id="hallway", supported_features=7),
        "1",
        {"items": [{"uid": "c1", "summary": "Vacuum", "status": "needs_action"}]},
    ),
    (EntityEntry("scene.movie_night", "Movie night", area_id="living_room"), "unknown", {}),
]


def add_deviceless_entities(home: Home) -> None:
    """Add DEVICELESS to `home`."""
    for entry, state, hidden in DEVICELESS:
        added = home.add_entity(entry, state)
        home.states[entry.entity_id] = replace(added, hidden=hidden)


async def set_up_home(hass: HomeAssistant, home: Home) -> MockConfigEntry:
    """A config entry that imports `home`, without physics, set up."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=home.name,
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(home)},
        options={"physics": False},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


@pytest.fixture
def home_entry(hass: HomeAssistant) -> MockConfigEntry:
    """A config entry whose home is `every_device_home`, not yet set up."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Test Home",
        unique_id="test_home",
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(every_device_home())},
        options={"physics": False},
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def loaded_home(hass: HomeAssistant, home_entry: MockConfigEntry) -> MockConfigEntry:
    """`home_entry`, set up."""
    assert await hass.config_entries.async_setup(home_entry.entry_id)
    await hass.async_block_till_done()
    return home_entry

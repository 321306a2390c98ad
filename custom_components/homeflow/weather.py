"""The weather of a virtual home: read-only, as the twin (or its outdoor weather) shows it."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.weather import WeatherEntity, WeatherEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.weather import CONDITIONS
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

# Read-only: no actions at all.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's weather entities."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowWeather(virtual, e) for e in virtual.entities_of("weather"))


def _reading(key: str) -> Any:
    """A property that reads one of the twin's weather attributes."""
    return property(lambda self: self.attribute.get(key), doc=f"The twin's {key}.")


class HomeFlowWeather(HomeFlowEntity, WeatherEntity):
    """A twin weather entity: its readings are in the units its attributes name, which Home
    Assistant converts to the user's."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin weather entity, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = WeatherEntityFeature(entry.supported_features)

    @property
    @override
    def condition(self) -> str | None:
        """The condition; None (unknown) if the twin's state is none of Home Assistant's."""
        state = self.twin.state
        return state if state in CONDITIONS else None

    native_temperature = _reading("temperature")
    native_apparent_temperature = _reading("apparent_temperature")
    native_dew_point = _reading("dew_point")
    native_temperature_unit = _reading("temperature_unit")
    humidity = _reading("humidity")
    ozone = _reading("ozone")
    cloud_coverage = _reading("cloud_coverage")
    uv_index = _reading("uv_index")
    native_pressure = _reading("pressure")
    native_pressure_unit = _reading("pressure_unit")
    wind_bearing = _reading("wind_bearing")
    native_wind_gust_speed = _reading("wind_gust_speed")
    native_wind_speed = _reading("wind_speed")
    native_wind_speed_unit = _reading("wind_speed_unit")
    native_visibility = _reading("visibility")
    native_visibility_unit = _reading("visibility_unit")
    native_precipitation_unit = _reading("precipitation_unit")

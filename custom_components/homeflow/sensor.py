"""Temperature, humidity, light, air-quality, power and battery sensors of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.sensor import SensorEntity, SensorStateClass
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's sensors."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowSensor(virtual, e) for e in virtual.entities_of("sensor"))


class HomeFlowSensor(HomeFlowEntity, SensorEntity):
    """A twin sensor; the room physics moves its value."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin sensor, with its unit and state class."""
        super().__init__(virtual, entry)
        self._attr_native_unit_of_measurement = entry.unit_of_measurement
        if (state_class := entry.capabilities.get("state_class")) is not None:
            self._attr_state_class = SensorStateClass(state_class)

    @property
    @override
    def native_value(self) -> str | int | float | None:
        """The twin's reading: a number where the sensor measures one, as the twin wrote it."""
        state = self.twin.state
        if state in ("unknown", "unavailable"):
            return None
        if self.native_unit_of_measurement is None and self.state_class is None:
            return state
        try:
            return int(state) if state.lstrip("-").isdigit() else float(state)
        except ValueError:
            return None

"""Motion, door, window and leak sensors of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.binary_sensor import BinarySensorEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's binary sensors."""
    virtual = entry.runtime_data
    async_add_entities(
        HomeFlowBinarySensor(virtual, e) for e in virtual.entities_of("binary_sensor")
    )


class HomeFlowBinarySensor(HomeFlowEntity, BinarySensorEntity):
    """A twin binary sensor."""

    @property
    @override
    def is_on(self) -> bool | None:
        """Whether the sensor detects something; None while unknown."""
        state = self.twin.state
        return None if state not in ("on", "off") else state == "on"

"""Numeric settings of a virtual home's devices, such as a robot mower's cutting height."""

from __future__ import annotations

from typing import override

from homeassistant.components.number import NumberEntity, NumberMode
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.number import (
    ATTR_MAX,
    ATTR_MIN,
    ATTR_MODE,
    ATTR_STEP,
    DEFAULT_MAX_VALUE,
    DEFAULT_MIN_VALUE,
)
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
    """Add the home's numbers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowNumber(virtual, e) for e in virtual.entities_of("number"))


class HomeFlowNumber(HomeFlowEntity, NumberEntity):
    """A twin number; Home Assistant refuses a value outside its range before the twin sees it."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin number, with its range, step, mode and unit."""
        super().__init__(virtual, entry)
        caps = entry.capabilities
        self._attr_native_min_value = caps.get(ATTR_MIN, DEFAULT_MIN_VALUE)
        self._attr_native_max_value = caps.get(ATTR_MAX, DEFAULT_MAX_VALUE)
        if (step := caps.get(ATTR_STEP)) is not None:
            self._attr_native_step = step
        self._attr_mode = NumberMode(caps.get(ATTR_MODE, NumberMode.AUTO))
        self._attr_native_unit_of_measurement = entry.unit_of_measurement

    @property
    @override
    def native_value(self) -> float | None:
        """The twin's value; None (unknown) while it has none."""
        try:
            return float(self.twin.state)
        except ValueError:
            return None

    @override
    async def async_set_native_value(self, value: float) -> None:
        """Set the value."""
        self.call("set_value", value=value)

"""input_number helpers of a virtual home, in Home Assistant's input_number component."""

from __future__ import annotations

from typing import override

from homeassistant.components.number import NumberEntity, NumberMode
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains import input_number as twin_number
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .helper import HomeFlowHelper
from .virtual_home import VirtualHome

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's input_number helpers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowInputNumber(virtual, e) for e in virtual.entities_of("input_number"))


class HomeFlowInputNumber(HomeFlowHelper, NumberEntity):
    """A twin input_number: a NumberEntity, as Home Assistant's InputNumber is, whose range,
    step and mode are the twin's capabilities. The input_number component calls
    `async_set_native_value`, `async_increment` and `async_decrement`: each is the twin's."""

    EXTRA = (twin_number.ATTR_INITIAL, twin_number.ATTR_EDITABLE)

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin input_number, with its range, step, mode and unit."""
        super().__init__(virtual, entry)
        caps = entry.capabilities
        self._attr_native_min_value = caps.get(twin_number.ATTR_MIN, twin_number.DEFAULT_MIN)
        self._attr_native_max_value = caps.get(twin_number.ATTR_MAX, twin_number.DEFAULT_MAX)
        self._attr_native_step = caps.get(twin_number.ATTR_STEP, twin_number.DEFAULT_STEP)
        self._attr_mode = NumberMode(caps.get(twin_number.ATTR_MODE, NumberMode.SLIDER))
        self._attr_native_unit_of_measurement = entry.unit_of_measurement

    @property
    @override
    def native_value(self) -> float | None:
        """The twin's value; None (unknown) when it holds none."""
        try:
            return float(self.twin.state)
        except ValueError:
            return None

    @override
    async def async_set_native_value(self, value: float) -> None:
        """Set the value (the twin refuses one out of range, as InputNumber does)."""
        self.call("set_value", value=value)

    async def async_increment(self) -> None:
        """One step up."""
        self.call("increment")

    async def async_decrement(self) -> None:
        """One step down."""
        self.call("decrement")

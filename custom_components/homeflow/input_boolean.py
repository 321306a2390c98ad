"""input_boolean helpers of a virtual home, in Home Assistant's input_boolean component."""

from __future__ import annotations

from typing import Any, override

from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import ToggleEntity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.input_boolean import ATTR_EDITABLE

from . import HomeFlowConfigEntry
from .helper import HomeFlowHelper

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's input_boolean helpers."""
    virtual = entry.runtime_data
    async_add_entities(
        HomeFlowInputBoolean(virtual, e) for e in virtual.entities_of("input_boolean")
    )


class HomeFlowInputBoolean(HomeFlowHelper, ToggleEntity):
    """A twin input_boolean: a ToggleEntity, as Home Assistant's InputBoolean is."""

    EXTRA = (ATTR_EDITABLE,)

    @property
    @override
    def is_on(self) -> bool:
        """Whether it is on."""
        return self.twin.state == "on"

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Set it on."""
        self.call("turn_on")

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Set it off."""
        self.call("turn_off")

"""Switches and outlets of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.switch import SwitchEntity
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
    """Add the home's switches."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowSwitch(virtual, e) for e in virtual.entities_of("switch"))


class HomeFlowSwitch(HomeFlowEntity, SwitchEntity):
    """A twin switch."""

    @property
    @override
    def is_on(self) -> bool:
        """Whether the switch is on."""
        return self.twin.state == "on"

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Switch on."""
        self.call("turn_on", **kwargs)

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Switch off."""
        self.call("turn_off", **kwargs)

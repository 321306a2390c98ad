"""Robot lawn mowers of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.lawn_mower import (
    LawnMowerActivity,
    LawnMowerEntity,
    LawnMowerEntityFeature,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

_ACTIVITIES = {activity.value: activity for activity in LawnMowerActivity}

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's lawn mowers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowLawnMower(virtual, e) for e in virtual.entities_of("lawn_mower"))


class HomeFlowLawnMower(HomeFlowEntity, LawnMowerEntity):
    """A twin robot mower; reaching the dock after `dock` is the simulation's doing."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin mower, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = LawnMowerEntityFeature(entry.supported_features)

    @property
    @override
    def activity(self) -> LawnMowerActivity | None:
        """What the mower does; None (unknown) if the twin's state is no activity."""
        return _ACTIVITIES.get(self.twin.state)

    @override
    async def async_start_mowing(self) -> None:
        """Start or resume mowing."""
        self.call("start_mowing")

    @override
    async def async_pause(self) -> None:
        """Pause mowing."""
        self.call("pause")

    @override
    async def async_dock(self) -> None:
        """Head for the dock."""
        self.call("dock")

    @override
    async def async_stop(self) -> None:
        """Stop where it is."""
        self.call("stop")

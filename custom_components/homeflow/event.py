"""Events of a virtual home: doorbell rings and remote presses, as the twin fires them."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.event import EventEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.event import ATTR_EVENT_TYPES
from twin.home import ENTITY_ATTRIBUTES
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity, time_shown
from .virtual_home import VirtualHome

# Read-only: nothing to limit.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's event entities."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowEvent(virtual, e) for e in virtual.entities_of("event"))


class HomeFlowEvent(HomeFlowEntity, EventEntity):
    """A twin event entity. EventEntity keeps the last event it was told of, on Home Assistant's
    clock; this one shows the twin's, which the twin's clock dates."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin event entity, with its event types."""
        super().__init__(virtual, entry)
        self._attr_event_types = list(entry.capabilities.get(ATTR_EVENT_TYPES, ()))

    @property  # type: ignore[misc]
    @override
    def state(self) -> str | None:
        """When the last event happened."""
        return time_shown(self.twin)

    @property  # type: ignore[misc]
    @override
    def state_attributes(self) -> dict[str, Any]:
        """The last event's type and attributes."""
        return {
            key: value
            for key, value in self.attribute.items()
            if key != ATTR_EVENT_TYPES and key not in ENTITY_ATTRIBUTES
        }

"""Settings with fixed options of a virtual home's devices, such as a mower's headlight mode."""

from __future__ import annotations

from typing import override

from homeassistant.components.select import SelectEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.select import ATTR_OPTIONS
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
    """Add the home's selects."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowSelect(virtual, e) for e in virtual.entities_of("select"))


class HomeFlowSelect(HomeFlowEntity, SelectEntity):
    """A twin select. Home Assistant turns select_first/last/next/previous into select_option
    of the option they reach, and checks the option before the twin sees it."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin select, with its options."""
        super().__init__(virtual, entry)
        self._attr_options = list(entry.capabilities.get(ATTR_OPTIONS) or ())

    @property
    @override
    def current_option(self) -> str | None:
        """The selected option; None (unknown) while none is."""
        state = self.twin.state
        return state if state in self.options else None

    @override
    async def async_select_option(self, option: str) -> None:
        """Select an option."""
        self.call("select_option", option=option)

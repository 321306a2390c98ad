"""Sirens of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.siren import SirenEntity, SirenEntityFeature
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.siren import ATTR_AVAILABLE_TONES
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
    """Add the home's sirens."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowSiren(virtual, e) for e in virtual.entities_of("siren"))


class HomeFlowSiren(HomeFlowEntity, SirenEntity):
    """A twin siren. Home Assistant drops the data of features the siren lacks and refuses a tone
    it does not have before the twin sees the call."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin siren, with its features and tones."""
        super().__init__(virtual, entry)
        self._attr_supported_features = SirenEntityFeature(entry.supported_features)
        self._attr_available_tones = entry.capabilities.get(ATTR_AVAILABLE_TONES)

    @property
    @override
    def is_on(self) -> bool | None:
        """Whether the siren sounds; None (unknown) if the twin's state is neither on nor off."""
        state = self.twin.state
        return state == "on" if state in ("on", "off") else None

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Sound, with the tone, volume and duration Home Assistant passed on."""
        self.call("turn_on", **kwargs)

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Silence."""
        self.call("turn_off", **kwargs)

    @override
    async def async_toggle(self, **kwargs: Any) -> None:
        """Silence if sounding, else sound, as the twin decides."""
        self.call("toggle", **kwargs)

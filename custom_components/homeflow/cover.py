"""Blinds, shades, curtains, windows and garage doors of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.cover import CoverEntity, CoverEntityFeature, CoverState
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
    """Add the home's covers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowCover(virtual, e) for e in virtual.entities_of("cover"))


class HomeFlowCover(HomeFlowEntity, CoverEntity):
    """A twin cover.

    A service call settles the cover within the call, as the twin does: it shows `opening` or
    `closing` only while the twin does (from a home's initial state, until the physics moves it).
    Toggles go to the twin, whose toggle is Home Assistant's rule with the memory of the last
    direction kept in the twin, so it survives a restart of Home Assistant.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin cover, with its features and speeds."""
        super().__init__(virtual, entry)
        self._attr_supported_features = CoverEntityFeature(entry.supported_features)
        self._attr_supported_speeds = entry.capabilities.get("supported_speeds")

    @property
    @override
    def is_closed(self) -> bool | None:
        """Whether the cover is fully closed; None while unknown."""
        return self.attribute.get("is_closed")

    @property
    @override
    def is_opening(self) -> bool:
        """Whether the cover is on its way open."""
        return self.twin.state == CoverState.OPENING

    @property
    @override
    def is_closing(self) -> bool:
        """Whether the cover is on its way closed."""
        return self.twin.state == CoverState.CLOSING

    @property
    @override
    def current_cover_position(self) -> int | None:
        """0 (closed) to 100 (open); None when the cover reports no position."""
        return self.attribute.get("current_position")

    @property
    @override
    def current_cover_tilt_position(self) -> int | None:
        """0 (closed) to 100 (open); None when the cover reports no tilt."""
        return self.attribute.get("current_tilt_position")

    @override
    async def async_open_cover(self, **kwargs: Any) -> None:
        """Open fully, at a speed if given (Home Assistant has checked it)."""
        self.call("open_cover", **kwargs)

    @override
    async def async_close_cover(self, **kwargs: Any) -> None:
        """Close fully, at a speed if given."""
        self.call("close_cover", **kwargs)

    @override
    async def async_set_cover_position(self, **kwargs: Any) -> None:
        """Move to a position, at a speed if given."""
        self.call("set_cover_position", **kwargs)

    @override
    async def async_stop_cover(self, **kwargs: Any) -> None:
        """Stop a moving cover where it is."""
        self.call("stop_cover")

    @override
    async def async_toggle(self, **kwargs: Any) -> None:
        """Stop, open or close, as the twin decides by Home Assistant's rule."""
        self.call("toggle")

    @override
    async def async_open_cover_tilt(self, **kwargs: Any) -> None:
        """Tilt the slats open."""
        self.call("open_cover_tilt")

    @override
    async def async_close_cover_tilt(self, **kwargs: Any) -> None:
        """Tilt the slats closed."""
        self.call("close_cover_tilt")

    @override
    async def async_set_cover_tilt_position(self, **kwargs: Any) -> None:
        """Tilt the slats to a position."""
        self.call("set_cover_tilt_position", **kwargs)

    @override
    async def async_stop_cover_tilt(self, **kwargs: Any) -> None:
        """Stop tilting (the twin's tilt settles within the call)."""
        self.call("stop_cover_tilt")

    @override
    async def async_toggle_tilt(self, **kwargs: Any) -> None:
        """Open the slats if closed, else close them."""
        self.call("toggle_cover_tilt")

"""Water and gas valves of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.valve import ValveEntity, ValveEntityFeature, ValveState
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
    """Add the home's valves."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowValve(virtual, e) for e in virtual.entities_of("valve"))


class HomeFlowValve(HomeFlowEntity, ValveEntity):
    """A twin valve.

    A service call settles the valve within the call, as the twin does: it shows `opening` or
    `closing` only while the twin does (from a home's initial state, until the physics moves it).
    Toggles go to the twin, whose toggle is Home Assistant's rule with the memory of the last
    direction kept in the twin, so it survives a restart of Home Assistant.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin valve; it reports its position when its state shows one."""
        super().__init__(virtual, entry)
        self._attr_supported_features = ValveEntityFeature(entry.supported_features)
        self._attr_reports_position = "current_position" in self.twin.attributes

    @property
    @override
    def is_closed(self) -> bool | None:
        """Whether the valve is closed; None while unknown."""
        return self.attribute.get("is_closed")

    @property
    @override
    def is_opening(self) -> bool:
        """Whether the valve is on its way open."""
        return self.twin.state == ValveState.OPENING

    @property
    @override
    def is_closing(self) -> bool:
        """Whether the valve is on its way closed."""
        return self.twin.state == ValveState.CLOSING

    @property
    @override
    def current_valve_position(self) -> int | None:
        """0 (closed) to 100 (open); None when the valve reports no position."""
        return self.attribute.get("current_position")

    @override
    async def async_open_valve(self) -> None:
        """Open fully (a valve that sets positions is sent to 100 by Home Assistant instead)."""
        self.call("open_valve")

    @override
    async def async_close_valve(self) -> None:
        """Close fully (a valve that sets positions is sent to 0 by Home Assistant instead)."""
        self.call("close_valve")

    @override
    async def async_set_valve_position(self, position: int) -> None:
        """Move to a position."""
        self.call("set_valve_position", position=position)

    @override
    async def async_stop_valve(self) -> None:
        """Stop a moving valve where it is."""
        self.call("stop_valve")

    @override
    async def async_toggle(self) -> None:
        """Stop, open or close, as the twin decides by Home Assistant's rule."""
        self.call("toggle")

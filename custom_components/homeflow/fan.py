"""Fans and air purifiers of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.fan import FanEntity, FanEntityFeature
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
    """Add the home's fans."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowFan(virtual, e) for e in virtual.entities_of("fan"))


class HomeFlowFan(HomeFlowEntity, FanEntity):
    """A twin fan.

    Home Assistant's own FanEntity does increase_speed, decrease_speed and toggle through
    set_percentage, turn_on and turn_off; the twin ported that arithmetic, so both agree.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin fan, with its features, preset modes and number of speeds."""
        super().__init__(virtual, entry)
        self._attr_supported_features = FanEntityFeature(entry.supported_features)
        self._attr_preset_modes = entry.capabilities.get("preset_modes")
        # Home Assistant shows percentage_step as 100 / speed_count; the twin keeps the step.
        if step := entry.capabilities.get("percentage_step"):
            self._attr_speed_count = round(100 / step)

    @property
    @override
    def is_on(self) -> bool | None:
        """Whether the fan runs; None while unknown."""
        state = self.twin.state
        return None if state not in ("on", "off") else state == "on"

    @property
    @override
    def percentage(self) -> int | None:
        """The speed, 0-100; None in a preset."""
        return self.attribute.get("percentage")

    @property
    @override
    def preset_mode(self) -> str | None:
        """The preset the fan runs in, if any."""
        return self.attribute.get("preset_mode")

    @property
    @override
    def oscillating(self) -> bool | None:
        """Whether the fan oscillates."""
        return self.attribute.get("oscillating")

    @property
    @override
    def current_direction(self) -> str | None:
        """forward or reverse."""
        return self.attribute.get("direction")

    @override
    async def async_turn_on(
        self, percentage: int | None = None, preset_mode: str | None = None, **kwargs: Any
    ) -> None:
        """Turn on in a preset, at a speed, or as the fan last ran."""
        data = {"percentage": percentage, "preset_mode": preset_mode}
        self.call("turn_on", **{key: value for key, value in data.items() if value is not None})

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        self.call("turn_off")

    @override
    async def async_set_percentage(self, percentage: int) -> None:
        """Set the speed; 0 turns the fan off."""
        self.call("set_percentage", percentage=percentage)

    @override
    async def async_set_preset_mode(self, preset_mode: str) -> None:
        """Run in a preset."""
        self.call("set_preset_mode", preset_mode=preset_mode)

    @override
    async def async_oscillate(self, oscillating: bool) -> None:
        """Start or stop oscillating."""
        self.call("oscillate", oscillating=oscillating)

    @override
    async def async_set_direction(self, direction: str | None = None) -> None:
        """Turn forward or in reverse; the twin refuses any other direction.

        Home Assistant's schema lets `direction` be left out, and its FanEntity then fails with a
        TypeError; here the twin says that direction is required.
        """
        self.call("set_direction", **({} if direction is None else {"direction": direction}))

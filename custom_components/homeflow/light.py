"""Lights of a virtual home."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, override

from homeassistant.components.light import (
    ATTR_COLOR_TEMP_KELVIN,
    ATTR_RGBWW_COLOR,
    DEFAULT_MAX_KELVIN,
    DEFAULT_MIN_KELVIN,
    ColorMode,
    LightEntity,
    LightEntityFeature,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.light import remembered
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
    """Add the home's lights."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowLight(virtual, e) for e in virtual.entities_of("light"))


class HomeFlowLight(HomeFlowEntity, LightEntity):
    """A twin light."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Take the light's modes, range and effects from its capabilities."""
        super().__init__(virtual, entry)
        capabilities = entry.capabilities
        self._attr_supported_color_modes = {
            ColorMode(mode) for mode in capabilities["supported_color_modes"]
        }
        self._attr_min_color_temp_kelvin = capabilities.get(
            "min_color_temp_kelvin", DEFAULT_MIN_KELVIN
        )
        self._attr_max_color_temp_kelvin = capabilities.get(
            "max_color_temp_kelvin", DEFAULT_MAX_KELVIN
        )
        self._attr_effect_list = capabilities.get("effect_list")
        self._attr_supported_features = LightEntityFeature(entry.supported_features)

    @property
    @override
    def is_on(self) -> bool:
        """Whether the light is on."""
        return self.twin.state == "on"

    @property
    def memory(self) -> Mapping[str, Any]:
        """What the bulb remembers, on or off (the twin's `remembered`): its `_attr_*`.

        Home Assistant's light code reads these properties, not the state: it converts a colour
        temperature or `white: true` with the brightness of a light that is off, and shows the
        colours derived from the unrounded colour; reading the memory makes both the twin's.
        """
        return remembered(self.virtual.home.entities[self.twin_id], self.twin)

    @property
    @override
    def color_mode(self) -> ColorMode | None:
        """The mode of the colour the light shows."""
        return ColorMode(self.memory["color_mode"])

    @property
    @override
    def brightness(self) -> int | None:
        """The brightness, 1-255."""
        return self.memory.get("brightness")

    @property
    @override
    def hs_color(self) -> tuple[float, float] | None:
        """The hue and saturation."""
        return self.memory.get("hs_color")

    @property
    @override
    def xy_color(self) -> tuple[float, float] | None:
        """The CIE xy colour."""
        return self.memory.get("xy_color")

    @property
    @override
    def rgb_color(self) -> tuple[int, int, int] | None:
        """The red, green and blue channels."""
        return self.memory.get("rgb_color")

    @property
    @override
    def rgbw_color(self) -> tuple[int, int, int, int] | None:
        """The red, green, blue and white channels."""
        return self.memory.get("rgbw_color")

    @property
    @override
    def rgbww_color(self) -> tuple[int, int, int, int, int] | None:
        """The red, green, blue, cold and warm white channels."""
        return self.memory.get("rgbww_color")

    @property
    @override
    def color_temp_kelvin(self) -> int | None:
        """The colour temperature."""
        return self.memory.get("color_temp_kelvin")

    @property
    @override
    def effect(self) -> str | None:
        """The effect the light runs when on."""
        return self.memory.get("effect")

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn on with the brightness, colour and effect Home Assistant made of the call.

        Home Assistant's conversions can go past what its own schema accepts, which the twin's
        applies again: a colour temperature made from a colour far from white can be below 0 K,
        and one beyond an rgbww light's range gives whites past 0-255. The twin clamps both to
        what the light can show, so clamping them first changes nothing else.
        """
        if (kelvin := kwargs.get(ATTR_COLOR_TEMP_KELVIN)) is not None:
            low, high = self.min_color_temp_kelvin, self.max_color_temp_kelvin
            kwargs[ATTR_COLOR_TEMP_KELVIN] = min(max(kelvin, low), high)
        if (rgbww := kwargs.get(ATTR_RGBWW_COLOR)) is not None:
            kwargs[ATTR_RGBWW_COLOR] = tuple(min(max(channel, 0), 255) for channel in rgbww)
        self.call("turn_on", **kwargs)

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        self.call("turn_off", **kwargs)

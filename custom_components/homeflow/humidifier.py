"""Humidifiers and dehumidifiers of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.humidifier import (
    HumidifierAction,
    HumidifierEntity,
    HumidifierEntityFeature,
)
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
    """Add the home's humidifiers and dehumidifiers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowHumidifier(virtual, e) for e in virtual.entities_of("humidifier"))


class HomeFlowHumidifier(HomeFlowEntity, HumidifierEntity):
    """A twin humidifier or dehumidifier (its device class says which).

    Home Assistant checks the humidity range; the twin also refuses a mode the device lacks.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin humidifier, with its static modes, limits and step."""
        super().__init__(virtual, entry)
        caps = entry.capabilities
        self._attr_supported_features = HumidifierEntityFeature(entry.supported_features)
        self._attr_available_modes = caps.get("available_modes")
        self._attr_target_humidity_step = caps.get("target_humidity_step")
        # Where the twin's device type gives no limit, Home Assistant's defaults apply to both.
        for limit in ("min_humidity", "max_humidity"):
            if limit in caps:
                setattr(self, f"_attr_{limit}", caps[limit])

    @property
    @override
    def is_on(self) -> bool:
        """Whether the device is on."""
        return self.twin.state == "on"

    @property
    @override
    def action(self) -> HumidifierAction | None:
        """What the device is doing, if it reports it."""
        action = self.attribute.get("action")
        return HumidifierAction(action) if action else None

    @property
    @override
    def current_humidity(self) -> float | None:
        """The room humidity the device reads."""
        return self.attribute.get("current_humidity")

    @property
    @override
    def target_humidity(self) -> float | None:
        """The target humidity."""
        return self.attribute.get("humidity")

    @property
    @override
    def mode(self) -> str | None:
        """The mode."""
        return self.attribute.get("mode")

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn on."""
        self.call("turn_on", **kwargs)

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        self.call("turn_off", **kwargs)

    @override
    async def async_toggle(self, **kwargs: Any) -> None:
        """Off if on, else on: Home Assistant's toggle, applied by the twin in one call."""
        self.call("toggle", **kwargs)

    @override
    async def async_set_humidity(self, humidity: int) -> None:
        """Set the target humidity."""
        self.call("set_humidity", humidity=humidity)

    @override
    async def async_set_mode(self, mode: str) -> None:
        """Switch mode."""
        self.call("set_mode", mode=mode)

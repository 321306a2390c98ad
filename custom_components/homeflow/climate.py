"""Thermostats, air conditioners and heat pumps of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.climate import (
    ClimateEntity,
    ClimateEntityFeature,
    HVACAction,
    HVACMode,
)
from homeassistant.const import PRECISION_TENTHS, UnitOfTemperature
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
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
    """Add the home's climate devices."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowClimate(virtual, e) for e in virtual.entities_of("climate"))


class HomeFlowClimate(HomeFlowEntity, ClimateEntity):
    """A twin climate device: Home Assistant validates each call, the twin applies it.

    Temperatures are Celsius, shown to a tenth as the twin stores them (not rounded to the
    device's step, which is only what the user interface offers).
    """

    _attr_temperature_unit = UnitOfTemperature.CELSIUS
    _attr_precision = PRECISION_TENTHS

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin climate entity, with its static modes, limits and steps."""
        super().__init__(virtual, entry)
        caps = entry.capabilities
        self._attr_supported_features = ClimateEntityFeature(entry.supported_features)
        self._attr_hvac_modes = [HVACMode(mode) for mode in caps.get("hvac_modes") or ()]
        self._attr_fan_modes = caps.get("fan_modes")
        self._attr_preset_modes = caps.get("preset_modes")
        self._attr_swing_modes = caps.get("swing_modes")
        self._attr_swing_horizontal_modes = caps.get("swing_horizontal_modes")
        self._attr_target_temperature_step = caps.get("target_temp_step")
        self._attr_target_humidity_step = caps.get("target_humidity_step")
        # Where the twin's device type gives no limit, Home Assistant's defaults apply to both.
        for limit in ("min_temp", "max_temp", "min_humidity", "max_humidity"):
            if limit in caps:
                setattr(self, f"_attr_{limit}", caps[limit])

    @property
    @override
    def hvac_mode(self) -> HVACMode | None:
        """The twin's HVAC mode, which is the entity's state; None (unknown) if the twin's state
        is not a mode ("unavailable" in an imported home)."""
        state = self.twin.state
        return HVACMode(state) if state in HVACMode else None

    @property
    @override
    def hvac_action(self) -> HVACAction | None:
        """What the twin device is doing, if it reports an action Home Assistant knows."""
        action = self.attribute.get("hvac_action")
        return HVACAction(action) if action in HVACAction else None

    @property
    @override
    def current_temperature(self) -> float | None:
        """The room temperature the twin device reads."""
        return self.attribute.get("current_temperature")

    @property
    @override
    def target_temperature(self) -> float | None:
        """The single target (None while a dual thermostat shows its range)."""
        return self.attribute.get("temperature")

    @property
    @override
    def target_temperature_high(self) -> float | None:
        """The top of the target range."""
        return self.attribute.get("target_temp_high")

    @property
    @override
    def target_temperature_low(self) -> float | None:
        """The bottom of the target range."""
        return self.attribute.get("target_temp_low")

    @property
    @override
    def current_humidity(self) -> float | None:
        """The room humidity the twin device reads, if it has a sensor."""
        return self.attribute.get("current_humidity")

    @property
    @override
    def target_humidity(self) -> float | None:
        """The target humidity."""
        return self.attribute.get("humidity")

    @property
    @override
    def fan_mode(self) -> str | None:
        """The fan mode."""
        return self.attribute.get("fan_mode")

    @property
    @override
    def preset_mode(self) -> str | None:
        """The preset mode."""
        return self.attribute.get("preset_mode")

    @property
    @override
    def swing_mode(self) -> str | None:
        """The vertical swing mode."""
        return self.attribute.get("swing_mode")

    @property
    @override
    def swing_horizontal_mode(self) -> str | None:
        """The horizontal swing mode."""
        return self.attribute.get("swing_horizontal_mode")

    @override
    async def async_set_hvac_mode(self, hvac_mode: HVACMode) -> None:
        """Set the HVAC mode."""
        self.call("set_hvac_mode", hvac_mode=hvac_mode)

    @override
    async def async_set_temperature(self, **kwargs: Any) -> None:
        """Set the target temperature or range, and the mode if given.

        Home Assistant hands over the whole call's data; the target fields are not the twin's.
        """
        self.call(
            "set_temperature",
            **{key: value for key, value in kwargs.items() if key not in cv.ENTITY_SERVICE_FIELDS},
        )

    @override
    async def async_set_humidity(self, humidity: int) -> None:
        """Set the target humidity."""
        self.call("set_humidity", humidity=humidity)

    @override
    async def async_set_fan_mode(self, fan_mode: str) -> None:
        """Set the fan mode."""
        self.call("set_fan_mode", fan_mode=fan_mode)

    @override
    async def async_set_preset_mode(self, preset_mode: str) -> None:
        """Set the preset mode."""
        self.call("set_preset_mode", preset_mode=preset_mode)

    @override
    async def async_set_swing_mode(self, swing_mode: str) -> None:
        """Set the vertical swing mode."""
        self.call("set_swing_mode", swing_mode=swing_mode)

    @override
    async def async_set_swing_horizontal_mode(self, swing_horizontal_mode: str) -> None:
        """Set the horizontal swing mode."""
        self.call("set_swing_horizontal_mode", swing_horizontal_mode=swing_horizontal_mode)

    @override
    async def async_turn_on(self) -> None:
        """Turn on into the mode the twin device was in before it was turned off."""
        self.call("turn_on")

    @override
    async def async_turn_off(self) -> None:
        """Turn off."""
        self.call("turn_off")

    @override
    async def async_toggle(self) -> None:
        """Turn on when off, else off: Home Assistant's toggle, applied by the twin in one call."""
        self.call("toggle")

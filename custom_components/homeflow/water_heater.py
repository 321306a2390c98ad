"""Hot-water tanks of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.water_heater import WaterHeaterEntity, WaterHeaterEntityFeature
from homeassistant.const import PRECISION_TENTHS, STATE_ON, UnitOfTemperature
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
    """Add the home's water heaters."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowWaterHeater(virtual, e) for e in virtual.entities_of("water_heater"))


class HomeFlowWaterHeater(HomeFlowEntity, WaterHeaterEntity):
    """A twin water heater; its state is the operation mode.

    Home Assistant checks only the operation mode; the twin refuses a target outside
    min_temp..max_temp, as a real tank does. Temperatures are Celsius, shown to a tenth.
    """

    _attr_temperature_unit = UnitOfTemperature.CELSIUS
    _attr_precision = PRECISION_TENTHS

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin water heater, with its static operation list, limits and step."""
        super().__init__(virtual, entry)
        caps = entry.capabilities
        self._attr_supported_features = WaterHeaterEntityFeature(entry.supported_features)
        self._attr_operation_list = caps.get("operation_list")
        self._attr_target_temperature_step = caps.get("target_temp_step")
        # Where the twin's device type gives no limit, Home Assistant's defaults apply to both.
        for limit in ("min_temp", "max_temp"):
            if limit in caps:
                setattr(self, f"_attr_{limit}", caps[limit])

    @property
    @override
    def current_operation(self) -> str:
        """The twin's operation mode, which is the entity's state."""
        return self.twin.state

    @property
    @override
    def current_temperature(self) -> float | None:
        """The water temperature."""
        return self.attribute.get("current_temperature")

    @property
    @override
    def target_temperature(self) -> float | None:
        """The target water temperature."""
        return self.attribute.get("temperature")

    @property
    @override
    def target_temperature_high(self) -> float | None:
        """The top of the target range, for tanks that have one."""
        return self.attribute.get("target_temp_high")

    @property
    @override
    def target_temperature_low(self) -> float | None:
        """The bottom of the target range, for tanks that have one."""
        return self.attribute.get("target_temp_low")

    @property
    @override
    def is_away_mode_on(self) -> bool:
        """Whether away mode is on."""
        return self.attribute.get("away_mode") == STATE_ON

    @override
    async def async_set_temperature(self, **kwargs: Any) -> None:
        """Set the target temperature, and the operation mode if given.

        Home Assistant hands over the whole call's data; the target fields are not the twin's.
        """
        self.call(
            "set_temperature",
            **{key: value for key, value in kwargs.items() if key not in cv.ENTITY_SERVICE_FIELDS},
        )

    @override
    async def async_set_operation_mode(self, operation_mode: str) -> None:
        """Set the operation mode."""
        self.call("set_operation_mode", operation_mode=operation_mode)

    @override
    async def async_turn_away_mode_on(self) -> None:
        """Turn away mode on."""
        self.call("set_away_mode", away_mode=True)

    @override
    async def async_turn_away_mode_off(self) -> None:
        """Turn away mode off."""
        self.call("set_away_mode", away_mode=False)

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn on into the mode the twin tank was in before it was turned off."""
        self.call("turn_on", **kwargs)

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn off."""
        self.call("turn_off", **kwargs)

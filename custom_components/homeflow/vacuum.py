"""Robot vacuums of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.vacuum import (
    StateVacuumEntity,
    VacuumActivity,
    VacuumEntityFeature,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.vacuum import ATTR_FAN_SPEED, ATTR_FAN_SPEED_LIST
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

_ACTIVITIES = {activity.value: activity for activity in VacuumActivity}

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's robot vacuums."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowVacuum(virtual, e) for e in virtual.entities_of("vacuum"))


class HomeFlowVacuum(HomeFlowEntity, StateVacuumEntity):
    """A twin robot vacuum; reaching the dock after return_to_base is the simulation's doing."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin vacuum, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = VacuumEntityFeature(entry.supported_features)

    @property
    @override
    def activity(self) -> VacuumActivity | None:
        """What the robot does; None (unknown) if the twin's state is not an activity."""
        return _ACTIVITIES.get(self.twin.state)

    @property
    @override
    def fan_speed(self) -> str | None:
        """The suction level."""
        return self.attribute.get(ATTR_FAN_SPEED)

    @property
    @override
    def fan_speed_list(self) -> list[str]:
        """The suction levels the robot offers."""
        speeds: list[str] = self.attribute.get(ATTR_FAN_SPEED_LIST, [])
        return speeds

    @override
    async def async_start(self) -> None:
        """Start cleaning, or resume."""
        self.call("start")

    @override
    async def async_pause(self) -> None:
        """Pause cleaning."""
        self.call("pause")

    @override
    async def async_stop(self, **kwargs: Any) -> None:
        """Stop where it is."""
        self.call("stop", **kwargs)

    @override
    async def async_return_to_base(self, **kwargs: Any) -> None:
        """Head for the dock."""
        self.call("return_to_base", **kwargs)

    @override
    async def async_clean_spot(self, **kwargs: Any) -> None:
        """Clean around where it is."""
        self.call("clean_spot", **kwargs)

    @override
    async def async_locate(self, **kwargs: Any) -> None:
        """Beep to be found."""
        self.call("locate", **kwargs)

    @override
    async def async_set_fan_speed(self, fan_speed: str, **kwargs: Any) -> None:
        """Set the suction; the twin refuses a speed the robot does not have."""
        self.call("set_fan_speed", fan_speed=fan_speed, **kwargs)

    @override
    async def async_send_command(
        self,
        command: str,
        params: dict[str, Any] | list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Pass a vendor command on, with its parameters if any."""
        if params is not None:
            kwargs["params"] = params
        self.call("send_command", command=command, **kwargs)

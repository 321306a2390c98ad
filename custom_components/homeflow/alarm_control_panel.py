"""Alarm panels of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.alarm_control_panel import (
    AlarmControlPanelEntity,
    AlarmControlPanelEntityFeature,
    AlarmControlPanelState,
    CodeFormat,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.alarm_control_panel import (
    ATTR_CHANGED_BY,
    ATTR_CODE_ARM_REQUIRED,
    ATTR_CODE_FORMAT,
)
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

_STATES = {state.value: state for state in AlarmControlPanelState}

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's alarm panels."""
    virtual = entry.runtime_data
    async_add_entities(
        HomeFlowAlarmPanel(virtual, e) for e in virtual.entities_of("alarm_control_panel")
    )


class HomeFlowAlarmPanel(HomeFlowEntity, AlarmControlPanelEntity):
    """A twin alarm panel.

    Home Assistant puts in the user's default code, and refuses to arm without a code a panel
    that requires one, before the twin sees the call; the twin checks that again, as it does for
    its own callers.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin panel, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = AlarmControlPanelEntityFeature(entry.supported_features)

    @property
    @override
    def alarm_state(self) -> AlarmControlPanelState | None:
        """The panel's state; None (unknown) if the twin's is no alarm state."""
        return _STATES.get(self.twin.state)

    @property
    @override
    def code_format(self) -> CodeFormat | None:
        """Which keypad a user interface shows, if the panel takes a code."""
        code_format = self.attribute.get(ATTR_CODE_FORMAT)
        return None if code_format is None else CodeFormat(code_format)

    @property
    @override
    def code_arm_required(self) -> bool:
        """Whether arming needs a code."""
        return bool(self.attribute.get(ATTR_CODE_ARM_REQUIRED, True))

    @property
    @override
    def changed_by(self) -> str | None:
        """Who last changed the panel's state, as the panel reports it."""
        return self.attribute.get(ATTR_CHANGED_BY)

    def _call_with(self, service: str, code: str | None) -> None:
        """Apply a panel service, with the code if there is one."""
        self.call(service, **({"code": code} if code else {}))

    @override
    async def async_alarm_disarm(self, code: str | None = None) -> None:
        """Disarm."""
        self._call_with("alarm_disarm", code)

    @override
    async def async_alarm_arm_home(self, code: str | None = None) -> None:
        """Arm in home mode."""
        self._call_with("alarm_arm_home", code)

    @override
    async def async_alarm_arm_away(self, code: str | None = None) -> None:
        """Arm in away mode."""
        self._call_with("alarm_arm_away", code)

    @override
    async def async_alarm_arm_night(self, code: str | None = None) -> None:
        """Arm in night mode."""
        self._call_with("alarm_arm_night", code)

    @override
    async def async_alarm_arm_vacation(self, code: str | None = None) -> None:
        """Arm in vacation mode."""
        self._call_with("alarm_arm_vacation", code)

    @override
    async def async_alarm_arm_custom_bypass(self, code: str | None = None) -> None:
        """Arm with a custom bypass."""
        self._call_with("alarm_arm_custom_bypass", code)

    @override
    async def async_alarm_trigger(self, code: str | None = None) -> None:
        """Sound the alarm."""
        self._call_with("alarm_trigger", code)

"""Buttons of a virtual home."""

from __future__ import annotations

from typing import override

from homeassistant.components.button import ButtonEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity, time_shown

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's buttons."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowButton(virtual, e) for e in virtual.entities_of("button"))


class HomeFlowButton(HomeFlowEntity, ButtonEntity):
    """A twin button."""

    @property  # type: ignore[misc]
    @override
    def state(self) -> str | None:
        """The twin's last press, on the twin's clock (ButtonEntity's would be Home Assistant's
        own, which a home's clock need not keep)."""
        return time_shown(self.twin)

    @override
    async def async_press(self) -> None:
        """Press the button."""
        self.call("press")

"""Scenes of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.scene import Scene
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
    """Add the home's scenes."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowScene(virtual, e) for e in virtual.entities_of("scene"))


class HomeFlowScene(HomeFlowEntity, Scene):
    """A twin scene: activating it changes only its own state, as in the twin."""

    @property  # type: ignore[misc]
    @override
    def state(self) -> str | None:
        """The twin's last activation, on the twin's clock (Scene's would be Home Assistant's
        own, which a home's clock need not keep)."""
        return time_shown(self.twin)

    @override
    async def async_activate(self, **kwargs: Any) -> None:
        """Activate the scene, with the transition if one is given."""
        self.call("turn_on", **kwargs)

"""input_select helpers of a virtual home, in Home Assistant's input_select component."""

from __future__ import annotations

from typing import override

from homeassistant.components.select import SelectEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains import input_select as twin_select

from . import HomeFlowConfigEntry
from .helper import HomeFlowHelper

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's input_select helpers."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowInputSelect(virtual, e) for e in virtual.entities_of("input_select"))


class HomeFlowInputSelect(HomeFlowHelper, SelectEntity):
    """A twin input_select: a SelectEntity, as Home Assistant's InputSelect is.

    The input_select component calls `async_select_option` and `async_set_options`, which are the
    twin's; its select_first, select_last, select_next and select_previous run SelectEntity's
    own methods (final, as for InputSelect), which pick from the twin's options and select one
    through the twin, as the twin's services of the same names do.
    """

    EXTRA = (twin_select.ATTR_EDITABLE,)

    @property
    @override
    def options(self) -> list[str]:
        """The twin's options."""
        return list(self.attribute.get(twin_select.ATTR_OPTIONS) or ())

    @property
    @override
    def current_option(self) -> str | None:
        """The twin's state."""
        return self.twin.state

    @override
    async def async_select_option(self, option: str) -> None:
        """Select an option (the twin refuses one it lacks, as InputSelect does)."""
        self.call("select_option", option=option)

    async def async_set_options(self, options: list[str]) -> None:
        """Replace the options (the twin refuses duplicates, as InputSelect does)."""
        self.call("set_options", options=options)

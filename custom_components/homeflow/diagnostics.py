"""Diagnostics of a virtual home: how it was made, its size, its clock, its goal, its registry ids.

Nothing in a home is secret, so nothing is redacted; an imported home's text is summarised by its
length, since it can run to thousands of lines.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from . import HomeFlowConfigEntry
from .const import CONF_HOME


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: HomeFlowConfigEntry
) -> dict[str, Any]:
    """The home's description, counts, simulation time, goal and registry ids."""
    virtual = entry.runtime_data
    home = virtual.home
    data = {key: value for key, value in entry.data.items() if key != CONF_HOME}
    if CONF_HOME in entry.data:
        data["home_length"] = len(entry.data[CONF_HOME])
    return {
        "data": data,
        "options": dict(entry.options),
        "counts": {
            "floors": len(home.floors),
            "areas": len(home.areas),
            "devices": len(home.devices),
            "entities": dict(sorted(Counter(e.domain for e in home.entities.values()).items())),
        },
        "time": dt_util.utc_from_timestamp(home.now).isoformat(),
        "goal": virtual.verify(),
        "registry_ids": virtual.registry_ids,
    }

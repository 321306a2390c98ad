"""The integration's actions on a whole home: set and verify a goal, reset, advance time, export.

Each action names its home by config entry, as Home Assistant's own integrations do, and fails
with a translated ServiceValidationError when that entry is not a loaded HomeFlow home.
"""

from __future__ import annotations

import probatio
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import ATTR_CONFIG_ENTRY_ID
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
    callback,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers import service
from homeassistant.helpers.selector import ConfigEntrySelector

from twin.errors import ConditionError
from twin.homefile import dump_home, export_ha_snapshot

from .const import DOMAIN
from .virtual_home import VirtualHome

SERVICE_SET_GOAL = "set_goal"
SERVICE_VERIFY = "verify"
SERVICE_RESET = "reset"
SERVICE_ADVANCE_TIME = "advance_time"
SERVICE_EXPORT_SNAPSHOT = "export_snapshot"

ATTR_CONDITIONS = "conditions"
ATTR_SECONDS = "seconds"
ATTR_FORMAT = "format"
FORMAT_HOME_FILE = "home_file"
FORMAT_HA_SNAPSHOT = "ha_snapshot"
MAX_ADVANCE = 7 * 24 * 3600  # a week of simulated time in one call

_HOME = {probatio.Required(ATTR_CONFIG_ENTRY_ID): ConfigEntrySelector({"integration": DOMAIN})}
HOME_SCHEMA = probatio.Schema(_HOME)
SET_GOAL_SCHEMA = probatio.Schema(
    {
        **_HOME,
        probatio.Required(ATTR_CONDITIONS): probatio.All(
            cv.ensure_list, [cv.string], probatio.Length(min=1)
        ),
    }
)
ADVANCE_TIME_SCHEMA = probatio.Schema(
    {
        **_HOME,
        probatio.Required(ATTR_SECONDS): probatio.All(
            probatio.Coerce(int), probatio.Range(min=1, max=MAX_ADVANCE)
        ),
    }
)
EXPORT_SNAPSHOT_SCHEMA = probatio.Schema(
    {
        **_HOME,
        probatio.Optional(ATTR_FORMAT, default=FORMAT_HOME_FILE): probatio.In(
            [FORMAT_HOME_FILE, FORMAT_HA_SNAPSHOT]
        ),
    }
)


def _virtual_home(call: ServiceCall) -> VirtualHome:
    """The loaded home the call names."""
    entry: ConfigEntry[VirtualHome] = service.async_get_config_entry(
        call.hass, DOMAIN, call.data[ATTR_CONFIG_ENTRY_ID]
    )
    return entry.runtime_data


async def _async_set_goal(call: ServiceCall) -> None:
    """Give the home a goal; the current state is the task's start."""
    try:
        _virtual_home(call).set_goal(call.data[ATTR_CONDITIONS])
    except ConditionError as err:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="invalid_condition",
            translation_placeholders={"error": str(err)},
        ) from err


async def _async_verify(call: ServiceCall) -> ServiceResponse:
    """Check the goal: each condition, whether all hold, and what else changed since it was set."""
    if (report := _virtual_home(call).verify()) is None:
        raise ServiceValidationError(translation_domain=DOMAIN, translation_key="no_goal")
    return report


async def _async_reset(call: ServiceCall) -> None:
    """Put the home back in its initial state."""
    await _virtual_home(call).async_reset()


async def _async_advance_time(call: ServiceCall) -> None:
    """Run the home's physics for the given simulated seconds now."""
    _virtual_home(call).advance(call.data[ATTR_SECONDS])


async def _async_export_snapshot(call: ServiceCall) -> ServiceResponse:
    """The home as a home file (YAML text) or a Home Assistant snapshot, either importable."""
    virtual = _virtual_home(call)
    export = dump_home if call.data[ATTR_FORMAT] == FORMAT_HOME_FILE else export_ha_snapshot
    # A copy, so that the home may change while the export is written in the executor.
    return {"home": await call.hass.async_add_executor_job(export, virtual.home.copy())}


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the actions."""
    hass.services.async_register(DOMAIN, SERVICE_SET_GOAL, _async_set_goal, SET_GOAL_SCHEMA)
    hass.services.async_register(
        DOMAIN,
        SERVICE_VERIFY,
        _async_verify,
        HOME_SCHEMA,
        supports_response=SupportsResponse.ONLY,
    )
    hass.services.async_register(DOMAIN, SERVICE_RESET, _async_reset, HOME_SCHEMA)
    hass.services.async_register(
        DOMAIN, SERVICE_ADVANCE_TIME, _async_advance_time, ADVANCE_TIME_SCHEMA
    )
    hass.services.async_register(
        DOMAIN,
        SERVICE_EXPORT_SNAPSHOT,
        _async_export_snapshot,
        EXPORT_SNAPSHOT_SCHEMA,
        supports_response=SupportsResponse.ONLY,
    )

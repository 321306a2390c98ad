"""Scripts of a virtual home, in Home Assistant's script component.

A twin script is an opaque action that ends at once (twin.domains.script): running it through
Home Assistant (script.turn_on, script.toggle, or the script's own action `script.<object_id>`)
runs it in the twin, which marks last_triggered; it fires `script_started`, as every script does.

One difference remains: Home Assistant names a script's own action by its registry unique id (a
real script's key, so `script.<object_id>`), and Assist's script tools call that name. A home's
script has HomeFlow's unique id (the entry's and the twin id), so its action is offered by its
object id, as users and automations call it, and a home's script exposed to Assist is listed as a
tool whose call finds no action. HomeFlow's own LLM API calls script.turn_on instead, which its
auditor's default policy refuses (ActionPolicy(scripts=True) allows it).
"""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.script import DOMAIN, SCRIPT_SERVICE_SCHEMA, BaseScriptEntity
from homeassistant.components.script.const import EVENT_SCRIPT_STARTED
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import ATTR_ENTITY_ID, ATTR_NAME
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.service import async_set_service_schema
from homeassistant.util import dt as dt_util

from twin.domains import script as twin_script

from . import HomeFlowConfigEntry
from .helper import HomeFlowHelper

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's scripts."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowScript(virtual, e) for e in virtual.entities_of("script"))


def _nothing(script: HomeFlowScript) -> set[str]:
    return set()


class HomeFlowScript(HomeFlowHelper, BaseScriptEntity):
    """A twin script: a BaseScriptEntity with no sequence of its own, whose runs are the twin's.

    It references nothing (its sequence is the twin's secret) and has no configuration to show.
    """

    EXTRA = (
        twin_script.ATTR_MODE,
        twin_script.ATTR_CURRENT,
        twin_script.ATTR_MAX,
        twin_script.ATTR_LAST_ACTION,
    )
    raw_config = None
    _service: str | None = None

    # What the sequence acts on, which Home Assistant's searches read: nothing it can see.
    referenced_labels = referenced_floors = referenced_areas = property(_nothing)
    referenced_devices = referenced_entities = property(_nothing)
    referenced_blueprint = None

    @property
    @override
    def extra_state_attributes(self) -> dict[str, Any]:
        """The script's attributes; last_triggered a datetime, as Home Assistant's Script has it."""
        triggered = self.attribute.get(twin_script.ATTR_LAST_TRIGGERED)
        return {
            twin_script.ATTR_LAST_TRIGGERED: triggered and dt_util.parse_datetime(triggered),
            **super().extra_state_attributes,
        }

    @property
    @override
    def is_on(self) -> bool:
        """Whether a run is going (only an imported script's)."""
        return self.twin.state == "on"

    @override
    async def async_turn_on(self, **kwargs: Any) -> None:
        """Run the script with the call's variables (script.turn_on's and script.toggle's)."""
        if (context := kwargs.get("context")) is not None:
            self.async_set_context(context)
        self._run(kwargs.get(twin_script.ATTR_VARIABLES))

    @override
    async def async_turn_off(self, **kwargs: Any) -> None:
        """Stop its runs."""
        self.call("turn_off")

    def _run(self, variables: dict[str, Any] | None) -> None:
        self.hass.bus.async_fire(
            EVENT_SCRIPT_STARTED,
            {ATTR_NAME: self.name, ATTR_ENTITY_ID: self.entity_id},
            context=self._context,
        )
        data = {} if variables is None else {twin_script.ATTR_VARIABLES: dict(variables)}
        self.call("turn_on", **data)

    async def _service_handler(self, call: ServiceCall) -> ServiceResponse:
        """`script.<object_id>`: run it with the call's data as its variables."""
        self.async_set_context(call.context)
        self._run(dict(call.data))
        return {} if call.return_response else None

    @override
    async def async_added_to_hass(self) -> None:
        """Offer the script's own action, as a real script does, unless that name is taken (by
        a script of the same name, or one of the domain's actions)."""
        await super().async_added_to_hass()
        name = self.entity_id.partition(".")[2]
        if self.hass.services.has_service(DOMAIN, name):
            return
        self._service = name
        self.hass.services.async_register(
            DOMAIN,
            name,
            self._service_handler,
            schema=SCRIPT_SERVICE_SCHEMA,
            supports_response=SupportsResponse.OPTIONAL,
        )
        description = {"name": self.name, "description": "", "fields": {}}
        async_set_service_schema(self.hass, DOMAIN, name, description)

    @override
    async def async_remove(self, *, force_remove: bool = False) -> None:
        """Leave Home Assistant. The script component's reload (run whenever a script is saved
        in the UI) removes every script its configuration lacks, the home's too: one removed so,
        while its home is loaded and its registry entry is as it was, comes straight back."""
        await super().async_remove(force_remove=force_remove)
        entry = self.platform.config_entry
        if force_remove or entry is None or entry.state is not ConfigEntryState.LOADED:
            return
        registered = er.async_get(self.hass).async_get(self.entity_id)
        twin_entry = self.virtual.home.entities.get(self.twin_id)
        if registered is None or registered.disabled or twin_entry is None:
            return
        await self.platform.async_add_entities([HomeFlowScript(self.virtual, twin_entry)])

    @override
    async def async_will_remove_from_hass(self) -> None:
        """Withdraw the script's action with it."""
        if self._service is not None:
            self.hass.services.async_remove(DOMAIN, self._service)
        await super().async_will_remove_from_hass()

"""The agent's tools inside Home Assistant: HomeFlow's tool surface run directly on `hass`.

Results are those of the twin and the REST backends: twin.surface reads the same state dicts and
registry rows, in a HomeAssistantView, and call_service reports as the REST backend does. The
agent sees only the entities exposed to its assistant (an unexposed one is an unknown one), may
call only the auditor policy's actions (sensitive ones once the user has confirmed them in the
conversation, twin.confirmation), and has no pyexec.
"""

import json
from collections.abc import Mapping
from typing import Any

import probatio
from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import Context, Event, EventStateChangedData, HomeAssistant, State, callback
from homeassistant.exceptions import HomeAssistantError, ServiceNotFound, ServiceValidationError
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import floor_registry as fr
from homeassistant.helpers.target import TargetSelection, async_extract_referenced_entity_ids

from agent.backends.home_assistant import (
    named_entities,
    refused_by_name,
    refused_on,
    registry_ids,
    run_tool_on,
    service_error,
    unknown_target,
)
from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.confirmation import Confirmation
from twin.domains import responder
from twin.errors import ServiceNotFoundError
from twin.home import CROSS_DOMAIN
from twin.surface import (
    FloorLayout,
    HomeAssistantState,
    HomeAssistantView,
    Result,
    all_states,
    compact,
    describe,
    error,
    get_state,
    layout,
    list_entities,
    payload_error,
)
from twin.tools import TOOL_SCHEMAS
from twin.validation import valid_entity_id

# The target keys that reach entities through registries (label_id only through `data`).
INDIRECT_KEYS = ("device_id", "area_id", "floor_id", "label_id")


class HassBackend:
    """Runs tool calls on `hass` for `assistant`, whose exposed entities are the agent's home.

    Actions run in a child of `context` (the conversation's), judged by the auditor's `policy`
    and the conversation's `confirmation` of sensitive actions (a fresh one unless given).
    """

    def __init__(
        self,
        hass: HomeAssistant,
        *,
        assistant: str = "conversation",
        context: Context | None = None,
        policy: ActionPolicy = DEFAULT_POLICY,
        confirmation: Confirmation | None = None,
    ) -> None:
        """Keep what every call needs."""
        self.hass = hass
        self.assistant = assistant
        self.context = context
        self.policy = policy
        self.confirmation = confirmation if confirmation is not None else Confirmation()
        self._schemas = [s for s in TOOL_SCHEMAS if s["function"]["name"] != "pyexec"]

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The twin's tools but pyexec, in the OpenAI tools format."""
        return list(self._schemas)

    async def run_tool(self, name: str, arguments: dict[str, Any] | str | None) -> Result:
        """Run one tool call, its arguments checked as the twin checks them."""
        return await run_tool_on(self, self._schemas, name, arguments)

    # --- the tools -----------------------------------------------------------------------------

    async def list_entities(
        self, area: str | None = None, floor: str | None = None, domain: str | None = None
    ) -> Result:
        """The exposed entities, sorted by id, in compact form (twin.surface)."""
        return list_entities(self._view(), area, floor, domain)

    async def get_state(self, entity_id: str) -> Result:
        """The exposed entity's state as the REST API gives it, with the twin's keys."""
        return get_state(HomeAssistantView(self._state(entity_id)), entity_id)

    async def describe(self, entity_id: str) -> Result:
        """The exposed entity's device manual, as the twin writes it."""
        states = self._state(entity_id)
        held = await self._held(entity_id) if states else {}
        return describe(HomeAssistantView(states, self._registries(), held), entity_id)

    async def call_service(
        self,
        domain: str,
        service: str,
        target: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Result:
        """Call an action the policy allows on exposed entities; the exposed states it changed.

        An area, floor or device that also holds unexposed entities of the action's domain is
        narrowed to its exposed ones, named by id.
        """
        if (mistyped := payload_error(target, data)) is not None:
            return mistyped
        if (refused := refused_by_name(self.policy, domain, service)) is not None:
            return refused
        if not self.hass.services.has_service(domain, service):
            return error(
                ServiceNotFoundError.code, f"Action {domain}.{service} not found; see describe"
            )
        body = {**(data or {}), **(target or {})}  # Home Assistant takes the target in the data
        view = self._view()
        if (unknown := unknown_target(view, body)) is not None:
            return unknown
        body, reached = self._narrowed(domain, body, set(view.states))
        if refused := refused_on(self.policy, self.confirmation, domain, service, view, reached):
            return refused
        changed: list[State] = []
        context = Context(
            user_id=self.context.user_id if self.context else None,
            parent_id=self.context.id if self.context else None,
        )

        @callback
        def _collect(event: Event[EventStateChangedData]) -> None:
            """Keep the states this call changed, as the REST API reports them."""
            if event.context is context and (state := event.data["new_state"]) is not None:
                changed.append(state)

        unsubscribe = self.hass.bus.async_listen(EVENT_STATE_CHANGED, _collect)
        try:
            await self.hass.services.async_call(
                domain, service, body, blocking=True, context=context
            )
        except probatio.Invalid, ServiceNotFound:
            return service_error(400, None)
        except ServiceValidationError as err:
            return service_error(400, {"message": str(err)})
        except HomeAssistantError as err:
            return service_error(500, {"message": str(err)})
        finally:
            unsubscribe()
        return {
            "success": True,
            "changed": [
                compact(view, HomeAssistantState(_as_dict(state)))
                for state in changed
                if self._exposed(state.entity_id)
            ],
        }

    # --- the protocol's views ------------------------------------------------------------------

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every exposed entity's state, with the twin's keys."""
        return all_states(HomeAssistantView(self._states()))

    async def layout(self) -> tuple[FloorLayout, ...]:
        """The exposed entities by floor and area (twin.surface.layout)."""
        return layout(self._view())

    # --- Home Assistant ------------------------------------------------------------------------

    def _exposed(self, entity_id: str) -> bool:
        return async_should_expose(self.hass, self.assistant, entity_id)

    def _state(self, entity_id: str) -> list[dict[str, Any]]:
        """The exposed entity's state dict; none for an unknown or unexposed entity."""
        if not valid_entity_id(entity_id) or not self._exposed(entity_id):
            return []
        state = self.hass.states.get(entity_id)
        return [] if state is None else [_as_dict(state)]

    async def _held(self, entity_id: str) -> dict[str, dict[str, Any]]:
        """What the entity holds beyond its state, from the service that answers with it
        (twin.domains.responder: a to-do list's items); none where it has none or refuses."""
        domain = entity_id.partition(".")[0]
        if (answers := responder(domain)) is None:
            return {}
        service, key = answers
        try:
            answer = await self.hass.services.async_call(
                domain, service, {"entity_id": entity_id}, blocking=True, return_response=True
            )
        except HomeAssistantError:
            return {}
        held: Any = answer[entity_id][key] if answer else []
        return {entity_id: {key: held}}

    def _states(self) -> list[dict[str, Any]]:
        return [_as_dict(s) for s in self.hass.states.async_all() if self._exposed(s.entity_id)]

    def _view(self) -> HomeAssistantView:
        """The exposed entities' states, and the registries."""
        return HomeAssistantView(self._states(), self._registries())

    def _registries(self) -> dict[str, list[dict[str, Any]]]:
        """The registries' rows with the fields of their WebSocket lists that the helpers read."""
        return {
            "floor": [
                {"floor_id": f.floor_id, "name": f.name, "level": f.level}
                for f in fr.async_get(self.hass).async_list_floors()
            ],
            "area": [
                {"area_id": a.id, "name": a.name, "floor_id": a.floor_id}
                for a in ar.async_get(self.hass).async_list_areas()
            ],
            "device": [
                {
                    "id": d.id,
                    "name": d.name,
                    "manufacturer": d.manufacturer,
                    "model": d.model,
                    "area_id": d.area_id,
                }
                for d in dr.async_get(self.hass).devices
            ],
            "entity": [
                {"entity_id": e.entity_id, "device_id": e.device_id, "area_id": e.area_id}
                for e in er.async_get(self.hass).entities.values()
            ],
        }

    def _narrowed(
        self, domain: str, body: dict[str, Any], exposed: set[str]
    ) -> tuple[dict[str, Any], set[str]]:
        """The call's data with its targets kept to exposed entities, and the entities it
        reaches: what Home Assistant reaches through devices, areas, floors, labels or "all"."""
        named = body.get("entity_id")
        explicit = set(named_entities(named))
        everything = isinstance(named, str) and named.strip().lower() == "all"
        if everything:
            indirect = set(self.hass.states.async_entity_ids())
        else:
            targets = {key: ids for key in INDIRECT_KEYS if (ids := registry_ids(body.get(key)))}
            selected = async_extract_referenced_entity_ids(self.hass, TargetSelection(targets))
            indirect = selected.indirectly_referenced
        indirect = {e for e in indirect if domain == CROSS_DOMAIN or e.startswith(f"{domain}.")}
        kept = explicit | (indirect & exposed)
        if not any(self.hass.states.get(e) is not None for e in indirect - exposed):
            return body, kept
        fields = {key: value for key, value in body.items() if key not in INDIRECT_KEYS}
        return {**fields, "entity_id": sorted(kept)}, kept


def _as_dict(state: State) -> dict[str, Any]:
    """A state as the REST API serialises it."""
    result: dict[str, Any] = json.loads(state.as_dict_json)
    return result

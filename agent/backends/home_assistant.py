"""The Home Assistant backend: the agent's tools over a running server's REST and WebSocket APIs.

Results are those of the twin backend: the reads are twin.surface's over a HomeAssistantView of
the server's states and registries, and call_service reports with the twin's compact entities and
error codes. Only aiohttp, the standard library and the twin are imported, so that it runs in Home
Assistant's environment as in the agent's. The token stays out of logs, reprs and error messages.
The auditor runs here, on the client: a call its policy refuses, by name or on an entity it
reaches, is not sent (`refused_by_name`, `refused_on`, which the integration's backend shares).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

import aiohttp

from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.confirmation import Confirmation, asked
from twin.confirmation import request as confirmation_request
from twin.domains import responder
from twin.errors import (
    EntityNotFoundError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TargetNotFoundError,
    TwinError,
)
from twin.home import CROSS_DOMAIN, Home
from twin.surface import (
    REGISTRIES,
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
from twin.targets import entity_not_found
from twin.tools import POLICY_CODES, TOOL_SCHEMAS, ToolCallError, tool_arguments
from twin.validation import valid_entity_id

from ..errors import AgentError

TIMEOUT = aiohttp.ClientTimeout(total=30)  # a request, or a WebSocket command, unanswered
# Home Assistant pings its WebSocket clients every 55 s: a connection silent for longer than this
# (seconds) is gone, and is made again.
SILENCE = 120.0
RECONNECT_DELAY = 1.0  # seconds between tries to make a dropped event connection again
# Target keys that name registry entries, and the registry.
TARGET_REGISTRIES = (("area_id", "area"), ("floor_id", "floor"), ("device_id", "device"))


class HomeAssistantRequestError(AgentError):
    """Home Assistant could not be reached or refused the token; the message says which."""


class HomeAssistantBackend:
    """Runs tool calls on the Home Assistant at `url` with a long-lived access `token`.

    An async context manager: one HTTP session and one WebSocket connection while it is open.
    `unix_socket` reaches a server through a unix socket (an abstract one starts with a NUL).
    Calls are judged by the auditor's `policy` and the conversation's `confirmation`.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        unix_socket: str | None = None,
        policy: ActionPolicy = DEFAULT_POLICY,
    ) -> None:
        self.url = url.rstrip("/")
        self.policy = policy
        self.confirmation = Confirmation()
        self._headers = {"Authorization": f"Bearer {token}"}
        self._token = token
        self._unix_socket = unix_socket
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._next_id = 0
        self._schemas = [s for s in TOOL_SCHEMAS if s["function"]["name"] != "pyexec"]

    def __repr__(self) -> str:
        return f"HomeAssistantBackend({self.url!r})"

    async def __aenter__(self) -> HomeAssistantBackend:
        connector = aiohttp.UnixConnector(self._unix_socket) if self._unix_socket else None
        self._session = aiohttp.ClientSession(connector=connector, timeout=TIMEOUT)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The twin's tools but pyexec, in the OpenAI tools format."""
        return list(self._schemas)

    async def run_tool(self, name: str, arguments: dict[str, Any] | str | None) -> Result:
        """Run one tool call on Home Assistant; arguments (a dict, or its JSON text as LLMs give
        it) are checked as the twin checks them."""
        return await run_tool_on(self, self._schemas, name, arguments)

    # --- the tools -----------------------------------------------------------------------------

    async def list_entities(
        self, area: str | None = None, floor: str | None = None, domain: str | None = None
    ) -> Result:
        """Every entity with a state, sorted by id, in compact form (twin.surface)."""
        view = HomeAssistantView(await self._states(), await self._registries())
        return list_entities(view, area, floor, domain)

    async def get_state(self, entity_id: str) -> Result:
        """The entity's state as the REST API gives it, with the twin's keys."""
        return get_state(HomeAssistantView(await self._state(entity_id)), entity_id)

    async def describe(self, entity_id: str) -> Result:
        """The device manual, written by the twin's manual (twin.surface)."""
        states = await self._state(entity_id)
        held = await self._held(entity_id) if states else {}
        return describe(HomeAssistantView(states, await self._registries(), held), entity_id)

    async def call_service(
        self,
        domain: str,
        service: str,
        target: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Result:
        """POST /api/services/<domain>/<service>; the states it changed, in compact form."""
        if (mistyped := payload_error(target, data)) is not None:
            return mistyped
        if (refused := refused_by_name(self.policy, domain, service)) is not None:
            return refused
        _, services = await self.request("GET", "/api/services")
        offered = {item["domain"]: item["services"] for item in services}
        if service not in offered.get(domain, {}):
            return error(
                ServiceNotFoundError.code, f"Action {domain}.{service} not found; see describe"
            )
        body = {**(data or {}), **(target or {})}  # Home Assistant takes the target in the data
        view = HomeAssistantView(await self._states(), await self._registries())
        if (unknown := unknown_target(view, body)) is not None:
            return unknown
        targets = reached(view, domain, body)
        if refused := refused_on(self.policy, self.confirmation, domain, service, view, targets):
            return refused
        status, answer = await self.request("POST", f"/api/services/{domain}/{service}", body)
        if status != 200:
            return service_error(status, answer)
        return {"success": True, "changed": [compact(view, HomeAssistantState(s)) for s in answer]}

    # --- the protocol's views ------------------------------------------------------------------

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every entity's state, with the twin's keys."""
        return all_states(HomeAssistantView(await self._states()))

    async def layout(self) -> tuple[FloorLayout, ...]:
        """Floors by level, areas by name, entities by id (twin.surface.layout)."""
        return layout(HomeAssistantView(await self._states(), await self._registries()))

    # --- transport -----------------------------------------------------------------------------

    async def _state(self, entity_id: str) -> list[dict[str, Any]]:
        """GET /api/states/<entity_id>: the entity's state, or none for an unknown entity or
        what is no entity id (kept out of the URL)."""
        if not valid_entity_id(entity_id):
            return []
        status, state = await self.request("GET", f"/api/states/{entity_id}")
        return [] if status == 404 else [state]

    async def _held(self, entity_id: str) -> dict[str, dict[str, Any]]:
        """What the entity holds beyond its state, from the service that answers with it
        (twin.domains.responder: a to-do list's items); none where it has none or refuses."""
        domain = entity_id.partition(".")[0]
        if (answers := responder(domain)) is None:
            return {}
        service, key = answers
        path = f"/api/services/{domain}/{service}?return_response"
        status, answer = await self.request("POST", path, {"entity_id": entity_id})
        if status != 200:
            return {}
        return {entity_id: {key: answer["service_response"][entity_id][key]}}

    async def _states(self) -> list[dict[str, Any]]:
        _, states = await self.request("GET", "/api/states")
        result: list[dict[str, Any]] = states
        return result

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One REST request with the token: the status and the JSON answer (None when it is not
        JSON); the tools' transport, and other clients' (the benchmark's config flows)."""
        if self._session is None:
            raise HomeAssistantRequestError(
                "use the backend as `async with HomeAssistantBackend(...)`"
            )
        try:
            async with self._session.request(
                method, self.url + path, json=body, headers=self._headers
            ) as response:
                if response.status == 401:
                    raise HomeAssistantRequestError(
                        f"Home Assistant at {self.url} refused the token"
                    )
                if response.content_type != "application/json":
                    return response.status, None
                return response.status, await response.json()
        except TimeoutError:
            raise HomeAssistantRequestError(
                f"Home Assistant at {self.url} did not answer {method} {path} within "
                f"{TIMEOUT.total:g} s"
            ) from None
        except aiohttp.ClientError as err:
            raise HomeAssistantRequestError(f"Home Assistant at {self.url}: {err}") from None

    async def _registries(self) -> dict[str, list[dict[str, Any]]]:
        """The floor, area, device and entity registries, from the WebSocket API."""
        return {kind: await self._command(f"config/{kind}_registry/list") for kind in REGISTRIES}

    async def _command(self, kind: str) -> Any:
        """One WebSocket command's result (the commands are reads); a connection that dropped or
        gave no answer within TIMEOUT is made again, once."""
        for attempt in (1, 2):
            try:
                async with asyncio.timeout(TIMEOUT.total):
                    answer = await self._exchange(kind)
            except (aiohttp.ClientError, ConnectionError, TimeoutError) as err:
                if self._ws is not None:
                    await self._ws.close()
                self._ws = None
                if attempt == 2:
                    reason = str(err) or f"no answer within {TIMEOUT.total:g} s"
                    raise HomeAssistantRequestError(
                        f"Home Assistant's WebSocket API: {reason}"
                    ) from None
                continue
            if not answer["success"]:
                raise HomeAssistantRequestError(f"WebSocket {kind} failed: {answer['error']}")
            return answer["result"]
        raise AssertionError("unreachable")

    async def _exchange(self, kind: str) -> dict[str, Any]:
        """Send one command on the shared connection (made if need be) and wait for its result."""
        ws = self._ws if self._ws is not None and not self._ws.closed else None
        if ws is None:
            ws = self._ws = await self._connect()
        self._next_id += 1
        await ws.send_json({"id": self._next_id, "type": kind})
        while True:
            message = await ws.receive()
            if message.type != aiohttp.WSMsgType.TEXT:
                raise ConnectionResetError(f"the WebSocket closed ({message.type.name})")
            answer: dict[str, Any] = message.json()
            if answer.get("id") == self._next_id and answer.get("type") == "result":
                return answer

    async def _connect(self) -> aiohttp.ClientWebSocketResponse:
        """A WebSocket connection, authenticated with the token."""
        if self._session is None:
            raise HomeAssistantRequestError(
                "use the backend as `async with HomeAssistantBackend(...)`"
            )
        timeout = aiohttp.ClientWSTimeout(ws_receive=SILENCE, ws_close=10.0)  # aiohttp's close
        ws = await self._session.ws_connect(self.url + "/api/websocket", timeout=timeout)
        await ws.receive_json()  # auth_required
        await ws.send_json({"type": "auth", "access_token": self._token})
        if (await ws.receive_json())["type"] != "auth_ok":
            await ws.close()
            raise HomeAssistantRequestError(f"Home Assistant at {self.url} refused the token")
        return ws

    # --- the mirror's link (twin.mirror.Link) --------------------------------------------------

    async def registry(self, kind: str) -> list[dict[str, Any]]:
        """One registry as config/<kind>_registry/list gives it: floor, area, device or entity."""
        result: list[dict[str, Any]] = await self._command(f"config/{kind}_registry/list")
        return result

    async def subscribe_events(
        self, event_types: Sequence[str], retry: float = RECONNECT_DELAY
    ) -> AsyncIterator[dict[str, Any] | None]:
        """Home Assistant's events of these types, on a WebSocket of their own: None once
        subscribed to all, then each event (`event_type`, `data`, `time_fired`...). A dropped
        connection is made again, tried every `retry` seconds, and None comes again: events in
        between are lost. No first connection, a refused token or a refused subscription raise
        HomeAssistantRequestError."""
        connected = False
        while True:
            try:
                ws = await self._connect()
            except (
                aiohttp.ClientError,
                ConnectionError,
                aiohttp.WSMessageTypeError,
                TimeoutError,
            ) as err:
                if not connected:
                    raise HomeAssistantRequestError(
                        f"Home Assistant at {self.url}: {err}"
                    ) from None
                await asyncio.sleep(retry)
                continue
            connected = True
            try:
                pending = set(range(1, len(event_types) + 1))
                for number, event_type in enumerate(event_types, 1):
                    command = {"id": number, "type": "subscribe_events", "event_type": event_type}
                    await ws.send_json(command)
                async for message in ws:
                    if message.type != aiohttp.WSMsgType.TEXT:
                        break
                    answer = message.json()
                    if answer.get("type") == "result":
                        if not answer["success"]:
                            raise HomeAssistantRequestError(
                                f"subscribe_events failed: {answer['error']}"
                            )
                        pending.discard(answer["id"])
                        if not pending:
                            yield None
                    elif answer.get("type") == "event" and not pending:
                        yield answer["event"]
            except (aiohttp.ClientError, ConnectionError, TimeoutError):
                pass  # dropped, or silent past SILENCE
            finally:
                await ws.close()
            await asyncio.sleep(retry)


class ToolCalls(Protocol):
    """A backend's tools as methods, which run_tool_on calls with checked arguments."""

    async def list_entities(
        self, area: str | None = None, floor: str | None = None, domain: str | None = None
    ) -> Result: ...

    async def get_state(self, entity_id: str) -> Result: ...

    async def describe(self, entity_id: str) -> Result: ...

    async def call_service(
        self,
        domain: str,
        service: str,
        target: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> Result: ...


async def run_tool_on(
    tools: ToolCalls,
    schemas: list[dict[str, Any]],
    name: str,
    arguments: dict[str, Any] | str | None,
) -> Result:
    """Run one tool call on `tools`, with the twin's checks of the name and the arguments (a
    dict, or its JSON text as LLMs give it) against `schemas`, the tools offered."""
    parameters = {s["function"]["name"]: s["function"]["parameters"] for s in schemas}
    try:
        arguments = tool_arguments(name, arguments, parameters)
    except ToolCallError as err:
        return err.result
    if name == "list_entities":
        return await tools.list_entities(**arguments)
    if name == "get_state":
        return await tools.get_state(arguments["entity_id"])
    if name == "describe":
        return await tools.describe(arguments["entity_id"])
    return await tools.call_service(**arguments)


def refused_by_name(policy: ActionPolicy, domain: str, service: str) -> Result | None:
    """The auditor's refusal of `domain.service` by its name alone, as the twin reports it."""
    verdict = policy.screen(Home(), domain, service)
    return error(verdict.code, verdict.message) if verdict.code in POLICY_CODES else None


def refused_on(
    policy: ActionPolicy,
    confirmation: Confirmation,
    domain: str,
    service: str,
    view: HomeAssistantView,
    entity_ids: Iterable[str],
) -> Result | None:
    """The auditor's refusal of the action on the entities a call reaches, each judged on a
    twin of it; the sensitive actions the user has not confirmed are asked about together (as
    the twin asks). None when the policy allows them all."""
    held: set[tuple[str, str]] = set()
    for entity_id in sorted(entity_ids):
        try:
            home = view.twin_of(entity_id)
        except TwinError:  # a domain the twin does not model, which no sensitive rule names
            continue
        target = {"entity_id": entity_id}
        verdict = policy.screen(home, domain, service, None, target, confirmation)
        if verdict.code == "confirmation_required":
            held |= asked(verdict.message)
        elif verdict.code in POLICY_CODES:
            return error(verdict.code, verdict.message)
    return error("confirmation_required", confirmation_request(held)) if held else None


def reached(view: HomeAssistantView, domain: str, body: Mapping[str, Any]) -> set[str]:
    """The entities a call reaches on Home Assistant, for the auditor: those it names, and those
    of its domain (of any, for homeassistant.*) in the areas, floors and devices it names; all of
    them for "all" or a label, which the view does not resolve (more, never fewer)."""
    named = body.get("entity_id")
    ids = set(named_entities(named))
    own = {e for e in view.states if domain == CROSS_DOMAIN or e.startswith(f"{domain}.")}
    if body.get("label_id") or (isinstance(named, str) and named.strip().lower() == "all"):
        return ids | own
    floors = set(registry_ids(body.get("floor_id")))
    areas = set(registry_ids(body.get("area_id")))
    areas |= {area.area_id for area in view.areas.values() if area.floor_id in floors}
    devices = set(registry_ids(body.get("device_id")))
    return ids | {e for e in own if view.area_of(e) in areas or view.device_of(e) in devices}


def registry_ids(value: Any) -> list[str]:
    """Registry ids as Home Assistant reads a target's value; none for what it will refuse."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return []


def unknown_target(view: HomeAssistantView, body: Mapping[str, Any]) -> Result | None:
    """The twin's error for a target that names an entity, area, floor or device the home
    lacks (Home Assistant skips it and succeeds); None when all exist."""
    for entity_id in named_entities(body.get("entity_id")):
        if entity_id not in view.states:
            return error(EntityNotFoundError.code, str(entity_not_found(entity_id)))
    registries: dict[str, Mapping[str, Any]] = {
        "area": view.areas,
        "floor": view.floors,
        "device": view.devices,
    }
    for key, kind in TARGET_REGISTRIES:
        known = sorted(registries[kind])
        value = body.get(key)
        named = [value] if isinstance(value, str) and value != "none" else value
        for item in named if isinstance(named, list | tuple) else ():
            if isinstance(item, str) and item not in known:
                choices = ", ".join(known) or "none"
                message = f"No {kind} with id {item!r}; the home's {kind}s: {choices}"
                return error(TargetNotFoundError.code, message)
    return None


def named_entities(value: Any) -> list[str]:
    """The entity ids a target names as Home Assistant reads them (comma-separated or a list,
    any case); not "all" or "none", nor what it will refuse as invalid data."""
    if isinstance(value, str):
        value = [] if value.strip().lower() in ("all", "none") else value.split(",")
    if not isinstance(value, list | tuple):
        return []
    return [item.strip().lower() for item in value if isinstance(item, str)]


def service_error(status: int, answer: Any) -> Result:
    """A refused call as the twin reports it: HA answers 400 with a message for a
    ServiceValidationError and without one for invalid data."""
    message = answer.get("message") if isinstance(answer, Mapping) else None
    if not isinstance(message, str):
        if status == 400:
            return error(InvalidServiceDataError.code, "Invalid data for the action; see describe")
        return error("error", f"Home Assistant answered {status}")
    if status == 400 and "does not support" in message:
        return error(ServiceNotSupportedError.code, message)
    if status == 400:
        return error(ServiceValidationError.code, message)
    return error("error", message)

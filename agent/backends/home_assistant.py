"""The Home Assistant backend: the agent's tools over a running server's REST and WebSocket APIs.

Results are those of the twin backend (twin.tools): the same compact entities, the same error
codes, the same device manuals. Only aiohttp, the standard library and the twin are imported, so
that it runs in Home Assistant's environment as in the agent's. The token stays out of logs,
reprs and error messages.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Protocol

import aiohttp

from twin.errors import (
    EntityNotFoundError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TargetNotFoundError,
    TwinError,
)
from twin.home import Home
from twin.registry import Area, Device, EntityEntry
from twin.tools import (
    KEY_ATTRIBUTES,
    TOOL_SCHEMAS,
    ToolCallError,
    describe,
    error,
    jsonable,
    tool_arguments,
)
from twin.validation import valid_entity_id

from . import AreaLayout, FloorLayout, Result
from .twin import NO_AREA, NO_FLOOR

TIMEOUT = aiohttp.ClientTimeout(total=30)  # a request, or a WebSocket command, unanswered
# Home Assistant pings its WebSocket clients every 55 s: a connection silent for longer than this
# (seconds) is gone, and is made again.
SILENCE = 120.0
RECONNECT_DELAY = 1.0  # seconds between tries to make a dropped event connection again
# The keys of a state the twin's tools give (Home Assistant's also has context, last_reported).
STATE_KEYS = ("entity_id", "state", "attributes", "last_changed", "last_updated")
# The entity-level attributes, which the twin's Home.add_entity derives from the entry itself.
ENTITY_ATTRIBUTES = ("friendly_name", "supported_features", "device_class", "unit_of_measurement")
REGISTRIES = ("floor", "area", "device", "entity")
# Target keys that name registry entries: the key, the registry, its id's key.
TARGET_REGISTRIES = (("area_id", "area", "area_id"), ("floor_id", "floor", "floor_id"),
                     ("device_id", "device", "id"))  # fmt: skip


class HomeAssistantError(Exception):
    """Home Assistant could not be reached or refused the token; the message says which."""


class HomeAssistantBackend:
    """Runs tool calls on the Home Assistant at `url` with a long-lived access `token`.

    An async context manager: one HTTP session and one WebSocket connection while it is open.
    `unix_socket` reaches a server through a unix socket (an abstract one starts with a NUL).
    """

    def __init__(self, url: str, token: str, *, unix_socket: str | None = None) -> None:
        self.url = url.rstrip("/")
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
        """Every entity with a state, sorted by id, in compact form, filtered as the twin's."""
        return select_entities(await self._states(), await self._registries(), area, floor, domain)

    async def get_state(self, entity_id: str) -> Result:
        """The entity's state as the REST API gives it, with the twin's keys."""
        status, answer = await self._state(entity_id)
        if status == 404:
            return error(EntityNotFoundError.code, _unknown_entity(entity_id))
        return {key: answer[key] for key in STATE_KEYS}

    async def describe(self, entity_id: str) -> Result:
        """The device manual, built by the twin's manual from the entity's state and registries."""
        status, state = await self._state(entity_id)
        if status == 404:
            return error(EntityNotFoundError.code, _unknown_entity(entity_id))
        return manual_of(state, await self._registries())

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
        _, services = await self.request("GET", "/api/services")
        offered = {item["domain"]: item["services"] for item in services}
        if service not in offered.get(domain, {}):
            return error(
                ServiceNotFoundError.code, f"Action {domain}.{service} not found; see describe"
            )
        body = {**(data or {}), **(target or {})}  # Home Assistant takes the target in the data
        states = {state["entity_id"] for state in await self._states()}
        registries = await self._registries()
        if (unknown := _unknown_target(body, states, registries)) is not None:
            return unknown
        status, answer = await self.request("POST", f"/api/services/{domain}/{service}", body)
        if status != 200:
            return _service_error(status, answer)
        places = _areas_of(registries)
        changed = [_compact(state, places.get(state["entity_id"])) for state in answer]
        return {"success": True, "changed": changed}

    # --- the protocol's views ------------------------------------------------------------------

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every entity's state, with the twin's keys."""
        return {s["entity_id"]: {key: s[key] for key in STATE_KEYS} for s in await self._states()}

    async def layout(self) -> tuple[FloorLayout, ...]:
        """Floors by level, areas by name, entities by id, as the twin backend orders them."""
        return home_layout(await self._states(), await self._registries())

    # --- transport -----------------------------------------------------------------------------

    async def _state(self, entity_id: str) -> tuple[int, Any]:
        """GET /api/states/<entity_id>; 404 for what is no entity id (kept out of the URL)."""
        if not valid_entity_id(entity_id):
            return 404, None
        return await self.request("GET", f"/api/states/{entity_id}")

    async def _states(self) -> list[dict[str, Any]]:
        _, states = await self.request("GET", "/api/states")
        result: list[dict[str, Any]] = states
        return result

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One REST request with the token: the status and the JSON answer (None when it is not
        JSON); the tools' transport, and other clients' (the benchmark's config flows)."""
        if self._session is None:
            raise HomeAssistantError("use the backend as `async with HomeAssistantBackend(...)`")
        try:
            async with self._session.request(
                method, self.url + path, json=body, headers=self._headers
            ) as response:
                if response.status == 401:
                    raise HomeAssistantError(f"Home Assistant at {self.url} refused the token")
                if response.content_type != "application/json":
                    return response.status, None
                return response.status, await response.json()
        except TimeoutError:
            raise HomeAssistantError(
                f"Home Assistant at {self.url} did not answer {method} {path} within "
                f"{TIMEOUT.total:g} s"
            ) from None
        except aiohttp.ClientError as err:
            raise HomeAssistantError(f"Home Assistant at {self.url}: {err}") from None

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
                    raise HomeAssistantError(f"Home Assistant's WebSocket API: {reason}") from None
                continue
            if not answer["success"]:
                raise HomeAssistantError(f"WebSocket {kind} failed: {answer['error']}")
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
            raise HomeAssistantError("use the backend as `async with HomeAssistantBackend(...)`")
        timeout = aiohttp.ClientWSTimeout(ws_receive=SILENCE, ws_close=10.0)  # aiohttp's close
        ws = await self._session.ws_connect(self.url + "/api/websocket", timeout=timeout)
        await ws.receive_json()  # auth_required
        await ws.send_json({"type": "auth", "access_token": self._token})
        if (await ws.receive_json())["type"] != "auth_ok":
            await ws.close()
            raise HomeAssistantError(f"Home Assistant at {self.url} refused the token")
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
        HomeAssistantError."""
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
                    raise HomeAssistantError(f"Home Assistant at {self.url}: {err}") from None
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
                            raise HomeAssistantError(f"subscribe_events failed: {answer['error']}")
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


def select_entities(
    states: list[dict[str, Any]],
    registries: Mapping[str, list[dict[str, Any]]],
    area: str | None = None,
    floor: str | None = None,
    domain: str | None = None,
) -> Result:
    """list_entities over Home Assistant's states and registries (as its WebSocket API lists
    them): the entities with a state, sorted by id, in compact form, filtered as the twin's."""
    areas = {a["area_id"]: a for a in registries["area"]}
    try:
        area_id = _resolve(areas, area, "area")
        floor_id = _resolve({f["floor_id"]: f for f in registries["floor"]}, floor, "floor")
    except TargetNotFoundError as err:
        return error(err.code, str(err))
    places = _areas_of(registries)
    entities = []
    for state in sorted(states, key=lambda s: str(s["entity_id"])):
        entity_id = state["entity_id"]
        if domain is not None and entity_id.partition(".")[0] != domain:
            continue
        in_area = places.get(entity_id)
        if area_id is not None and in_area != area_id:
            continue
        if floor_id is not None and (in_area is None or areas[in_area]["floor_id"] != floor_id):
            continue
        entities.append(_compact(state, in_area))
    return {"entities": entities}


def home_layout(
    states: list[dict[str, Any]], registries: Mapping[str, list[dict[str, Any]]]
) -> tuple[FloorLayout, ...]:
    """The layout of Home Assistant's states and registries: floors by level, areas by name,
    entities by id, as the twin backend orders them."""
    places = _areas_of(registries)
    by_area: dict[str | None, list[tuple[str, str]]] = {}
    for state in sorted(states, key=lambda s: str(s["entity_id"])):
        entity_id = state["entity_id"]
        name = state["attributes"].get("friendly_name", entity_id)
        by_area.setdefault(places.get(entity_id), []).append((entity_id, name))
    by_floor: dict[str | None, list[AreaLayout]] = {}
    for area in sorted(registries["area"], key=lambda a: (a["name"], a["area_id"])):
        entities = tuple(by_area.get(area["area_id"], ()))
        by_floor.setdefault(area["floor_id"], []).append(
            AreaLayout(area["area_id"], area["name"], entities)
        )
    if None in by_area:
        by_floor.setdefault(None, []).append(AreaLayout(None, NO_AREA, tuple(by_area[None])))
    floors = sorted(registries["floor"], key=lambda f: (f["level"] or 0, f["name"], f["floor_id"]))
    layout = [
        FloorLayout(f["floor_id"], f["name"], tuple(by_floor.get(f["floor_id"], ())))
        for f in floors
    ]
    if None in by_floor:
        layout.append(FloorLayout(None, NO_FLOOR, tuple(by_floor[None])))
    return tuple(layout)


def manual_of(state: Mapping[str, Any], registries: Mapping[str, Any]) -> Result:
    """describe's result: the twin's manual of the entity's state and registry entries."""
    entity_id = state["entity_id"]
    try:
        home = _one_entity_home(state, registries)
    except TwinError as err:  # a domain the twin does not model
        return error(err.code, f"No manual for {entity_id}: {err}")
    return describe(home, entity_id)


def payload_error(target: Any, data: Any) -> Result | None:
    """The twin's error for a target or data that is no object; None when both are."""
    for name, value in (("target", target), ("data", data)):
        if value is not None and not isinstance(value, Mapping):
            return error(
                InvalidServiceDataError.code,
                f"{name} must be an object, got {type(value).__name__}",
            )
    return None


def _unknown_entity(entity_id: str) -> str:
    """The twin's message for an unknown entity."""
    return f"Entity {entity_id} not found; list the home's entities to find its id"


def _unknown_target(
    body: Mapping[str, Any], states: set[str], registries: Mapping[str, list[dict[str, Any]]]
) -> Result | None:
    """The twin's error for a target that names an entity, area, floor or device the home
    lacks (Home Assistant skips it and succeeds); None when all exist."""
    for entity_id in _named_entities(body.get("entity_id")):
        if entity_id not in states:
            return error(EntityNotFoundError.code, _unknown_entity(entity_id))
    for key, kind, id_key in TARGET_REGISTRIES:
        known = sorted(item[id_key] for item in registries[kind])
        value = body.get(key)
        named = [value] if isinstance(value, str) and value != "none" else value
        for item in named if isinstance(named, list | tuple) else ():
            if isinstance(item, str) and item not in known:
                choices = ", ".join(known) or "none"
                message = f"No {kind} with id {item!r}; the home's {kind}s: {choices}"
                return error(TargetNotFoundError.code, message)
    return None


def _named_entities(value: Any) -> list[str]:
    """The entity ids a target names as Home Assistant reads them (comma-separated or a list,
    any case); not "all" or "none", nor what it will refuse as invalid data."""
    if isinstance(value, str):
        value = [] if value.strip().lower() in ("all", "none") else value.split(",")
    if not isinstance(value, list | tuple):
        return []
    return [item.strip().lower() for item in value if isinstance(item, str)]


def _service_error(status: int, answer: Any) -> Result:
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


def _areas_of(registries: Mapping[str, list[dict[str, Any]]]) -> dict[str, str | None]:
    """Each registered entity's area: its own, else its device's."""
    devices = {device["id"]: device for device in registries["device"]}
    areas: dict[str, str | None] = {}
    for entry in registries["entity"]:
        device = devices.get(entry["device_id"]) if entry["device_id"] else None
        areas[entry["entity_id"]] = entry["area_id"] or (device["area_id"] if device else None)
    return areas


def _compact(state: Mapping[str, Any], area: str | None) -> Result:
    """twin.tools.compact of a state dict from Home Assistant."""
    entity_id = state["entity_id"]
    attributes = state["attributes"]
    item: Result = {
        "entity_id": entity_id,
        "name": attributes.get("friendly_name", entity_id),
        "area": area,
        "state": state["state"],
    }
    for key in KEY_ATTRIBUTES.get(entity_id.partition(".")[0], ()):
        if (value := attributes.get(key)) is not None:
            item[key] = jsonable(value)
    return item


def _resolve(items: Mapping[str, Mapping[str, Any]], wanted: str | None, kind: str) -> str | None:
    """The id of the area or floor `wanted` names by id or by name, as twin.tools resolves it."""
    if wanted is None or wanted in items:
        return wanted
    for item_id, item in items.items():
        if item["name"].casefold() == wanted.casefold():
            return item_id
    known = ", ".join(sorted(items)) or "none"
    raise TargetNotFoundError(f"No {kind} {wanted!r}; the home's {kind}s: {known}")


def _one_entity_home(state: Mapping[str, Any], registries: Mapping[str, Any]) -> Home:
    """A twin home of one entity, its device and area, for twin.manual to describe."""
    entity_id = state["entity_id"]
    entry: Mapping[str, Any] = next(
        (e for e in registries["entity"] if e["entity_id"] == entity_id), {}
    )
    devices = {device["id"]: device for device in registries["device"]}
    raw_device = devices.get(entry.get("device_id") or "")
    attributes = dict(state["attributes"])
    # The manual reads only static attributes (ranges, option lists) from the capabilities.
    own = {key: value for key, value in attributes.items() if key not in ENTITY_ATTRIBUTES}
    area_id = entry.get("area_id") or (raw_device["area_id"] if raw_device else None)
    home = Home()
    if area_id is not None:
        home.add_area(Area(area_id, area_id))
    device_id = None
    if raw_device is not None:
        device_id = raw_device["id"]
        home.add_device(
            Device(
                device_id,
                raw_device["name"] or device_id,
                raw_device["manufacturer"],
                raw_device["model"],
                raw_device["area_id"] if raw_device["area_id"] == area_id else None,
            )
        )
    home.add_entity(
        EntityEntry(
            entity_id=entity_id,
            name=attributes.get("friendly_name", entity_id),
            device_id=device_id,
            area_id=entry.get("area_id"),
            device_class=attributes.get("device_class"),
            unit_of_measurement=attributes.get("unit_of_measurement"),
            supported_features=attributes.get("supported_features") or 0,
            capabilities=own,
        ),
        state["state"],
        own,
    )
    return home

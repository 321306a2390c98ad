"""SmartHome-Bench on a real Home Assistant: each instance's home is put into the server as a
HomeFlow home, the policy acts through the HA backend (the same tools as on the twin) with the
scripted user, and the verifier judges a mirror of the live home after every tool call, as it
judges the twin; then the home is removed, so the next instance starts from a clean server.

Instances run one at a time: they share the one server, and two homes at once would clash. A
home is imported through the integration's config flow ("import_home", the twin's home file)
with the physics off, so that nothing moves by itself. Homes an interrupted run left behind
(titled `TITLE ...`) are removed before an instance starts; nothing else on the server is
touched, so a normally onboarded Home Assistant keeps its own rooms and entities. The policy is a
HomeFlow one, or any Home Assistant conversation agent (conversation.py). The token stays out of
reprs, logs and errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from twin.home import Home
from twin.homefile import dump_home
from twin.mirror import Mirror

from ..backends.home_assistant import HomeAssistantBackend, HomeAssistantRequestError
from ..episode import EpisodeLimits, Trajectory
from ..flywheel.blueprints import Blueprint
from ..policies import Policy
from .conversation import converse
from .instances import play

TITLE = "SmartHome-Bench"
DOMAIN = "homeflow"
ENTRIES = "/api/config/config_entries"
SHOWN = 4  # mismatches an error lists
REGISTRY_KINDS = ("floor", "area", "device", "entity")


@dataclass(frozen=True)
class Server:
    """A running Home Assistant with HomeFlow installed, and a long-lived access token;
    `unix_socket` reaches it through a unix socket (an abstract one starts with a NUL)."""

    url: str
    token: str = field(repr=False)
    unix_socket: str | None = None

    def backend(self) -> HomeAssistantBackend:
        """A backend on the server (an async context manager)."""
        return HomeAssistantBackend(self.url, self.token, unix_socket=self.unix_socket)


class HomeLink:
    """The mirror's link to one HomeFlow home on the server: the registries with only that
    home's entities, their devices, areas and floors, and their states, so that the verifier
    sees the instance's home as on the twin, not the server's other entities (the sun's, which
    move by themselves) or the user's own rooms.

    Home Assistant may hold a room under another id than the twin's: in an area of the user's of
    the same name, or a new one renamed for a clash ("SmartHome-Bench qt1-0000 Kitchen"). The
    areas and floors are read back under the twin's ids, matched through the registries (the
    area each of the home's entities is in), never by name."""

    def __init__(self, backend: HomeAssistantBackend, entry_id: str, home: Home) -> None:
        self.backend = backend
        self.entry_id = entry_id
        self.home = home
        self._entities: set[str] = set()

    async def registry(self, kind: str) -> list[dict[str, Any]]:
        """One registry, of the home's items only, under the twin's area and floor ids."""
        held = {name: await self.backend.registry(name) for name in REGISTRY_KINDS}
        ours = home_registries(self.home, self.entry_id, held)
        self._entities = {item["entity_id"] for item in ours["entity"]}
        return ours[kind]

    async def states(self) -> dict[str, dict[str, Any]]:
        """The states of the home's entities, as of the entity registry last read (the mirror
        reads the registries before the states)."""
        states = await self.backend.states()
        return {entity_id: states[entity_id] for entity_id in self._entities if entity_id in states}

    def subscribe_events(self, event_types: Sequence[str]) -> AsyncIterator[dict[str, Any] | None]:
        """The server's events (the mirror follows them with these registries)."""
        return self.backend.subscribe_events(event_types)


def home_registries(
    home: Home, entry_id: str, held: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """The registries of config entry `entry_id`'s entities, their devices, areas and floors,
    with each area and floor renamed to the twin's id that its entities say (areas the home
    does not account for keep Home Assistant's ids, so that `mismatches` names them)."""
    entities = [item for item in held["entity"] if item["config_entry_id"] == entry_id]
    used = {item["device_id"] for item in entities}
    devices = [item for item in held["device"] if item["id"] in used]
    areas = _area_ids(home, entities, devices)
    floors = _floor_ids(home, areas, held["area"])
    return {
        "floor": [
            _renamed(item, floor_id=floors) for item in held["floor"] if item["floor_id"] in floors
        ],
        "area": [
            _renamed(item, area_id=areas, floor_id=floors)
            for item in held["area"]
            if item["area_id"] in areas
        ],
        "device": [_renamed(item, area_id=areas) for item in devices],
        "entity": [_renamed(item, area_id=areas) for item in entities],
    }


def _area_ids(
    home: Home, entities: list[dict[str, Any]], devices: list[dict[str, Any]]
) -> dict[str, str]:
    """Home Assistant's area id -> the twin's, each taken once, from the areas the home's
    entities are in there and here; an area the twin does not account for keeps its id."""
    device_area = {item["id"]: item["area_id"] for item in devices}
    ids: dict[str, str] = {}
    for item in entities:
        held = item["area_id"] or device_area.get(item["device_id"])
        if held is None or held in ids:
            continue
        known = item["entity_id"] in home.entities
        twin = home.area_of(item["entity_id"]) if known else None
        ids[held] = twin if twin is not None and twin not in ids.values() else held
    for held in device_area.values():
        if held is not None:
            ids.setdefault(held, held)
    return ids


def _floor_ids(
    home: Home, areas: dict[str, str], held_areas: list[dict[str, Any]]
) -> dict[str, str]:
    """Home Assistant's floor id -> the twin's, from the floors of the areas matched."""
    ids: dict[str, str] = {}
    for item in held_areas:
        if (floor := item["floor_id"]) is None or floor in ids or item["area_id"] not in areas:
            continue
        room = home.areas.get(areas[item["area_id"]])
        twin = room.floor_id if room is not None else None
        ids[floor] = twin if twin is not None and twin not in ids.values() else floor
    return ids


def _renamed(item: dict[str, Any], **ids: dict[str, str]) -> dict[str, Any]:
    """`item` with each of its keys named in `ids` mapped (a value not there kept)."""
    return item | {key: mapping.get(item[key], item[key]) for key, mapping in ids.items()}


async def play_on_server(
    server: Server,
    name: str,
    blueprint: Blueprint,
    agent: Policy | str,
    limits: EpisodeLimits,
) -> Trajectory:
    """An episode on the blueprint's home in Home Assistant, titled `TITLE name`, judged on a
    mirror of it, of a HomeFlow `agent` policy acting through the HA backend, or of the
    Home Assistant conversation agent of that id; the home is removed afterwards, whatever
    happened."""
    home = blueprint.home()
    async with server.backend() as backend:
        await remove_bench_homes(backend)
        entry_id = await add_home(backend, f"{TITLE} {name}", home)
        try:
            mirror = Mirror(HomeLink(backend, entry_id, home), home.name)

            async def current() -> Home:
                await mirror.sync()
                return mirror.home

            if problems := mismatches(home, await current()):
                more = f"; {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
                raise HomeAssistantRequestError(
                    f"Home Assistant holds {name}'s home under other ids than the twin's, so its "
                    f"conditions cannot be checked there ({'; '.join(problems[:SHOWN])}{more}); "
                    "remove what clashes (another home's entities) and run again"
                )
            if isinstance(agent, str):
                return await converse(backend, agent, blueprint, limits, current)
            return await play(blueprint, agent, limits=limits, backend=backend, view=current)
        finally:
            await remove_home(backend, entry_id)


async def add_home(backend: HomeAssistantBackend, title: str, home: Home) -> str:
    """Import `home` through HomeFlow's config flow, as the UI does, and turn its physics off
    (the options flow, then a reload that waits for the one the options scheduled); its
    config entry id."""
    flow = await _call(backend, "POST", f"{ENTRIES}/flow", {"handler": DOMAIN})
    step = f"{ENTRIES}/flow/{flow['flow_id']}"
    await _call(backend, "POST", step, {"next_step_id": "import_home"})
    made = await _call(backend, "POST", step, {"name": title, "home": dump_home(home)})
    if made.get("type") == "form" and made.get("step_id") == "rooms":
        # None of the user's areas: a run leaves them as they were, and its rooms keep their
        # own names, as in the committed results.
        fields = [field["name"] for field in made.get("data_schema") or ()]
        made = await _call(backend, "POST", step, {key: [] for key in fields})
    if made.get("type") != "create_entry":
        raise HomeAssistantRequestError(f"HomeFlow's config flow did not import {title!r}: {made}")
    entry_id: str = made["result"]["entry_id"]
    try:
        options = await _call(backend, "POST", f"{ENTRIES}/options/flow", {"handler": entry_id})
        path = f"{ENTRIES}/options/flow/{options['flow_id']}"
        if (await _call(backend, "POST", path, {"physics": False})).get("type") != "create_entry":
            raise HomeAssistantRequestError(
                f"HomeFlow's options flow did not turn {title!r}'s physics off"
            )
        await _call(backend, "POST", f"{ENTRIES}/entry/{entry_id}/reload")
    except BaseException:
        await remove_home(backend, entry_id)
        raise
    return entry_id


async def remove_home(backend: HomeAssistantBackend, entry_id: str) -> None:
    """Remove a home's config entry (the integration removes the floors and areas it made)."""
    await _call(backend, "DELETE", f"{ENTRIES}/entry/{entry_id}")


async def remove_bench_homes(backend: HomeAssistantBackend) -> None:
    """Remove the homes an interrupted run left (HomeFlow entries titled `TITLE ...`)."""
    for entry in await _call(backend, "GET", f"{ENTRIES}/entry?domain={DOMAIN}"):
        if entry["title"].startswith(f"{TITLE} "):
            await remove_home(backend, entry["entry_id"])


def mismatches(home: Home, served: Home) -> list[str]:
    """Where the home as Home Assistant holds it differs from the twin in what tools and
    conditions name: entity ids, each entity's area, each area's floor (a name the server
    already has makes it rename one: `light.desk_2`, "SmartHome-Bench qt1-0000 Kitchen")."""
    ours, theirs = home.states.keys(), served.states.keys()
    problems = [f"{entity_id} is extra" for entity_id in sorted(theirs - ours)]
    problems += [f"{entity_id} is missing" for entity_id in sorted(ours - theirs)]
    for entity_id in sorted(ours & theirs):
        if (area := home.area_of(entity_id)) != (held := served.area_of(entity_id)):
            problems.append(f"{entity_id} is in area {held}, not {area}")
    for area_id, room in sorted(home.areas.items()):
        if (other := served.areas.get(area_id)) is not None and other.floor_id != room.floor_id:
            problems.append(f"area {area_id} is on floor {other.floor_id}, not {room.floor_id}")
    return problems


async def _call(backend: HomeAssistantBackend, method: str, path: str, body: Any = None) -> Any:
    """One REST request that must succeed; its JSON answer."""
    status, answer = await backend.request(method, path, body)
    if status not in (200, 201):
        raise HomeAssistantRequestError(f"{method} {path} answered {status}: {answer}")
    return answer

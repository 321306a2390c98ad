"""SmartHome-Bench on a real Home Assistant: each instance's home is put into the server as a
HomeFlow home, the policy acts through the HA backend (the same tools as on the twin) with the
scripted user, and the verifier judges a mirror of the live home after every tool call, as it
judges the twin; then the home is removed, so the next instance starts from a clean server.

Instances run one at a time: they share the one server, and two homes at once would clash. A
home is imported through the integration's config flow ("import_home", the twin's home file)
with the physics off, so that nothing moves by itself. Homes an interrupted run left behind
(titled `TITLE ...`) are removed before an instance starts. The token stays out of reprs, logs
and errors.
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
from .instances import play

TITLE = "SmartHome-Bench"
DOMAIN = "homeflow"
ENTRIES = "/api/config/config_entries"
SHOWN = 4  # mismatches an error lists


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
    home's entities, and their states, so that the verifier sees the instance's home as on the
    twin, not the server's other entities (the sun's, which move by themselves)."""

    def __init__(self, backend: HomeAssistantBackend, entry_id: str) -> None:
        self.backend = backend
        self.entry_id = entry_id
        self._entities: set[str] = set()

    async def registry(self, kind: str) -> list[dict[str, Any]]:
        """One registry; the entity registry holds the home's entries only."""
        items = await self.backend.registry(kind)
        if kind != "entity":
            return items
        ours = [item for item in items if item["config_entry_id"] == self.entry_id]
        self._entities = {item["entity_id"] for item in ours}
        return ours

    async def states(self) -> dict[str, dict[str, Any]]:
        """The states of the home's entities, as of the entity registry last read (the mirror
        reads the registries before the states)."""
        states = await self.backend.states()
        return {entity_id: states[entity_id] for entity_id in self._entities if entity_id in states}

    def subscribe_events(self, event_types: Sequence[str]) -> AsyncIterator[dict[str, Any] | None]:
        """The server's events (the mirror follows them with these registries)."""
        return self.backend.subscribe_events(event_types)


async def play_on_server(
    server: Server, name: str, blueprint: Blueprint, policy: Policy, limits: EpisodeLimits
) -> Trajectory:
    """An episode of `policy` on the blueprint's home in Home Assistant, titled `TITLE name`,
    judged on a mirror of it; the home is removed afterwards, whatever happened."""
    home = blueprint.home()
    async with server.backend() as backend:
        await remove_bench_homes(backend)
        entry_id = await add_home(backend, f"{TITLE} {name}", home)
        try:
            mirror = Mirror(HomeLink(backend, entry_id), home.name)

            async def current() -> Home:
                await mirror.sync()
                return mirror.home

            if problems := mismatches(home, await current()):
                more = f"; {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
                raise HomeAssistantRequestError(
                    f"Home Assistant holds {name}'s home under other ids than the twin's, so its "
                    f"conditions cannot be checked there ({'; '.join(problems[:SHOWN])}{more}); "
                    "remove what clashes (another home's areas, floors or entities) and run again"
                )
            return await play(blueprint, policy, limits=limits, backend=backend, view=current)
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
        made = await _call(backend, "POST", step, {})  # the user's empty areas, as offered
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

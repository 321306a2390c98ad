"""The twin's mirror follows a real Home Assistant: its states, its registries, every domain.

The server is test_real_server's (its fixtures are reused); the mirror follows it through
HomeAssistantBackend's WebSocket, while the test changes the home through the REST and WebSocket
APIs as any client would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent.backends.home_assistant import HomeAssistantBackend
from scripts.hass_server import HASS_PORT
from tests.integration import test_real_server as real
from twin.mirror import SYNC, Mirror, Update
from twin.surface import STATE_KEYS

# The server and the sockets it needs: test_real_server's fixtures (pytest finds them by name).
served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
URL = f"http://127.0.0.1:{HASS_PORT}"  # as the server sees itself; reached through its bridge
WAIT = 10.0  # seconds for the mirror to follow


def mirrored(mirror: Mirror) -> dict[str, dict[str, Any]]:
    """The mirror's states as Home Assistant's JSON gives them (tuples as lists)."""
    states = {}
    for entity_id, state in mirror.home.states.items():
        item = state.as_dict()
        item["attributes"] = {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in item["attributes"].items()
        }
        states[entity_id] = item
    return states


def served(api: real.Api) -> dict[str, dict[str, Any]]:
    """Every state of /api/states with the twin's keys."""
    return {s["entity_id"]: {key: s[key] for key in STATE_KEYS} for s in api.get("/api/states")}


async def until(updates: AsyncIterator[Update], done: Callable[[], bool]) -> None:
    """Apply the mirror's updates until `done()`."""
    async with asyncio.timeout(WAIT):
        while not done():
            await anext(updates)


async def in_step(updates: AsyncIterator[Update], mirror: Mirror, api: real.Api) -> None:
    """Apply updates until the mirror has every state of /api/states, fetched anew each time
    (the home's sensors move on their own)."""
    async with asyncio.timeout(WAIT):
        while (expected := served(api)) != mirrored(mirror):
            try:
                async with asyncio.timeout(0.5):
                    await anext(updates)
            except TimeoutError:
                pass
    assert mirrored(mirror) == expected


async def test_the_mirror_follows_a_real_home(served_api: real.Api) -> None:
    bridge = "\0" + served_api.server.bridge
    async with HomeAssistantBackend(URL, served_api.token, unix_socket=bridge) as ha:
        mirror = Mirror(ha)
        updates = mirror.follow()
        assert (await anext(updates)).event_type == SYNC
        await in_step(updates, mirror, served_api)
        home = mirror.home
        assert "person.homeflow" in home.entities  # onboarding's person: a domain not simulated
        switch = next(e for e in sorted(home.entities) if e.startswith("switch."))
        light = next(e for e in sorted(home.entities) if e.startswith("light."))

        before = mirror.home.states[switch].state
        served_api.post("/api/services/switch/toggle", {"entity_id": switch})
        served_api.post("/api/services/light/toggle", {"entity_id": light})
        guests = {"state": "on", "attributes": {"friendly_name": "Guests", "icon": "mdi:account"}}
        served_api.post("/api/states/input_boolean.guests", guests)
        await until(updates, lambda: "input_boolean.guests" in mirror.home.states)
        assert mirror.home.states[switch].state != before
        await in_step(updates, mirror, served_api)

        token = served_api.token
        served_api.server.call("DELETE", "/api/states/input_boolean.guests", token=token)
        await until(updates, lambda: "input_boolean.guests" not in mirror.home.states)

        area = mirror.home.area_of(switch)
        assert area is not None
        with served_api.server.websocket(token) as ws:
            ws.command("config/area_registry/update", area_id=area, name="Renamed Room")
        await until(updates, lambda: mirror.home.areas[area].name == "Renamed Room")
        await in_step(updates, mirror, served_api)
        await updates.aclose()

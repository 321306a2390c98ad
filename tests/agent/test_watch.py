"""`homeflow watch` and the backend's event subscription, against a small fake Home Assistant.

The fake speaks Home Assistant's REST (/api/states) and WebSocket API (auth, registry lists,
subscribe_events) on loopback, in a thread of its own so that the command can run its own loop;
it can drop the event connection once to show that the backend connects again. The real server
is tests/integration/test_mirror.py's.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from click.testing import CliRunner

from agent.backends import home_assistant
from agent.backends.home_assistant import HomeAssistantBackend, HomeAssistantRequestError
from agent.cli import main
from twin.mirror import EVENT_TYPES

TOKEN = "fake-token-" + "s" * 24
T0, T1 = "2026-03-01T10:00:00+00:00", "2026-03-01T10:00:05+00:00"
REGISTRIES: dict[str, list[dict[str, Any]]] = {
    "floor": [],
    "area": [{"area_id": "hall", "name": "Hall", "floor_id": None}],
    "device": [],
    "entity": [{"entity_id": "person.alice", "device_id": None, "area_id": "hall", "name": None,
                "original_name": "Alice", "entity_category": None}],
}  # fmt: skip


def state(entity_id: str, value: str, at: str = T0) -> dict[str, Any]:
    return {"entity_id": entity_id, "state": value, "attributes": {}, "last_changed": at,
            "last_updated": at, "last_reported": at, "context": {"id": "c"}}  # fmt: skip


def changed(entity_id: str, value: str) -> dict[str, Any]:
    new = state(entity_id, value, T1)
    return {"event_type": "state_changed", "time_fired": T1,
            "data": {"entity_id": entity_id, "old_state": None, "new_state": new}}  # fmt: skip


class FakeHomeAssistant:
    """Each event connection sends the next batch of `events`, and is dropped after it while
    `drops` is positive; `silent`, it answers no request or command (counted in `unanswered`)."""

    def __init__(self) -> None:
        self.states = {"person.alice": state("person.alice", "home"),
                       "sun.sun": state("sun.sun", "above_horizon")}  # fmt: skip
        self.events: list[list[dict[str, Any]]] = []
        self.drops = 0
        self.subscriptions = 0
        self.silent = False
        self.unanswered = 0

    async def rest_states(self, request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.Response(status=401)
        if self.silent:
            await asyncio.sleep(1)
        return web.json_response(list(self.states.values()))

    async def websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "auth_required"})
        if (await ws.receive_json()).get("access_token") != TOKEN:
            await ws.send_json({"type": "auth_invalid", "message": "Invalid access token"})
            await ws.close()
            return ws
        await ws.send_json({"type": "auth_ok"})
        subscribed = 0
        async for message in ws:
            command = message.json()
            if self.silent:
                self.unanswered += 1
                continue
            kind = command["type"]
            result = None
            if kind.startswith("config/"):
                result = REGISTRIES[kind.split("/")[1].removesuffix("_registry")]
            else:
                assert kind == "subscribe_events"
                assert command["event_type"] == EVENT_TYPES[subscribed]
                subscribed += 1
            await ws.send_json({"id": command["id"], "type": "result", "success": True,
                                "result": result})  # fmt: skip
            if subscribed == len(EVENT_TYPES):
                self.subscriptions += 1
                for event in self.events.pop(0) if self.events else []:
                    await ws.send_json({"id": 1, "type": "event", "event": event})
                if self.drops:
                    self.drops -= 1
                    await ws.close()
        return ws


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeHomeAssistant]]:
    """The fake on a free loopback port, served by a loop in its own thread."""
    ha = FakeHomeAssistant()
    app = web.Application()
    app.router.add_get("/api/states", ha.rest_states)
    app.router.add_get("/api/websocket", ha.websocket)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", 0)
    loop.run_until_complete(site.start())
    port = runner.addresses[0][1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}", ha
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(5)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


async def test_events_come_again_after_a_dropped_connection(
    fake: tuple[str, FakeHomeAssistant],
) -> None:
    url, ha = fake
    ha.events = [[changed("sun.sun", "below_horizon")], [changed("person.alice", "away")]]
    ha.drops = 1
    async with HomeAssistantBackend(url, TOKEN) as backend:
        events = backend.subscribe_events(EVENT_TYPES, retry=0.01)
        received = [await anext(events) for _ in range(4)]
        await events.aclose()
        assert await backend.registry("area") == REGISTRIES["area"]
    assert received[0] is None  # subscribed: the mirror syncs
    assert received[1] is not None
    assert received[1]["data"]["entity_id"] == "sun.sun"
    assert received[2] is None  # subscribed again after the drop
    assert received[3] is not None
    assert received[3]["data"]["new_state"]["state"] == "away"
    assert ha.subscriptions == 2


async def test_a_home_assistant_that_does_not_answer_is_a_clear_error(
    fake: tuple[str, FakeHomeAssistant], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a bare TimeoutError: a request, or a WebSocket command (after one new connection),
    unanswered within TIMEOUT is a HomeAssistantRequestError that says so."""
    url, ha = fake
    ha.silent = True
    monkeypatch.setattr(home_assistant, "TIMEOUT", aiohttp.ClientTimeout(total=0.2))
    async with HomeAssistantBackend(url, TOKEN) as backend:
        with pytest.raises(
            HomeAssistantRequestError, match=r"did not answer GET /api/states within 0\.2 s"
        ):
            await backend.request("GET", "/api/states")
        with pytest.raises(HomeAssistantRequestError, match=r"no answer within 0\.2 s"):
            await backend.registry("area")
    assert ha.unanswered == 2


async def test_an_event_connection_silent_too_long_is_made_again(
    fake: tuple[str, FakeHomeAssistant], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Home Assistant pings every 55 s: silence past SILENCE means a half-open connection."""
    url, ha = fake
    monkeypatch.setattr(home_assistant, "SILENCE", 0.2)
    async with HomeAssistantBackend(url, TOKEN) as backend:
        events = backend.subscribe_events(EVENT_TYPES, retry=0.01)
        assert [await anext(events), await anext(events)] == [None, None]
        await events.aclose()
    assert ha.subscriptions == 2


def watch(url: str, token_file: Path, *conditions: str) -> Any:
    arguments = ["watch", "--url", url, "--token-file", str(token_file), "--once", *conditions]
    return CliRunner().invoke(main, arguments)


def test_watch_once_says_whether_the_conditions_hold(
    fake: tuple[str, FakeHomeAssistant], token_file: Path
) -> None:
    url, _ = fake
    held = watch(url, token_file, 'state("person.alice") == "home"', 'state("sun.sun") != "x"')
    assert held.exit_code == 0, held.output
    assert "synced" in held.output
    assert "all hold" in held.output
    assert held.output.count("✓") == 2
    missed = watch(url, token_file, 'state("person.alice") == "not_home"')
    assert missed.exit_code == 1, missed.output
    assert "✗" in missed.output
    assert "not all hold" in missed.output


def test_watch_refuses_bad_input_clearly(
    fake: tuple[str, FakeHomeAssistant], token_file: Path, tmp_path: Path
) -> None:
    url, _ = fake
    unknown = watch(url, token_file, 'state("light.nowhere") == "on"')
    assert unknown.exit_code == 1
    assert "light.nowhere" in unknown.output
    malformed = watch(url, token_file, 'state("person.alice") ==')
    assert malformed.exit_code == 2
    assert "CONDITIONS" in malformed.output
    wrong = tmp_path / "wrong"
    wrong.write_text("not-" + TOKEN)
    refused = watch(url, wrong, 'state("person.alice") == "home"')
    assert refused.exit_code == 1
    assert "refused the token" in refused.output
    assert TOKEN not in refused.output
    nowhere = watch("http://127.0.0.1:9", token_file, 'state("person.alice") == "home"')
    assert nowhere.exit_code == 1
    assert "Home Assistant at http://127.0.0.1:9" in nowhere.output

"""What an entity holds beyond its state (a to-do list's items) reaches the agent's describe on
Home Assistant's REST API too: HomeAssistantBackend asks the service that answers with it."""

from __future__ import annotations

from typing import Any

import pytest

from agent.backends.home_assistant import HomeAssistantBackend
from twin.home import Home
from twin.registry import EntityEntry
from twin.tools import describe

LIST = "todo.shopping_list"
ITEMS = [{"summary": "Milk", "uid": "1", "status": "needs_action", "due": "2026-01-02"}]
STATE = {
    "entity_id": LIST,
    "state": "1",
    "attributes": {"friendly_name": "Shopping list", "supported_features": 7},
    "last_changed": "2026-01-01T00:00:00+00:00",
    "last_updated": "2026-01-01T00:00:00+00:00",
}
NO_REGISTRIES: dict[str, list[Any]] = {"floor": [], "area": [], "device": [], "entity": []}


class FakeRest:
    """Home Assistant's REST answers for one list, and the requests it had."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.posted: list[tuple[str, Any]] = []

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        if method == "GET":
            return (200, STATE) if path == f"/api/states/{LIST}" else (404, None)
        self.posted.append((path, body))
        return self.status, {"changed_states": [], "service_response": {LIST: {"items": ITEMS}}}

    async def registries(self) -> dict[str, list[Any]]:
        return NO_REGISTRIES


def backend(monkeypatch: pytest.MonkeyPatch, rest: FakeRest) -> HomeAssistantBackend:
    ha = HomeAssistantBackend("http://127.0.0.1:1", "token")
    monkeypatch.setattr(ha, "request", rest.request)
    monkeypatch.setattr(ha, "_registries", rest.registries)
    return ha


async def test_describe_shows_the_items_home_assistant_answers_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rest = FakeRest()
    manual = await backend(monkeypatch, rest).describe(LIST)
    assert rest.posted == [("/api/services/todo/get_items?return_response", {"entity_id": LIST})]
    assert manual["items"] == ITEMS
    twin = Home()
    twin.add_entity(EntityEntry(LIST, "Shopping list", supported_features=7), "1")
    assert manual["services"] == describe(twin, LIST)["services"]


async def test_a_refused_answer_leaves_the_items_out(monkeypatch: pytest.MonkeyPatch) -> None:
    manual = await backend(monkeypatch, FakeRest(status=400)).describe(LIST)
    assert "items" not in manual
    assert manual["state"] == "1"


async def test_other_entities_ask_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    rest = FakeRest()
    assert "error" in await backend(monkeypatch, rest).describe("light.nowhere")
    assert rest.posted == []

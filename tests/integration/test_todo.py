"""To-do lists: Home Assistant's todo services act on the twin's lists, and HA shows the twin's.

Home Assistant finds the item and checks the fields against the list's features before the entity
sees the call; the entity hands the change to the twin. Every call also goes, unchanged, to an
independent twin, and Home Assistant's state, the integration's twin and the independent twin
(items included) must agree. Home Assistant gives the items through todo.get_items, with a
response: they are the twin's.
"""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.backend import HassBackend
from twin.home import Home
from twin.tools import describe

from .parity import assert_registered_as_the_twin, call_both, independent_twin, shown

SHOPPING = "todo.shopping_list"  # every feature; Milk (due), Eggs (completed), Bread
CHORES = "todo.chores"  # add, update and remove only; Vacuum
DUE_FIELDS = ("due_date", "due_datetime")


class Lists:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str = SHOPPING, **data: Any) -> str | None:
        """A todo service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "todo", service, target, data)

    async def items(self, entity_id: str = SHOPPING) -> list[dict[str, Any]]:
        """The items Home Assistant gives through todo.get_items."""
        response = await self.hass.services.async_call(
            "todo", "get_items", {"status": ["needs_action", "completed"]},
            target={"entity_id": entity_id}, blocking=True, return_response=True,
        )  # fmt: skip
        assert response is not None
        items: list[dict[str, Any]] = response[entity_id]["items"]  # type: ignore[index]
        return items


@pytest.fixture
async def lists(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Lists:
    return Lists(hass, loaded_home)


async def test_the_lists_show_the_twins_count_and_items(hass: HomeAssistant, lists: Lists) -> None:
    assert_registered_as_the_twin(hass, lists.entry, "todo", [SHOPPING, CHORES])
    assert shown(hass, SHOPPING) == {
        "state": "2",
        "friendly_name": "Shopping list",
        "supported_features": 127,
    }
    assert await lists.items() == [
        {"uid": "a1", "summary": "Milk", "status": "needs_action", "due": "2026-01-02"},
        {"uid": "a2", "summary": "Eggs", "status": "completed", "description": "Dozen"},
        {"uid": "a3", "summary": "Bread", "status": "needs_action"},
    ]


async def test_every_service_acts_on_the_twin(hass: HomeAssistant, lists: Lists) -> None:
    assert await lists.call("add_item", item=" Tea ", description="Green") is None
    assert (
        await lists.call("add_item", item="Cake", due_datetime="2026-03-01T18:00:00+01:00") is None
    )
    assert await lists.call("update_item", item="Milk", status="completed", due_date=None) is None
    assert await lists.call("update_item", item="a3", rename="Rye bread") is None
    assert await lists.call("update_item", item="Eggs", status="needs_action") is None
    assert (
        await lists.call("update_item", item="Tea", description=None, due_date="2026-02-01") is None
    )
    assert shown(hass, SHOPPING)["state"] == "4"
    assert await lists.items() == [
        {"uid": "a1", "summary": "Milk", "status": "completed"},
        {"uid": "a2", "summary": "Eggs", "status": "needs_action", "description": "Dozen"},
        {"uid": "a3", "summary": "Rye bread", "status": "needs_action"},
        {"uid": "4", "summary": "Tea", "status": "needs_action", "due": "2026-02-01"},
        {
            "uid": "5",
            "summary": "Cake",
            "status": "needs_action",
            "due": "2026-03-01T17:00:00+00:00",
        },
    ]
    assert await lists.call("remove_completed_items") is None
    assert await lists.call("remove_item", item=["Eggs", "4"]) is None
    assert [item["summary"] for item in await lists.items()] == ["Rye bread", "Cake"]
    assert await lists.call("add_item", CHORES, item="Dust") is None
    assert await lists.call("remove_item", CHORES, item="Vacuum") is None
    assert shown(hass, CHORES)["state"] == "1"


@pytest.mark.parametrize(
    ("service", "entity_id", "data", "code"),
    [
        ("update_item", SHOPPING, {"item": "Tea", "status": "completed"}, "validation_error"),
        ("remove_item", SHOPPING, {"item": ["Milk", "Tea"]}, "validation_error"),
        ("add_item", CHORES, {"item": "Dust", "due_date": "2026-01-05"}, "validation_error"),
        ("add_item", CHORES, {"item": "Dust", "description": None}, "validation_error"),
        ("update_item", CHORES, {"item": "Vacuum", "due_datetime": None}, "validation_error"),
        ("get_items", SHOPPING, {}, "validation_error"),
        ("add_item", SHOPPING, {"item": "  "}, "invalid_data"),
        ("add_item", SHOPPING, {"item": "T", **dict.fromkeys(DUE_FIELDS)}, "invalid_data"),
        ("update_item", SHOPPING, {"item": "Milk"}, "invalid_data"),
        ("update_item", SHOPPING, {"item": "Milk", "status": "done"}, "invalid_data"),
        ("add_item", SHOPPING, {"item": "Tea", "due_date": "soon"}, "invalid_data"),
        ("add_item", SHOPPING, {"item": "Tea", "priority": 1}, "invalid_data"),
    ],
)  # fmt: skip
async def test_refused_calls_change_nothing(
    hass: HomeAssistant, lists: Lists, service: str, entity_id: str, data: dict[str, Any], code: str
) -> None:
    before = shown(hass, entity_id), await lists.items(entity_id)
    assert await lists.call(service, entity_id, **data) == code
    assert (shown(hass, entity_id), await lists.items(entity_id)) == before


async def test_the_agent_reads_the_items_inside_home_assistant(
    hass: HomeAssistant, lists: Lists
) -> None:
    """HassBackend's describe asks todo.get_items for them, with a response: the twin's items."""
    assert await async_setup_component(hass, "homeassistant", {})
    async_expose_entity(hass, "conversation", SHOPPING, True)
    assert (
        await lists.call("add_item", item="Tea", due_datetime="2026-03-01T18:00:00+01:00") is None
    )
    inside = await HassBackend(hass).describe(SHOPPING)
    on_the_twin = describe(lists.other, SHOPPING)
    assert inside["items"] == on_the_twin["items"]
    assert inside["items"][-1] == {
        "uid": "4", "summary": "Tea", "status": "needs_action", "due": "2026-03-01T17:00:00+00:00"
    }  # fmt: skip
    assert inside["services"] == on_the_twin["services"]
    assert inside["state"] == "3"

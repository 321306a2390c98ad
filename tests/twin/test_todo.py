"""todo: Home Assistant's to-do list services, feature checks and errors in the twin, and where
the items are read (the manual, goal conditions) and carried (home files, snapshots, inventories).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from twin import tools
from twin.conditions import compile_condition
from twin.domains import todo
from twin.errors import (
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
)
from twin.home import Home, ServiceResult
from twin.homefile import dump_home, import_ha_snapshot, load_home
from twin.registry import Area, EntityEntry
from twin.verifier import Verifier

SHOPPING = "todo.shopping_list"  # every feature
CHORES = "todo.chores"  # add, update and remove only
READ_ONLY = "todo.birthdays"  # no feature: a calendar's list that cannot be edited
EVERY = 127
BASIC = todo.CREATE_TODO_ITEM | todo.DELETE_TODO_ITEM | todo.UPDATE_TODO_ITEM
ITEMS = [
    {"uid": "a1", "summary": "Milk", "status": "needs_action", "due": "2026-01-02"},
    {"uid": "a2", "summary": "Eggs", "status": "completed", "description": "Dozen"},
    {"uid": "a3", "summary": "Bread", "status": "needs_action"},
]


def make_home() -> Home:
    """A kitchen with a shopping list of three items, two open; chores; a read-only list."""
    home = Home()
    home.add_area(Area("kitchen", "Kitchen"))
    for entry, state, items in (
        (
            EntityEntry(SHOPPING, "Shopping list", area_id="kitchen", supported_features=EVERY),
            "2",
            ITEMS,
        ),
        (EntityEntry(CHORES, "Chores", supported_features=BASIC), "0", []),
        (EntityEntry(READ_ONLY, "Birthdays"), "0", []),
    ):
        added = home.add_entity(entry, state)
        home.states[entry.entity_id] = replace(added, hidden={"items": items})
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str = SHOPPING, **data: Any) -> ServiceResult:
    return home.call_service("todo", service, data, {"entity_id": entity_id})


def items(home: Home, entity_id: str = SHOPPING) -> list[dict[str, Any]]:
    return list(home.state(entity_id).hidden["items"])


def summaries(home: Home, entity_id: str = SHOPPING) -> list[tuple[str, str]]:
    return [(item["summary"], item["status"]) for item in items(home, entity_id)]


def test_features_and_services_match_home_assistant() -> None:
    assert todo.DOMAIN.features == {
        "create_todo_item": 1,
        "delete_todo_item": 2,
        "update_todo_item": 4,
        "move_todo_item": 8,
        "set_due_date_on_item": 16,
        "set_due_datetime_on_item": 32,
        "set_description_on_item": 64,
    }
    services = todo.DOMAIN.services
    assert set(services) == {
        "add_item",
        "update_item",
        "remove_item",
        "remove_completed_items",
        "get_items",
    }
    assert services["add_item"].required_features == (1,)
    assert services["update_item"].required_features == (4,)
    assert services["remove_item"].required_features == (2,)
    assert services["remove_completed_items"].required_features == (2,)
    assert services["get_items"].required_features == ()


def test_the_state_counts_open_items(home: Home) -> None:
    assert home.state(SHOPPING).state == "2"
    call(home, "add_item", item="  Butter ")
    assert home.state(SHOPPING).state == "3"
    assert items(home)[-1] == {"uid": "4", "summary": "Butter", "status": "needs_action"}
    call(home, "update_item", item="Milk", status="completed")
    assert home.state(SHOPPING).state == "2"
    call(home, "remove_completed_items")
    assert summaries(home) == [("Bread", "needs_action"), ("Butter", "needs_action")]
    assert home.state(SHOPPING).state == "2"


def test_add_item_with_a_due_date_time_and_description(home: Home) -> None:
    call(home, "add_item", item="Cake", due_date="2026-03-01", description="Chocolate")
    call(home, "add_item", item="Party", due_datetime="2026-03-01T18:00:00+01:00")
    call(home, "add_item", item="Call", due_datetime="2026-03-01 09:00:00")
    assert items(home)[3:] == [
        {
            "uid": "4",
            "summary": "Cake",
            "status": "needs_action",
            "due": "2026-03-01",
            "description": "Chocolate",
        },
        {
            "uid": "5",
            "summary": "Party",
            "status": "needs_action",
            "due": "2026-03-01T17:00:00+00:00",
        },
        {
            "uid": "6",
            "summary": "Call",
            "status": "needs_action",
            "due": "2026-03-01T09:00:00+00:00",
        },
    ]


def test_update_item_finds_by_uid_or_summary_and_changes_only_what_it_is_given(
    home: Home,
) -> None:
    call(home, "update_item", item="a3", rename=" Rye bread ", description="Sliced")
    call(home, "update_item", item="Milk", due_date=None)
    call(home, "update_item", item="Eggs", status="needs_action", description=None)
    assert items(home) == [
        {"uid": "a1", "summary": "Milk", "status": "needs_action"},
        {"uid": "a2", "summary": "Eggs", "status": "needs_action"},
        {"uid": "a3", "summary": "Rye bread", "status": "needs_action", "description": "Sliced"},
    ]
    assert home.state(SHOPPING).state == "3"


def test_remove_item_takes_several_by_uid_or_summary(home: Home) -> None:
    call(home, "remove_item", item=["Milk", "a2"])
    assert summaries(home) == [("Bread", "needs_action")]
    call(home, "remove_item", item="Bread")
    assert items(home) == []
    assert home.state(SHOPPING).state == "0"


@pytest.mark.parametrize(
    ("service", "entity_id", "data", "error", "message"),
    [
        (
            "update_item",
            SHOPPING,
            {"item": "Tea", "status": "completed"},
            ServiceValidationError,
            "Unable to find to-do list item: Tea",
        ),
        (
            "remove_item",
            SHOPPING,
            {"item": ["Milk", "Tea"]},
            ServiceValidationError,
            "Unable to find to-do list item: Tea",
        ),
        (
            "add_item",
            CHORES,
            {"item": "Dust", "due_date": "2026-01-05"},
            ServiceValidationError,
            "Entity does not support setting field: due_date",
        ),
        (
            "add_item",
            CHORES,
            {"item": "Dust", "description": "Shelves"},
            ServiceValidationError,
            "Entity does not support setting field: description",
        ),
        (
            "add_item",
            CHORES,
            {"item": "Dust", "due_datetime": None},
            ServiceValidationError,
            "Entity does not support setting field: due_datetime",
        ),
        ("add_item", SHOPPING, {"item": "   "}, InvalidServiceDataError, "item"),
        (
            "add_item",
            SHOPPING,
            {"item": "Tea", "due_date": "2026-02-30"},
            InvalidServiceDataError,
            "due_date",
        ),
        (
            "add_item",
            SHOPPING,
            {"item": "Tea", "due_datetime": "soon"},
            InvalidServiceDataError,
            "due_datetime",
        ),
        (
            "add_item",
            SHOPPING,
            {"item": "Tea", "due_date": "2026-02-01", "due_datetime": "2026-02-01T10:00:00"},
            InvalidServiceDataError,
            "at most one",
        ),
        ("update_item", SHOPPING, {"item": "Milk"}, InvalidServiceDataError, "at least one"),
        (
            "update_item",
            SHOPPING,
            {"item": "Milk", "status": "done"},
            InvalidServiceDataError,
            "status",
        ),
        (
            "update_item",
            SHOPPING,
            {"item": "", "status": "completed"},
            InvalidServiceDataError,
            "item",
        ),
        ("add_item", READ_ONLY, {"item": "Tea"}, ServiceNotSupportedError, "add_item"),
        ("remove_completed_items", READ_ONLY, {}, ServiceNotSupportedError, "remove_completed"),
        ("get_items", SHOPPING, {}, ServiceValidationError, "return_response=True"),
    ],
)
def test_refused_calls_change_nothing(
    home: Home, service: str, entity_id: str, data: dict[str, Any], error: type, message: str
) -> None:
    before = dict(home.states)
    with pytest.raises(error, match=message):
        call(home, service, entity_id, **data)
    assert home.states == before


def test_get_items_is_refused_first_as_home_assistant_refuses_it(home: Home) -> None:
    """SupportsResponse.ONLY: refused before the target or the data are looked at."""
    with pytest.raises(ServiceValidationError, match="describe an entity to read its items"):
        home.call_service("todo", "get_items", {"status": "nonsense"}, strict=False)


def test_the_agent_reads_the_items_with_describe(home: Home) -> None:
    manual = tools.describe(home, SHOPPING)
    assert manual["state"] == "2"
    assert manual["items"] == ITEMS
    assert set(manual["services"]["add_item"]["fields"]) == {
        "item",
        "due_date",
        "due_datetime",
        "description",
    }
    assert set(tools.describe(home, CHORES)["services"]["add_item"]["fields"]) == {"item"}
    refused = tools.call_service(home, "todo", "get_items", {"entity_id": SHOPPING})
    assert refused["error"]["code"] == "validation_error"


def test_goal_conditions_read_an_item(home: Home) -> None:
    on_the_list = compile_condition('item("todo.shopping_list", "Milk") == "needs_action"')
    assert on_the_list.holds(home)
    call(home, "update_item", item="Milk", status="completed")
    assert not on_the_list.holds(home)
    assert compile_condition('item("todo.shopping_list", "a1") == "completed"').holds(home)
    assert compile_condition('item("todo.shopping_list", "Tea") == None').holds(home)
    assert compile_condition('item("todo.chores", "Tea") == None').holds(home)


def test_a_list_whose_items_the_twin_cannot_see_keeps_their_count(home: Home) -> None:
    """A snapshot's list has a count and no items: the twin counts what it adds on top."""
    snapshot = {
        "states": [
            {
                "entity_id": "todo.groceries",
                "state": "3",
                "attributes": {"friendly_name": "Groceries", "supported_features": 7},
            }
        ]
    }
    imported, _ = import_ha_snapshot(snapshot)
    assert imported.state("todo.groceries").state == "3"
    assert "items" not in tools.describe(imported, "todo.groceries")  # none it knows of
    imported.call_service("todo", "add_item", {"item": "Tea"}, {"entity_id": "todo.groceries"})
    assert imported.state("todo.groceries").state == "4"
    imported.call_service(
        "todo",
        "update_item",
        {"item": "Tea", "status": "completed"},
        {"entity_id": "todo.groceries"},
    )
    assert imported.state("todo.groceries").state == "3"
    with pytest.raises(ServiceValidationError, match="Unable to find"):
        imported.call_service(
            "todo", "remove_item", {"item": "Milk"}, {"entity_id": "todo.groceries"}
        )


def test_home_files_keep_the_items(home: Home) -> None:
    call(home, "add_item", item="Tea", description="Green")
    again = load_home(dump_home(home))
    assert again.state(SHOPPING) == home.state(SHOPPING)
    assert items(again) == items(home)


def test_an_inventory_carries_synthetic_home_todo_items() -> None:
    inventory = {
        "areas": [{"name": "Kitchen", "id": "kitchen"}],
        "entities": [
            {
                "id": "todo.shopping",
                "name": "Shopping",
                "area": "kitchen",
                "attributes": {
                    "supported_features": [
                        "todo.TodoListEntityFeature.CREATE_TODO_ITEM",
                        "todo.TodoListEntityFeature.UPDATE_TODO_ITEM",
                    ],
                    "todo_items": [
                        {"summary": "Milk", "status": "needs_action"},
                        {"summary": "Jam", "uid": "j", "status": "completed", "due": None},
                        {"summary": "Tea"},
                    ],
                },
            }
        ],
    }
    home, skipped = import_ha_snapshot(inventory)
    assert skipped == []
    state = home.state("todo.shopping")
    assert state.state == "2"
    assert "todo_items" not in state.attributes
    assert state.attributes["supported_features"] == BASIC & ~todo.DELETE_TODO_ITEM
    assert state.hidden["items"] == [
        {"summary": "Milk", "status": "needs_action", "uid": "4"},
        {"summary": "Jam", "uid": "j", "status": "completed"},
        {"summary": "Tea", "uid": "5", "status": "needs_action"},
    ]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["Milk"], "expected an item"),
        ([{"status": "needs_action"}], "summary"),
        ([{"summary": "Milk", "status": "bought"}], "status"),
        ([{"summary": "Milk", "uid": "1"}, {"summary": "Tea", "uid": "1"}], "same uid"),
    ],
)
def test_an_inventory_with_items_no_list_holds_is_refused(items: list[Any], message: str) -> None:
    inventory = {"entities": [{"id": "todo.shopping", "attributes": {"todo_items": items}}]}
    with pytest.raises(HomeDefinitionError, match=f"entities\\[0\\].*todo_items.*{message}"):
        import_ha_snapshot(inventory)


@pytest.mark.parametrize(
    ("state", "hidden", "message"),
    [
        ("many", {}, "number of open items"),
        ("0", {"items": ITEMS}, "keeps 2 that need action"),
        ("2", {"items": "Milk"}, "list of items"),
        ("1", {"items": [{"uid": "1", "summary": "Tea", "status": "done"}]}, "status"),
        ("1", {"items": [{"uid": "1", "summary": "Tea"}]}, "status"),
        (
            "1",
            {"items": [{"uid": "1", "summary": "Tea", "status": "needs_action", "due": 5}]},
            "due",
        ),
        ("2", {"items": [ITEMS[0], {**ITEMS[2], "uid": "a1"}]}, "same uid"),
        ("1", {"items": [{**ITEMS[0], "colour": "red"}]}, "no key"),
    ],
)
def test_a_home_file_with_a_list_no_home_assistant_can_show_is_refused(
    home: Home, state: str, hidden: dict[str, Any], message: str
) -> None:
    home.states[SHOPPING] = replace(home.states[SHOPPING], state=state, hidden=hidden)
    with pytest.raises(HomeDefinitionError, match=message):
        load_home(dump_home(home))


def test_renaming_an_item_of_another_list_is_collateral(home: Home) -> None:
    verifier = Verifier(home, ['item("todo.chores", "Dust") == "needs_action"'])
    call(home, "add_item", CHORES, item="Dust")
    call(home, "update_item", item="Bread", rename="Rye bread")  # the count stays
    report = verifier.step(home)
    assert report.done
    assert report.collateral == (SHOPPING,)

"""todo: to-do and shopping lists (Home Assistant's TodoListEntity and its services).

Schemas, feature flags, required features and errors follow Home Assistant's todo services: an
item is found by its uid or its summary (the first that matches); a field the list lacks the
feature for (`due_date`, `due_datetime`, `description`) is a ServiceValidationError, as is an item
the list does not have. The state is the number of open (`needs_action`) items, as
TodoListEntity's.

Home Assistant shows no item in the state: a list keeps them, and gives them through
`todo.get_items`, which only answers a caller that asks for a response. The twin's service layer
returns none, so `get_items` is refused (`response_only`) as Home Assistant refuses a call
without `return_response`, and the twin keeps the items in the entity's memory (`hidden["items"]`,
Home Assistant's get_items form: uid, summary, status, and due and description when set), where
the device manual (`describe`) and goal conditions (`item(id, summary)`) read them.

A list imported from a Home Assistant snapshot (or mirrored) has a count but no items: the twin
keeps the count for the items it cannot see, and adds or takes away the ones it handles. Due
times are kept in UTC, the twin's clock: one without an offset is taken as UTC (Home Assistant
takes it in its own time zone).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import voluptuous as vol

from ..errors import HomeDefinitionError, ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import ensure_list, shown, string
from .descriptor import Carrying, Domain, FieldNotes, has_feature
from .rules import EntityRules

CREATE_TODO_ITEM = 1
DELETE_TODO_ITEM = 2
UPDATE_TODO_ITEM = 4
MOVE_TODO_ITEM = 8
SET_DUE_DATE_ON_ITEM = 16
SET_DUE_DATETIME_ON_ITEM = 32
SET_DESCRIPTION_ON_ITEM = 64

NEEDS_ACTION = "needs_action"
COMPLETED = "completed"
STATUSES = (NEEDS_ACTION, COMPLETED)

ATTR_ITEM = "item"
ATTR_RENAME = "rename"
ATTR_STATUS = "status"
ATTR_DUE_DATE = "due_date"
ATTR_DUE_DATETIME = "due_datetime"
ATTR_DESCRIPTION = "description"
# What the list keeps in its memory, and an item's keys there (TodoItem's, as get_items gives).
ITEMS = "items"
UID = "uid"
SUMMARY = "summary"
DUE = "due"
# The synthetic-home argument that holds a list's items (TodoItem keyword arguments).
INVENTORY_ITEMS = "todo_items"

# The optional item fields, each with the feature it needs and the item key it sets (HA's
# TODO_ITEM_FIELDS).
_ITEM_FIELDS = {
    ATTR_DUE_DATE: (SET_DUE_DATE_ON_ITEM, DUE),
    ATTR_DUE_DATETIME: (SET_DUE_DATETIME_ON_ITEM, DUE),
    ATTR_DESCRIPTION: (SET_DESCRIPTION_ON_ITEM, ATTR_DESCRIPTION),
}


def _due_date(value: str) -> str:
    """cv.date's text: a date such as 2026-01-02."""
    try:
        return datetime.strptime(value, "%Y-%m-%d").date().isoformat()
    except ValueError:
        raise vol.Invalid("Could not parse date") from None


def _due_datetime(value: str) -> str:
    """cv.datetime's text: an ISO 8601 time, kept in UTC (without an offset, it is UTC)."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise vol.Invalid(f"Invalid datetime specified: {value}") from None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat()


# An item's summary (stripped) and the name that finds one (as given), not empty.
_SUMMARY = vol.All(string, str.strip, vol.Length(min=1))
_NAME = vol.All(string, vol.Length(min=1))


def _at_most_one(data: dict[str, Any]) -> dict[str, Any]:
    """Not both a due date and a due time (probatio.AtMostOne)."""
    if ATTR_DUE_DATE in data and ATTR_DUE_DATETIME in data:
        raise vol.Invalid(f"must contain at most one of {ATTR_DUE_DATE}, {ATTR_DUE_DATETIME}.")
    return data


def _at_least_one(data: dict[str, Any]) -> dict[str, Any]:
    """An update that changes something (probatio.AtLeastOne)."""
    changes = (ATTR_RENAME, ATTR_STATUS, *_ITEM_FIELDS)
    if not any(key in data for key in changes):
        raise vol.Invalid(f"must contain at least one of {', '.join(changes)}.")
    return data


_FIELDS: dict[Any, Callable[[Any], Any]] = {
    vol.Optional(ATTR_DUE_DATE): vol.Any(None, vol.All(string, _due_date)),
    vol.Optional(ATTR_DUE_DATETIME): vol.Any(None, vol.All(string, _due_datetime)),
    vol.Optional(ATTR_DESCRIPTION): vol.Any(None, string),
}
_ADD = vol.All(schema({vol.Required(ATTR_ITEM): _SUMMARY, **_FIELDS}), _at_most_one)
_UPDATE = vol.All(
    schema(
        {
            vol.Required(ATTR_ITEM): _NAME,
            vol.Optional(ATTR_RENAME): _SUMMARY,
            vol.Optional(ATTR_STATUS): vol.In(STATUSES),
            **_FIELDS,
        }
    ),
    _at_most_one,
    _at_least_one,
)
_REMOVE = schema({vol.Required(ATTR_ITEM): vol.All(ensure_list, [string])})
_GET = schema({vol.Optional(ATTR_STATUS): vol.All(ensure_list, [vol.In(STATUSES)])})


def items_of(state: State | EntityDraft) -> list[dict[str, Any]]:
    """The list's items as it keeps them (none when the twin does not know them)."""
    items: list[dict[str, Any]] = state.hidden.get(ITEMS) or []
    return items


def _open(items: list[dict[str, Any]]) -> int:
    return sum(item[ATTR_STATUS] == NEEDS_ACTION for item in items)


def _count(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def _keep(entity: EntityDraft, items: list[dict[str, Any]]) -> None:
    """Keep `items`; the state counts the open ones, with those the twin cannot see."""
    before = _open(items_of(entity))
    shown_before = _count(entity.state)
    unseen = 0 if shown_before is None else max(shown_before - before, 0)
    entity.hidden[ITEMS] = items
    entity.state = str(unseen + _open(items))


def _find(items: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    """The first item whose uid or summary is `name` (HA's _find_by_uid_or_summary)."""
    return next((item for item in items if name in (item.get(UID), item[SUMMARY])), None)


def _found(entity: EntityDraft, name: str) -> dict[str, Any]:
    found = _find(items_of(entity), name)
    if found is None:
        raise ServiceValidationError(f"Unable to find to-do list item: {name}")
    return found


def _check_fields(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Refuse a field the list has not the feature for (HA's _validate_supported_features)."""
    for key, (feature, _) in _ITEM_FIELDS.items():
        if key in data and not entity.supports(feature):
            raise ServiceValidationError(f"Entity does not support setting field: {key}")


def _set_fields(item: dict[str, Any], data: dict[str, Any]) -> None:
    """Set (or, with None, clear) the item fields the call gives."""
    for key, (_, item_key) in _ITEM_FIELDS.items():
        if key in data:
            if data[key] is None:
                item.pop(item_key, None)
            else:
                item[item_key] = data[key]


def _new_uid(items: list[dict[str, Any]]) -> str:
    """A uid no item of the list has: the twin's are numbers, so that every run is the same."""
    taken = {item.get(UID) for item in items}
    number = len(items) + 1
    while str(number) in taken:
        number += 1
    return str(number)


def add_item(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Add an open item."""
    _check_fields(entity, data)
    items = [dict(item) for item in items_of(entity)]
    item = {UID: _new_uid(items), SUMMARY: data[ATTR_ITEM], ATTR_STATUS: NEEDS_ACTION}
    _set_fields(item, data)
    _keep(entity, [*items, item])


def update_item(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Rename an item, open or complete it, or set its due time or description."""
    found = _found(entity, data[ATTR_ITEM])
    _check_fields(entity, data)
    updated = dict(found)
    if ATTR_RENAME in data:
        updated[SUMMARY] = data[ATTR_RENAME]
    if ATTR_STATUS in data:
        updated[ATTR_STATUS] = data[ATTR_STATUS]
    _set_fields(updated, data)
    _keep(entity, [updated if item is found else dict(item) for item in items_of(entity)])


def remove_item(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Remove items, each named by uid or summary; all of them or, if one is missing, none."""
    uids = {_found(entity, name).get(UID) for name in data[ATTR_ITEM]}
    _keep(entity, [dict(item) for item in items_of(entity) if item.get(UID) not in uids])


def remove_completed_items(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Remove the completed items."""
    kept = [dict(item) for item in items_of(entity) if item[ATTR_STATUS] != COMPLETED]
    if len(kept) < len(items_of(entity)):
        _keep(entity, kept)


def get_items(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Change nothing: it reads the items, for Home Assistant's answer (`response_only`)."""


def _item(value: Any) -> Any:
    """One kept item: uid, summary and status, and due and description when set, as text."""
    if not isinstance(value, Mapping):
        raise vol.Invalid(f"expected an item (uid, summary, status...), got {shown(value)}")
    known = (UID, SUMMARY, ATTR_STATUS, DUE, ATTR_DESCRIPTION)
    if (odd := next((key for key in value if key not in known), None)) is not None:
        raise vol.Invalid(f"an item has no key {shown(odd)}; its keys: {', '.join(known)}")
    for key in (UID, SUMMARY, ATTR_STATUS):
        if not isinstance(value.get(key), str) or not value[key]:
            raise vol.Invalid(f"an item needs its {key} (text), got {shown(value)}")
    if value[ATTR_STATUS] not in STATUSES:
        raise vol.Invalid(f"an item's status is needs_action or completed, got {shown(value)}")
    for key in (DUE, ATTR_DESCRIPTION):
        if key in value and not isinstance(value[key], str):
            raise vol.Invalid(f"an item's {key} is text, got {shown(value[key])}")
    return value


def _items(value: Any) -> Any:
    if not isinstance(value, list | tuple):
        raise vol.Invalid(f"expected a list of items, got {shown(value)}")
    for item in value:
        _item(item)
    return value


def _count_state(value: str) -> str:
    """A state that is a count of open items."""
    if _count(value) is None:
        raise vol.Invalid(f"expected the number of open items, got {shown(value)}")
    return value


def _consistent(entry: EntityEntry, state: State) -> None:
    """No fewer open items counted than the list keeps; one uid per item."""
    count = _count(state.state)
    items = items_of(state)
    if count is not None and count < _open(items):
        raise vol.Invalid(
            f"state: {count} open items, but the list keeps {_open(items)} that need action"
        )
    try:
        _unique(items)
    except vol.Invalid as err:
        raise vol.Invalid(f"hidden.items: {err.msg}") from None


def _unique(items: list[dict[str, Any]]) -> None:
    uids = [item[UID] for item in items]
    if len(set(uids)) < len(uids):
        raise vol.Invalid("two items have the same uid")


def _inventory_items(entity: EntityDraft) -> None:
    """A synthetic-home list's `todo_items` (TodoItem arguments: None is unset) as the twin
    keeps them, with a uid and a status where they have none; its state counts the open ones."""
    raw = entity.attributes.pop(INVENTORY_ITEMS, None)
    if raw is None:
        return
    try:
        items = [_given(given) for given in ensure_list(raw)]
        for item in items:
            item.setdefault(ATTR_STATUS, NEEDS_ACTION)
            if UID not in item:
                item[UID] = _new_uid(items)
        _unique(_items(items))
    except vol.Invalid as err:
        raise HomeDefinitionError(f"attributes.{INVENTORY_ITEMS}: {err.msg}") from None
    entity.hidden[ITEMS] = items
    entity.state = str(_open(items))


def _given(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise vol.Invalid(f"expected an item (summary, status...), got {shown(value)}")
    return {key: part for key, part in value.items() if part is not None}


RULES = EntityRules({ITEMS: _items}, consistent=_consistent, state=_count_state)

_APPLIES = {key: FieldNotes(applies=has_feature(need)) for key, (need, _) in _ITEM_FIELDS.items()}

DOMAIN = Domain.of(
    "todo",
    [
        Service("add_item", add_item, _ADD, (CREATE_TODO_ITEM,), "Adds a new to-do list item."),
        Service(
            "update_item",
            update_item,
            _UPDATE,
            (UPDATE_TODO_ITEM,),
            "Updates an existing to-do list item based on its name or uid.",
        ),
        Service(
            "remove_item",
            remove_item,
            _REMOVE,
            (DELETE_TODO_ITEM,),
            "Removes existing to-do list items by name or uid.",
        ),
        Service(
            "remove_completed_items",
            remove_completed_items,
            required_features=(DELETE_TODO_ITEM,),
            description="Removes all to-do list items that have been completed.",
        ),
        Service(
            "get_items",
            get_items,
            _GET,
            description="Gets items on a to-do list (only with return_response, which the "
            "tools do not ask for: describe lists the items).",
            response_only=True,
        ),
    ],
    {
        "create_todo_item": CREATE_TODO_ITEM,
        "delete_todo_item": DELETE_TODO_ITEM,
        "update_todo_item": UPDATE_TODO_ITEM,
        "move_todo_item": MOVE_TODO_ITEM,
        "set_due_date_on_item": SET_DUE_DATE_ON_ITEM,
        "set_due_datetime_on_item": SET_DUE_DATETIME_ON_ITEM,
        "set_description_on_item": SET_DESCRIPTION_ON_ITEM,
    },
    rules=RULES,
    device=True,
    fields=_APPLIES,
    contents=ITEMS,
    carrying=Carrying(shows=_inventory_items),
    color="#e9c46a",
)

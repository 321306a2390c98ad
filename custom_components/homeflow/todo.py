"""To-do lists of a virtual home."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, override

from homeassistant.components.todo import (
    TodoItem,
    TodoItemStatus,
    TodoListEntity,
    TodoListEntityFeature,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.todo import (
    ATTR_DESCRIPTION,
    ATTR_DUE_DATE,
    ATTR_DUE_DATETIME,
    ATTR_ITEM,
    ATTR_RENAME,
    ATTR_STATUS,
    DUE,
    SUMMARY,
    UID,
    items_of,
)
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's to-do lists."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowTodoList(virtual, e) for e in virtual.entities_of("todo"))


def _due(text: str | None) -> date | datetime | None:
    """A kept due time as TodoItem holds it: a date, or a time (the twin keeps UTC)."""
    if text is None:
        return None
    return date.fromisoformat(text) if len(text) == 10 else datetime.fromisoformat(text)


def _due_data(due: date | datetime | None, *, dates: bool) -> dict[str, Any]:
    """A due time as the twin's service field for it; None clears it through the field the
    list has (`dates`: it takes due dates)."""
    if isinstance(due, datetime):
        return {ATTR_DUE_DATETIME: due.astimezone(UTC).isoformat()}
    if isinstance(due, date):
        return {ATTR_DUE_DATE: due.isoformat()}
    return {ATTR_DUE_DATE if dates else ATTR_DUE_DATETIME: None}


class HomeFlowTodoList(HomeFlowEntity, TodoListEntity):
    """A twin to-do list. Home Assistant's todo services find the item and build the new one;
    the twin's services make the change, so that the twin's list is the one Home Assistant
    shows."""

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin list, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = TodoListEntityFeature(entry.supported_features)

    @property  # type: ignore[misc]
    @override
    def todo_items(self) -> list[TodoItem]:
        """The twin's items."""
        return [
            TodoItem(
                summary=item[SUMMARY],
                uid=item[UID],
                status=TodoItemStatus(item[ATTR_STATUS]),
                due=_due(item.get(DUE)),
                description=item.get(ATTR_DESCRIPTION),
            )
            for item in items_of(self.twin)
        ]

    @property
    @override
    def state(self) -> int | None:
        """The twin's count of open items, which counts those of an imported list that it
        cannot see too."""
        state = self.twin.state
        return int(state) if state.isdigit() else None

    @override
    async def async_create_todo_item(self, item: TodoItem) -> None:
        """Add an item."""
        data: dict[str, Any] = {ATTR_ITEM: item.summary}
        if item.due is not None:
            data |= _due_data(item.due, dates=True)
        if item.description is not None:
            data[ATTR_DESCRIPTION] = item.description
        self.call("add_item", **data)

    @override
    async def async_update_todo_item(self, item: TodoItem) -> None:
        """Update an item: what differs from the twin's, and its status."""
        old = next(old for old in self.todo_items if old.uid == item.uid)
        data: dict[str, Any] = {ATTR_ITEM: item.uid, ATTR_STATUS: str(item.status)}
        if item.summary != old.summary:
            data[ATTR_RENAME] = item.summary
        if item.due != old.due:
            dates = bool(self.supported_features & TodoListEntityFeature.SET_DUE_DATE_ON_ITEM)
            data |= _due_data(item.due, dates=dates)
        if item.description != old.description:
            data[ATTR_DESCRIPTION] = item.description
        self.call("update_item", **data)

    @override
    async def async_delete_todo_items(self, uids: list[str]) -> None:
        """Remove items by uid."""
        self.call("remove_item", **{ATTR_ITEM: uids})

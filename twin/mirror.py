"""A twin of a live Home Assistant home, kept in sync from its event stream.

`Mirror` builds a Home from Home Assistant's registries and states as its WebSocket API gives them
(import_ha_snapshot, keeping the entities of domains the twin does not simulate, read-only, so
that conditions can read a `person` or a `sun`), then applies Home Assistant's events:
`state_changed` writes the new state exactly as Home Assistant gives it (attributes and
timestamps), and `<floor|area|device|entity>_registry_updated` refetches the registries and
rebuilds the home, as does an entity that appears or goes. The verifier then checks conditions on
a real home. Each change applied comes back as an `Update` with Home Assistant's time of the
change and the time the mirror had it, so that the delay can be measured (bench/mirror_delay.py).

The link to Home Assistant is a small protocol (agent.backends.home_assistant.HomeAssistantBackend
is one), so that the twin imports neither Home Assistant nor an HTTP client.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from .errors import TwinError
from .home import Home
from .homefile import import_ha_snapshot, with_tuples
from .state import State

# Home Assistant's registries, each listed by config/<kind>_registry/list, and the snapshot keys.
REGISTRIES = {"floor": "floors", "area": "areas", "device": "devices", "entity": "entities"}
# A registry's event, and the key of its data that names the item changed.
REGISTRY_EVENTS = {
    f"{kind}_registry_updated": ("device_id" if kind == "device" else f"{kind}_id")
    for kind in REGISTRIES
}
STATE_CHANGED = "state_changed"
EVENT_TYPES = (STATE_CHANGED, *REGISTRY_EVENTS)
SYNC = "sync"  # an Update's event type when the whole home was fetched again
NOT_SYNCED = "The mirror has no home yet: sync() or follow() first"


class MirrorError(TwinError):
    """The mirror was used before it synced, or was given an event it does not follow."""

    code = "mirror_error"


class Link(Protocol):
    """What the mirror needs of a live Home Assistant."""

    async def registry(self, kind: str) -> list[dict[str, Any]]:
        """One registry as config/<kind>_registry/list gives it: floor, area, device or entity."""
        ...

    async def states(self) -> dict[str, dict[str, Any]]:
        """Every state object, by entity id."""
        ...

    def subscribe_events(
        self, event_types: Sequence[str]
    ) -> AsyncIterator[Mapping[str, Any] | None]:
        """The events of these types as the WebSocket API gives them (`event_type`, `data`,
        `time_fired`); None once subscribed, and again after every reconnection, since events
        may have been lost in between."""
        ...


@dataclass(frozen=True, slots=True)
class Update:
    """One change the mirror applied: the event's type, the entity or registry item it was
    about, when Home Assistant made the change and when the mirror had it (epoch seconds)."""

    event_type: str
    subject: str
    changed_at: float
    applied_at: float

    @property
    def delay(self) -> float:
        """Seconds from Home Assistant's change to the mirror's (a sync: how long it took)."""
        return self.applied_at - self.changed_at


class Mirror:
    """A Home that follows a live Home Assistant through a `Link`.

    `home` is replaced when registries change, so read it anew after each update.
    """

    def __init__(
        self, link: Link, name: str = "Home", *, clock: Callable[[], float] = time.time
    ) -> None:
        self.link = link
        self.name = name
        self.skipped: list[str] = []  # registry entries without a state (disabled ones)
        self._clock = clock
        self._registries: dict[str, list[dict[str, Any]]] = {}
        self._states: dict[str, Mapping[str, Any]] = {}
        self._home: Home | None = None

    @property
    def home(self) -> Home:
        """The mirrored home as of the last update."""
        if self._home is None:
            raise MirrorError(NOT_SYNCED)
        return self._home

    async def sync(self) -> Update:
        """Fetch every registry and state and build the home from them."""
        started = self._clock()
        for kind in REGISTRIES:
            self._registries[kind] = await self.link.registry(kind)
        self._states = dict(await self.link.states())
        self._rebuild()
        return Update(SYNC, "", started, self._clock())

    async def apply(self, event: Mapping[str, Any]) -> Update:
        """Apply one event as the WebSocket API gives it; registry events refetch the registries.

        A state older than the one the mirror has is ignored: it comes from an event sent before
        the last sync fetched the states.
        """
        if self._home is None:
            raise MirrorError(NOT_SYNCED)
        event_type = event.get("event_type")
        data = event.get("data") or {}
        if event_type == STATE_CHANGED:
            entity_id, new = data["entity_id"], data.get("new_state")
            changed_at = _time(new["last_updated"] if new else event["time_fired"])
            self._apply_state(entity_id, new)
        elif event_type in REGISTRY_EVENTS:
            entity_id = str(data.get(REGISTRY_EVENTS[event_type]) or "")
            changed_at = _time(event["time_fired"])
            for kind in REGISTRIES:
                self._registries[kind] = await self.link.registry(kind)
            self._rebuild()
        else:
            raise MirrorError(f"Not an event the mirror follows: {event_type!r}; {EVENT_TYPES}")
        return Update(event_type, entity_id, changed_at, self._clock())

    async def follow(self) -> AsyncGenerator[Update, None]:
        """Sync, then apply Home Assistant's events as they come, syncing again after every
        reconnection; yields each update once applied."""
        async for event in self.link.subscribe_events(EVENT_TYPES):
            yield await (self.sync() if event is None else self.apply(event))

    def _apply_state(self, entity_id: str, new: Mapping[str, Any] | None) -> None:
        old = self._states.get(entity_id)
        if new is None:
            self._states.pop(entity_id, None)
        elif old is None or _time(new["last_updated"]) >= _time(old["last_updated"]):
            self._states[entity_id] = new
        else:
            return
        home = self.home
        if new is not None and entity_id in home.entities:
            state = _state(new)
            home.states[entity_id] = state
            home.now = max(home.now, state.last_updated)
        else:  # an entity appeared or went: rebuilt with its registry entry
            self._rebuild()

    def _rebuild(self) -> None:
        """The home anew from the registries and states held; states as Home Assistant has them
        (the import derives some attributes from the registry entry)."""
        snapshot = {
            "name": self.name,
            **{key: self._registries[kind] for kind, key in REGISTRIES.items()},
            "states": list(self._states.values()),
        }
        home, self.skipped = import_ha_snapshot(snapshot, keep_unmodelled=True)
        for entity_id in home.states:
            home.states[entity_id] = _state(self._states[entity_id])
        self._home = home


def _time(text: str) -> float:
    """Home Assistant's ISO 8601 time in epoch seconds."""
    return datetime.fromisoformat(text).timestamp()


def _state(raw: Mapping[str, Any]) -> State:
    """A twin State of a state object, with Home Assistant's tuples back where JSON made lists."""
    return State(
        raw["entity_id"],
        raw["state"],
        with_tuples(raw.get("attributes") or {}),
        _time(raw["last_changed"]),
        _time(raw["last_updated"]),
    )

"""Door locks of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.lock import LockEntity, LockEntityFeature, LockState
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains.lock import ATTR_CODE_FORMAT
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

_STATES = frozenset(state.value for state in LockState)

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's locks."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowLock(virtual, e) for e in virtual.entities_of("lock"))


def _in_state(state: LockState) -> Any:
    """A property that says whether the twin lock is in `state`."""
    return property(lambda self: self.twin.state == state, doc=f"Whether the lock is {state}.")


class HomeFlowLock(HomeFlowEntity, LockEntity):
    """A twin lock.

    Home Assistant checks a code against code_format (or puts in the user's default code) before
    the twin sees the call; the twin checks it again, as it does for its own callers.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin lock, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = LockEntityFeature(entry.supported_features)

    @property
    @override
    def code_format(self) -> str | None:
        """The regular expression a code must match, if the lock asks for one."""
        return self.attribute.get(ATTR_CODE_FORMAT)

    @property
    @override
    def is_locked(self) -> bool | None:
        """Whether the lock is locked; None (unknown) if the twin's state is not a lock state."""
        state = self.twin.state
        return state == LockState.LOCKED if state in _STATES else None

    is_locking = _in_state(LockState.LOCKING)
    is_unlocking = _in_state(LockState.UNLOCKING)
    is_open = _in_state(LockState.OPEN)
    is_opening = _in_state(LockState.OPENING)
    is_jammed = _in_state(LockState.JAMMED)

    @override
    async def async_lock(self, **kwargs: Any) -> None:
        """Lock, with the code if there is one."""
        self.call("lock", **kwargs)

    @override
    async def async_unlock(self, **kwargs: Any) -> None:
        """Unlock, with the code if there is one."""
        self.call("unlock", **kwargs)

    @override
    async def async_open(self, **kwargs: Any) -> None:
        """Unlatch the door, with the code if there is one."""
        self.call("open", **kwargs)

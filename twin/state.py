"""Entity state exactly as Home Assistant's state object, on the simulation clock."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

EMPTY: MappingProxyType[str, Any] = MappingProxyType({})


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses changes, as Home Assistant's state attributes are (its `ReadOnlyDict`).

    A State's attributes are shared with every snapshot that holds the State, so a change in
    place would alter the past too and bypass the service layer's validation. It stays a dict, so
    JSON and comparisons take it as one; `dict(attributes)` is a copy to change.
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "A state's attributes are read-only: change an entity with a service call "
            "(Home.call_service), or copy them with dict(attributes)"
        )

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle and deepcopy would otherwise rebuild it item by item through __setitem__.
        return (ReadOnlyDict, (dict(self),))


@dataclass(frozen=True, slots=True)
class State:
    """One entity's state. Immutable: a change makes a new State, so snapshots can share them.

    `hidden` holds what a real device remembers but Home Assistant does not show, such as the
    brightness a light returns to when it is turned on again.
    """

    entity_id: str
    state: str
    attributes: Mapping[str, Any]
    last_changed: float
    last_updated: float
    hidden: Mapping[str, Any] = field(default_factory=ReadOnlyDict)

    def __post_init__(self) -> None:
        # Frozen: nothing outside a service call may change a state, attributes included.
        if type(self.attributes) is not ReadOnlyDict:
            object.__setattr__(self, "attributes", ReadOnlyDict(self.attributes))
        if type(self.hidden) is not ReadOnlyDict:
            object.__setattr__(self, "hidden", ReadOnlyDict(self.hidden))

    @property
    def domain(self) -> str:
        """The entity's domain, e.g. `light`."""
        return self.entity_id.partition(".")[0]

    def as_dict(self) -> dict[str, Any]:
        """Home Assistant's JSON form of a state (as the REST API returns it)."""
        return {
            "entity_id": self.entity_id,
            "state": self.state,
            "attributes": dict(self.attributes),
            "last_changed": _isoformat(self.last_changed),
            "last_updated": _isoformat(self.last_updated),
        }


def _isoformat(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()

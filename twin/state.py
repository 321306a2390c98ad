"""Entity state exactly as Home Assistant's state object, on the simulation clock."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

EMPTY: MappingProxyType[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class State:
    """One entity's state. Immutable: a change makes a new State, so snapshots can share them.

    `hidden` holds what a real device remembers but Home Assistant does not show, such as the
    brightness a light returns to when it is turned on again.
    """

    entity_id: str
    state: str
    attributes: dict[str, Any]
    last_changed: float
    last_updated: float
    hidden: dict[str, Any] = field(default_factory=dict)

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

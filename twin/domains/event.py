"""event: what a device reports happening (a doorbell ring, a remote's button press).

Home Assistant's EventEntity: read-only, no services. The state is the time of the last event
(ISO 8601 in UTC, to the millisecond), `unknown` before the first; `event_type` is the last
event's type (None before), one of the entity's `event_types` (a capability), and the event's own
attributes stand beside it. The home fires events itself (`trigger`), as a device does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import voluptuous as vol

from ..registry import EntityEntry
from ..service import EntityDraft
from ..state import State
from ..validation import shown
from .descriptor import Carrying, Domain
from .rules import ANY_ENTITY_STATES, EntityRules, moment, moment_state, names, optional, text

ATTR_EVENT_TYPE = "event_type"
ATTR_EVENT_TYPES = "event_types"
# The smallest step between two events: Home Assistant's state has milliseconds, and keeps each
# event a new state.
MILLISECOND = 0.001


def trigger(entity: EntityDraft, event_type: str, attributes: dict[str, Any] | None = None) -> None:
    """An event of `event_type` at the home's time (`entity.now`), with its attributes; a
    ValueError for a type the entity does not have, as EventEntity._trigger_event raises. Like
    Home Assistant, a second event in the same millisecond is a millisecond later."""
    if event_type not in entity.capabilities.get(ATTR_EVENT_TYPES, ()):
        raise ValueError(f"Invalid event type {event_type} for {entity.entity_id}")
    when = entity.now
    if entity.state not in ANY_ENTITY_STATES:
        when = max(when, datetime.fromisoformat(entity.state).timestamp() + MILLISECOND)
    kept = {key: value for key, value in entity.attributes.items() if key in _KEPT}
    entity.attributes = {**kept, ATTR_EVENT_TYPE: event_type, **(attributes or {})}
    entity.state = moment(when, "milliseconds")


# What an event leaves of the last one's attributes: its event types and what Home Assistant's
# entity layer writes.
_KEPT = frozenset(
    (ATTR_EVENT_TYPES, "friendly_name", "device_class", "unit_of_measurement", "supported_features")
)


def _consistent(entry: EntityEntry, state: State) -> None:
    """A last event type among the entity's event types."""
    event_type = state.attributes.get(ATTR_EVENT_TYPE)
    types = entry.capabilities.get(ATTR_EVENT_TYPES)
    if event_type is not None and types is not None and event_type not in types:
        raise vol.Invalid(
            f"attributes.event_type: {shown(event_type)} is none of its event_types "
            f"({', '.join(types) or 'none'})"
        )


DOMAIN = Domain(
    "event",
    {},
    rules=EntityRules(
        {ATTR_EVENT_TYPES: names(), ATTR_EVENT_TYPE: optional(text)},
        consistent=_consistent,
        state=moment_state,
    ),
    key_attributes=(ATTR_EVENT_TYPE,),
    carrying=Carrying(capabilities=frozenset({ATTR_EVENT_TYPES})),
    color="#9d8189",
)

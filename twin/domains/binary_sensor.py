"""binary_sensor: read-only on/off entities; the room physics writes their states."""

from __future__ import annotations

from .descriptor import Asked, Domain
from .rules import ON_OFF, EntityRules

DOMAIN = Domain(
    "binary_sensor",
    {},
    rules=EntityRules(states=ON_OFF),
    key_attributes=("device_class",),
    # "Is the front door open?": Home Assistant's bs_open_states, of opening sensors only.
    asked=Asked(("on", "off"), frozenset({"door", "window", "garage_door", "opening"})),
    color="#ced4da",
)

"""binary_sensor: read-only on/off entities; the room physics writes their states."""

from __future__ import annotations

from .descriptor import Domain
from .rules import ON_OFF, EntityRules

DOMAIN = Domain(
    "binary_sensor",
    {},
    rules=EntityRules(states=ON_OFF),
    key_attributes=("device_class",),
    color="#ced4da",
)

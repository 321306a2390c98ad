"""sensor: read-only entities; the room physics writes their states."""

from __future__ import annotations

from .descriptor import Carrying, Domain
from .rules import EntityRules, names, optional, text

# What a sensor may hold (twin.domains.rules): an enum sensor's options, its state_class.
RULES = EntityRules({"state_class": optional(text), "options": optional(names())})

DOMAIN = Domain(
    "sensor",
    {},
    rules=RULES,
    key_attributes=("unit_of_measurement",),
    carrying=Carrying(capabilities=frozenset({"state_class", "options"})),
    color="#adb5bd",
)

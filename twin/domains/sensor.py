"""sensor and binary_sensor: read-only entities; the room physics writes their states."""

from __future__ import annotations

from ..service import Domain
from .rules import EntityRules, names, optional, text

SENSOR = Domain.of("sensor", [])
BINARY_SENSOR = Domain.of("binary_sensor", [])
# What a sensor may hold (twin.domains.rules): an enum sensor's options, its state_class.
SENSOR_RULES = EntityRules({"state_class": optional(text), "options": optional(names())})

"""sensor and binary_sensor: read-only entities; the room physics writes their states."""

from __future__ import annotations

from ..service import Domain

SENSOR = Domain.of("sensor", [])
BINARY_SENSOR = Domain.of("binary_sensor", [])

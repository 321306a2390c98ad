"""binary_sensor: read-only on/off entities; the room physics writes their states."""

from __future__ import annotations

from .descriptor import Domain

DOMAIN = Domain("binary_sensor", {}, key_attributes=("device_class",), color="#ced4da")

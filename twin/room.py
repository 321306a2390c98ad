"""The indoor climate of one area, which the room physics moves and sensors read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RoomClimate:
    """The air of one area. Immutable, so snapshots share it like states."""

    temperature: float = 21.0  # °C
    humidity: float = 45.0  # relative humidity, %
    illuminance: float = 0.0  # lx
    co2: float = 450.0  # ppm
    pm25: float = 5.0  # µg/m³

"""What the weather gives a home: outdoor conditions at a moment, and where they come from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Outdoor:
    """Outdoor conditions at one moment."""

    temperature: float  # °C
    humidity: float  # relative humidity, %
    sun_elevation: float  # degrees above the horizon (negative at night)
    cloud_cover: float  # 0 (clear) .. 1 (overcast)


class OutdoorSource(Protocol):
    """Anything that tells the outdoor conditions at a simulation time (a Unix timestamp, UTC)."""

    def at(self, timestamp: float) -> Outdoor:
        """The outdoor conditions at `timestamp`."""
        ...


@dataclass(frozen=True, slots=True)
class ConstantWeather:
    """The same conditions at every moment: for tests and for homes without a city."""

    outdoor: Outdoor = Outdoor(temperature=15.0, humidity=60.0, sun_elevation=30.0, cloud_cover=0.5)

    def at(self, timestamp: float) -> Outdoor:
        """The constant conditions."""
        return self.outdoor

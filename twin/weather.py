"""Offline weather: a real city's climate normals, a daily cycle and seeded fronts, for any moment.

`Weather(city, seed)` is an OutdoorSource. Its conditions are built from the monthly normals in
`cities.yaml`, smoothed across the year; a daily temperature cycle (coldest near sunrise, warmest
mid-afternoon, a smaller swing under cloud); relative humidity from a dew point held through the
day, so that it falls as the air warms; day-to-day anomalies of temperature, humidity and cloud
from a seeded AR(1) process ("fronts"); and the sun's elevation from the standard solar position
formulas (NOAA's: declination, equation of time, hour angle). Day-level values are interpolated
from one local solar midnight to the next, so every series is continuous, and cached per day, so
`at()` costs a few microseconds.
"""

from __future__ import annotations

import calendar
import random
import unicodedata
from dataclasses import dataclass, field
from datetime import date
from difflib import get_close_matches
from functools import cache
from importlib.resources import files
from math import acos, asin, cos, degrees, exp, floor, log, pi, radians, sin, tan
from typing import Any

import yaml

from .errors import HomeDefinitionError
from .outdoor import Outdoor

_DAY = 86400.0  # s
_J2000 = 946728000.0  # 2000-01-01T12:00Z, where the solar formulas' year angle starts
_YEAR = 365.2422 * _DAY  # the tropical year keeps seasons in step with the sun, without leap days
_WARMEST = 14.5  # local solar hour of the day's highest temperature
_EARLIEST_MIN, _LATEST_MIN = 4.0, 9.0  # the coldest hour follows sunrise within these bounds
_CLOUD_DAMPING = 0.5  # how much of the clear-sky daily swing full overcast takes away
_PERSISTENCE = 0.75  # day-to-day autocorrelation of the anomalies: fronts last a few days
_MEMORY = 40  # past days of shocks summed for an anomaly (0.75**40 is about 1e-5)
_BLOCK = 64  # days of shocks drawn from one seeded generator
_CACHE_DAYS = 4096  # cached days per Weather before the caches start again
_HUMIDITY_SPREAD = 8.0  # standard deviation of the daily humidity anomaly, %
_CLOUD_SPREAD = 1.0  # standard deviation of the daily cloud anomaly, in log-odds
_MAGNUS_A, _MAGNUS_B = 17.62, 243.12  # saturation vapour pressure over water (Magnus, WMO)
_HOUR_ANGLE = pi / 12.0  # radians the sun's hour angle turns per hour


@dataclass(frozen=True, slots=True)
class City:
    """A city and its monthly climate normals (January to December) from `cities.yaml`."""

    name: str
    country: str
    latitude: float  # degrees, north positive
    longitude: float  # degrees, east positive
    utc_offset: float  # hours of local standard time ahead of UTC
    koppen: str  # Köppen climate classification, e.g. "Cfb"
    source: str  # where the normals come from
    temperature: tuple[float, ...]  # mean daily temperature, °C
    temperature_range: tuple[float, ...]  # mean daily maximum minus minimum, °C
    humidity: tuple[float, ...]  # mean relative humidity, %
    cloud_cover: tuple[float, ...]  # typical fraction of the sky covered, 0..1


def _months(entry: dict[str, Any], key: str) -> tuple[float, ...]:
    """The twelve monthly values of one normal."""
    return tuple(float(value) for value in entry[key])


def _parse(entry: dict[str, Any]) -> City:
    """One city from its `cities.yaml` entry."""
    return City(
        name=str(entry["name"]),
        country=str(entry["country"]),
        latitude=float(entry["latitude"]),
        longitude=float(entry["longitude"]),
        utc_offset=float(entry["utc_offset"]),
        koppen=str(entry["koppen"]),
        source=str(entry["source"]),
        temperature=_months(entry, "temperature"),
        temperature_range=_months(entry, "temperature_range"),
        humidity=_months(entry, "humidity"),
        cloud_cover=_months(entry, "cloud_cover"),
    )


@cache
def cities() -> dict[str, City]:
    """Every built-in city by name (read once; do not modify)."""
    text = files("twin").joinpath("cities.yaml").read_text(encoding="utf-8")
    return {found.name: found for found in map(_parse, yaml.safe_load(text))}


def _fold(name: str) -> str:
    """A name without case, accents or surrounding spaces, for forgiving look-ups."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return plain.casefold().strip()


@cache
def _by_folded_name() -> dict[str, City]:
    """The cities by folded name."""
    return {_fold(name): found for name, found in cities().items()}


def city(name: str) -> City:
    """The built-in city called `name`; case and accents do not matter."""
    index = _by_folded_name()
    found = index.get(_fold(name))
    if found is not None:
        return found
    close = [index[key].name for key in get_close_matches(_fold(name), index, n=3, cutoff=0.6)]
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else f"choose one of {', '.join(sorted(cities()))}"
    )
    raise HomeDefinitionError(f"no built-in weather for city {name!r}; {hint}")


def _smooth(monthly: tuple[float, ...], year: float) -> float:
    """The normal at `year` (0..1 through the year): a periodic Catmull-Rom spline through the
    mid-month values, so there is no step at month boundaries."""
    x = year * 12.0 - 0.5
    i = floor(x)
    f = x - i
    p0, p1, p2, p3 = (monthly[(i + k) % 12] for k in (-1, 0, 1, 2))
    return p1 + 0.5 * f * (
        p2 - p0 + f * (2 * p0 - 5 * p1 + 4 * p2 - p3 + f * (3 * (p1 - p2) + p3 - p0))
    )


@dataclass(frozen=True, slots=True)
class Weather:
    """A city's weather under one seed: the same seed gives the same weather, anywhere in time.

    Cheap to build and equal, hashable and printable by `city` and `seed` alone, so a home file can
    store those two; the per-day caches are private.
    """

    city: str
    seed: int
    _place: City = field(init=False, repr=False, compare=False)
    _shift: float = field(init=False, repr=False, compare=False)  # s from UTC to mean solar time
    _days: dict[float, tuple[float, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _shocks: dict[int, list[tuple[float, float, float]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        """Resolve the city (raising if unknown) and store its canonical name."""
        place = city(self.city)
        object.__setattr__(self, "city", place.name)
        object.__setattr__(self, "_place", place)
        object.__setattr__(self, "_shift", place.longitude * 240.0)

    def at(self, timestamp: float) -> Outdoor:
        """The outdoor conditions at `timestamp` (Unix seconds, UTC)."""
        solar = timestamp + self._shift
        day = solar // _DAY
        values = self._days.get(day)
        if values is None:
            values = self._day(day)
        t0, dt, s0, ds, m0, dm, q0, dq, c0, dc, a0, da, b0, db, e0, de = values
        w = solar / _DAY - day
        hour = 24.0 * w
        coldest = m0 + w * dm
        if coldest <= hour < _WARMEST:
            shape = -cos(pi * (hour - coldest) / (_WARMEST - coldest))
        else:
            shape = cos(pi * ((hour - _WARMEST) % 24.0) / (24.0 - _WARMEST + coldest))
        temperature = t0 + w * dt + (s0 + w * ds) * shape
        humidity = 100.0 * exp(q0 + w * dq - _MAGNUS_A * temperature / (_MAGNUS_B + temperature))
        sun = a0 + w * da + (b0 + w * db) * cos((hour + e0 + w * de - 12.0) * _HOUR_ANGLE)
        return Outdoor(
            temperature=temperature,
            humidity=humidity if humidity < 100.0 else 100.0,
            sun_elevation=degrees(asin(sun)),
            cloud_cover=c0 + w * dc,
        )

    def day(self, when: date) -> list[Outdoor]:
        """The conditions at each hour of `when` in the city's standard time, for a quick look."""
        midnight = calendar.timegm(when.timetuple()) - self._place.utc_offset * 3600.0
        return [self.at(midnight + 3600.0 * hour) for hour in range(24)]

    def _day(self, day: float) -> tuple[float, ...]:
        """Day `day`'s values at its solar midnight with their change to the next, cached."""
        if len(self._days) >= _CACHE_DAYS:
            self._days.clear()
            self._shocks.clear()
        start, end = self._midnight(int(day)), self._midnight(int(day) + 1)
        values = tuple(x for a, b in zip(start, end, strict=True) for x in (a, b - a))
        self._days[day] = values
        return values

    def _midnight(self, day: int) -> tuple[float, ...]:
        """Temperature, half daily swing, coldest hour, moisture, cloud and solar terms at the local
        solar midnight that starts day `day`."""
        place = self._place
        year = ((day * _DAY - self._shift - _J2000) / _YEAR) % 1.0
        warmth, wetness, cloudiness = self._anomaly(day)
        usual_cloud = min(max(_smooth(place.cloud_cover, year), 0.02), 0.98)
        cloud = 1.0 / (1.0 + (1.0 / usual_cloud - 1.0) * exp(-_CLOUD_SPREAD * cloudiness))
        latitude = radians(place.latitude)
        # Fronts swing temperatures more far from the equator: about 1 °C in Singapore, 4 in Oslo.
        spread = 1.0 + 3.0 * abs(sin(latitude))
        temperature = _smooth(place.temperature, year) + spread * warmth
        clouding = (1.0 - _CLOUD_DAMPING * cloud) / (1.0 - _CLOUD_DAMPING * usual_cloud)
        swing = 0.5 * _smooth(place.temperature_range, year) * clouding
        humidity = _smooth(place.humidity, year) + _HUMIDITY_SPREAD * wetness
        humidity = min(max(humidity, 5.0), 98.0)
        # Held through the day, this dew point makes humidity swing against temperature; the last
        # term takes off what that swing adds to the day's mean (about (k * swing)**2 / 4).
        k = _MAGNUS_A * _MAGNUS_B / (_MAGNUS_B + temperature) ** 2
        moisture = (
            log(humidity / 100.0)
            + _MAGNUS_A * temperature / (_MAGNUS_B + temperature)
            - (k * swing) ** 2 / 4.0
        )
        g = 2.0 * pi * year
        declination = (
            0.006918
            - 0.399912 * cos(g)
            + 0.070257 * sin(g)
            - 0.006758 * cos(2 * g)
            + 0.000907 * sin(2 * g)
            - 0.002697 * cos(3 * g)
            + 0.00148 * sin(3 * g)
        )
        equation_of_time = (  # hours the sundial runs ahead of mean solar time
            229.18
            / 60.0
            * (
                0.000075
                + 0.001868 * cos(g)
                - 0.032077 * sin(g)
                - 0.014615 * cos(2 * g)
                - 0.040849 * sin(2 * g)
            )
        )
        sunrise_angle = acos(min(max(-tan(latitude) * tan(declination), -1.0), 1.0))
        sunrise = 12.0 - sunrise_angle / _HOUR_ANGLE - equation_of_time
        return (
            temperature,
            swing,
            min(max(sunrise, _EARLIEST_MIN), _LATEST_MIN),
            moisture,
            cloud,
            sin(latitude) * sin(declination),
            cos(latitude) * cos(declination),
            equation_of_time,
        )

    def _anomaly(self, day: int) -> tuple[float, float, float]:
        """Unit-variance AR(1) anomalies of temperature, humidity and cloud on `day`: past shocks
        weighted by persistence, so any day is computed without replaying history. Humidity
        shares part of its shock with cloud: cloudy days are damp."""
        warmth = wetness = cloudiness = 0.0
        weight = (1.0 - _PERSISTENCE**2) ** 0.5
        for age in range(_MEMORY):
            past = day - age
            block = self._shocks.get(past // _BLOCK)
            if block is None:
                block = self._draw(past // _BLOCK)
            shock_t, shock_h, shock_c = block[past % _BLOCK]
            warmth += weight * shock_t
            wetness += weight * shock_h
            cloudiness += weight * shock_c
            weight *= _PERSISTENCE
        return warmth, 0.6 * cloudiness + 0.8 * wetness, cloudiness

    def _draw(self, block: int) -> list[tuple[float, float, float]]:
        """The shocks of one block of days, from a generator seeded by city, seed and block (a
        string seed, which Python hashes the same way in every process)."""
        rng = random.Random(f"{self.city}/{self.seed}/{block}")
        shocks = [(rng.gauss(), rng.gauss(), rng.gauss()) for _ in range(_BLOCK)]
        self._shocks[block] = shocks
        return shocks

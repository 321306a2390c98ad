"""Offline weather: the climate data's consistency, and Weather's determinism, shape and bounds."""

from __future__ import annotations

import calendar
import itertools
import math
import pickle
import statistics
from collections.abc import Callable
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.errors import HomeDefinitionError
from twin.home import Home
from twin.outdoor import Outdoor, OutdoorSource
from twin.weather import City, Weather, cities, city

CITIES = sorted(cities())
NAMED_IN_THE_BRIEF = [
    "Oslo", "Singapore", "Dubai", "Phoenix", "Sydney", "Reykjavik", "Mumbai", "London", "Berlin",
    "Beijing", "Tokyo", "Moscow", "Cairo", "Nairobi", "Sao Paulo", "Buenos Aires", "Anchorage",
    "Miami", "Toronto", "Lima",
]  # fmt: skip
FOG_DESERTS = {"Lima"}  # arid, yet humid and grey under the cold Humboldt current
MARCH_EQUINOX_2024 = calendar.timegm((2024, 3, 20, 0, 0, 0))


def utc(year: int, month: int, day: int, solar_hour: float, place: City) -> float:
    """The Unix time at `solar_hour` of local mean solar time on a date at `place`."""
    return calendar.timegm((year, month, day, 0, 0, 0)) + (solar_hour - place.longitude / 15) * 3600


def monthly_mean(
    weather: Weather, year: int, month: int, read: Callable[[Outdoor], float], hour: float | None
) -> float:
    """The mean of `read` over a month, at one solar hour a day or every hour."""
    place = city(weather.city)
    days = range(1, calendar.monthrange(year, month)[1] + 1)
    hours = [hour] if hour is not None else [h + 0.5 for h in range(24)]
    return statistics.mean(
        read(weather.at(utc(year, month, day, h, place))) for day in days for h in hours
    )


# --- the data ------------------------------------------------------------------------------------


def test_cities_cover_the_world() -> None:
    """Enough cities, in every climate group and both hemispheres, including the usual ones."""
    places = cities().values()
    assert len(places) >= 40
    assert {place.koppen[0] for place in places} == set("ABCDE")
    assert any(place.latitude < -30 for place in places)
    assert any(place.latitude > 60 for place in places)
    assert set(NAMED_IN_THE_BRIEF) <= set(cities())
    assert len({name.casefold() for name in cities()}) == len(cities())


@pytest.mark.parametrize("name", CITIES)
def test_city_data_is_complete_and_in_range(name: str) -> None:
    """Twelve values of each normal, within physical bounds, a source, and a sane time zone."""
    place = city(name)
    for normal in (place.temperature, place.temperature_range, place.humidity, place.cloud_cover):
        assert len(normal) == 12
    assert all(-50 <= t <= 40 for t in place.temperature)
    assert all(0 < r <= 25 for r in place.temperature_range)
    assert all(5 <= h <= 100 for h in place.humidity)
    assert all(0 <= c <= 1 for c in place.cloud_cover)
    assert -90 <= place.latitude <= 90
    assert -180 <= place.longitude <= 180
    assert place.country
    assert len(place.source) > 20
    assert place.utc_offset * 4 == round(place.utc_offset * 4)
    assert abs(place.utc_offset - place.longitude / 15) <= 2  # standard time follows the sun


@pytest.mark.parametrize("name", CITIES)
def test_koppen_zone_agrees_with_the_temperatures(name: str) -> None:
    """The Köppen letters' temperature definitions hold for the monthly means."""
    place = city(name)
    coldest, warmest = min(place.temperature), max(place.temperature)
    group, third = place.koppen[0], place.koppen[2:3]
    if group == "A":
        assert coldest >= 18
    elif group == "B":
        annual = statistics.mean(place.temperature)
        assert annual >= 18 if third == "h" else annual < 18
    elif group == "E":
        assert warmest < 10
    else:
        assert warmest >= 10
        # C's coldest month is above -3 °C, D's below 0 °C: sources use one isotherm or the other.
        assert coldest > -3 if group == "C" else coldest < 0
        mild_months = sum(t >= 10 for t in place.temperature)
        if third == "a":
            assert warmest >= 22
        elif third == "b":
            assert warmest < 22
            assert mild_months >= 4
        elif third == "c":
            assert warmest < 22
            assert 1 <= mild_months < 4
            assert coldest >= -38
        else:
            assert third == "d"
            assert coldest < -38


@pytest.mark.parametrize("name", [name for name in CITIES if abs(city(name).latitude) >= 20])
def test_seasons_follow_the_hemisphere(name: str) -> None:
    """Outside the tropics the warmest month is in the local summer, the coldest in winter."""
    place = city(name)
    warmest = place.temperature.index(max(place.temperature)) + 1
    coldest = place.temperature.index(min(place.temperature)) + 1
    mid_year, turn_of_year = (warmest, coldest) if place.latitude > 0 else (coldest, warmest)
    assert 5 <= mid_year <= 9
    assert turn_of_year <= 3 or turn_of_year >= 11


@pytest.mark.parametrize("name", CITIES)
def test_annual_swing_grows_away_from_the_equator(name: str) -> None:
    """Tropical cities barely change through the year; high latitudes do."""
    place = city(name)
    swing = max(place.temperature) - min(place.temperature)
    if abs(place.latitude) < 15:
        assert swing <= 8
    if abs(place.latitude) >= 45:
        assert swing >= 7


@pytest.mark.parametrize("name", [name for name in CITIES if city(name).koppen[0] == "A"])
def test_tropical_days_swing_little_and_humid_tropics_are_humid(name: str) -> None:
    """Tropical climates have small daily ranges; rainforest and monsoon air is humid."""
    place = city(name)
    assert statistics.mean(place.temperature_range) <= 11
    if place.koppen in ("Af", "Am"):
        assert statistics.mean(place.humidity) >= 65


@pytest.mark.parametrize(
    "name", [name for name in CITIES if city(name).koppen[:2] == "BW" and name not in FOG_DESERTS]
)
def test_deserts_are_dry_clear_and_swing_widely(name: str) -> None:
    """Hot and cold deserts: a dry season, mostly clear skies, wide daily ranges."""
    place = city(name)
    assert min(place.humidity) <= 55
    assert statistics.mean(place.cloud_cover) <= 0.35
    assert statistics.mean(place.temperature_range) >= 9


# --- looking cities up ---------------------------------------------------------------------------


def test_city_lookup_ignores_case_accents_and_spaces() -> None:
    """Names match however they are typed."""
    assert city("oslo") is city("Oslo") is city("  OSLO ")
    assert city("Reykjavík").name == "Reykjavik"
    assert city("São Paulo").name == "Sao Paulo"


def test_unknown_city_suggests_close_names() -> None:
    """A near miss names the city meant."""
    with pytest.raises(HomeDefinitionError, match=r"'Olso'; did you mean Oslo, ") as caught:
        city("Olso")
    assert caught.value.code == "invalid_home"


def test_unknown_city_without_close_names_lists_all() -> None:
    """A name like no other lists every city, and Weather refuses it too."""
    with pytest.raises(HomeDefinitionError, match="choose one of Alice Springs, Anchorage"):
        Weather("Atlantis", 1)


# --- Weather as a value --------------------------------------------------------------------------


def test_weather_is_a_value_of_city_and_seed() -> None:
    """Equal, hashable and printed by its canonical city name and seed."""
    weather = Weather("oslo", 3)
    assert weather.city == "Oslo"
    assert weather == Weather("Oslo", 3)
    assert hash(weather) == hash(Weather("OSLO", 3))
    assert weather != Weather("Oslo", 4)
    assert weather != Weather("Berlin", 3)
    assert repr(weather) == "Weather(city='Oslo', seed=3)"
    assert len({weather, Weather("Oslo", 3), Weather("Oslo", 4)}) == 2
    copied = pickle.loads(pickle.dumps(weather))
    assert copied == weather
    assert copied.at(MARCH_EQUINOX_2024) == weather.at(MARCH_EQUINOX_2024)


def test_weather_drives_a_home() -> None:
    """Weather is an OutdoorSource a home can hold."""
    source: OutdoorSource = Weather("Tokyo", 1)
    home = Home(now=MARCH_EQUINOX_2024, weather=source)
    assert home.weather.at(home.now) == Weather("Tokyo", 1).at(MARCH_EQUINOX_2024)


# --- determinism ---------------------------------------------------------------------------------


def test_same_seed_gives_the_same_weather_in_any_order() -> None:
    """Two instances agree, whichever moments each is asked about first."""
    moments = [MARCH_EQUINOX_2024 + k * 7919.0 for k in range(500)]
    forward = [Weather("London", 7).at(t) for t in moments]
    later_first = Weather("London", 7)
    later_first.at(MARCH_EQUINOX_2024 + 400 * 86400)
    backward = [later_first.at(t) for t in reversed(moments)][::-1]
    assert forward == backward


def test_different_seeds_give_different_weather() -> None:
    """Seeds change the day-to-day weather, not just its noise floor."""
    place = city("London")
    noons = [utc(2024, 1, day, 12, place) for day in range(1, 29)]
    one = [Weather("London", 1).at(t) for t in noons]
    two = [Weather("London", 2).at(t) for t in noons]
    assert sum(abs(a.temperature - b.temperature) > 1 for a, b in zip(one, two, strict=True)) > 10
    assert sum(abs(a.cloud_cover - b.cloud_cover) > 0.1 for a, b in zip(one, two, strict=True)) > 10


# --- shape ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Oslo", "Alice Springs", "Longyearbyen", "Singapore", "Moscow"])
def test_every_series_is_continuous(name: str) -> None:
    """Minute to minute nothing jumps, across solar midnights and day boundaries too."""
    weather = Weather(name, 5)
    start = utc(2024, 6, 19, 0, city(name))
    series = [weather.at(start + 60.0 * minute) for minute in range(3 * 24 * 60 + 1)]
    for before, after in itertools.pairwise(series):
        assert abs(after.temperature - before.temperature) < 0.1
        assert abs(after.humidity - before.humidity) < 1.0
        assert abs(after.cloud_cover - before.cloud_cover) < 0.005
        assert abs(after.sun_elevation - before.sun_elevation) < 0.26  # the sun moves 0.25°/min


def test_day_to_day_weather_varies() -> None:
    """Fronts move the daily mean: days differ by more than the normals' slow drift."""
    place = city("Berlin")
    weather = Weather("Berlin", 2)
    noons = [weather.at(utc(2024, 1, day, 12, place)).temperature for day in range(1, 32)]
    assert statistics.stdev(noons) > 1.5


@pytest.mark.parametrize(
    ("name", "warmer", "colder"),
    [("Sydney", 1, 7), ("Buenos Aires", 1, 7), ("Oslo", 7, 1), ("Beijing", 7, 1)],
)
def test_seasons_per_hemisphere(name: str, warmer: int, colder: int) -> None:
    """Sydney is warmer in January than in July; Oslo the other way round."""
    weather = Weather(name, 11)
    warm = monthly_mean(weather, 2025, warmer, lambda o: o.temperature, None)
    cold = monthly_mean(weather, 2025, colder, lambda o: o.temperature, None)
    assert warm > cold + 5


@pytest.mark.parametrize("name", ["Oslo", "Sydney", "Phoenix", "Singapore", "Yakutsk", "Lima"])
@pytest.mark.parametrize("month", [1, 7])
def test_monthly_means_follow_the_normals(name: str, month: int) -> None:
    """Averaged over seeds, a month's weather is the city's normal for it."""
    place = city(name)
    runs = [Weather(name, seed) for seed in range(12)]

    def mean(read: Callable[[Outdoor], float]) -> float:
        return statistics.mean(
            monthly_mean(run, 2023, month, read, hour) for run in runs for hour in (2, 8, 14, 20)
        )

    assert mean(lambda o: o.temperature) == pytest.approx(place.temperature[month - 1], abs=1.5)
    assert mean(lambda o: o.humidity) == pytest.approx(place.humidity[month - 1], abs=6)
    assert mean(lambda o: o.cloud_cover) == pytest.approx(place.cloud_cover[month - 1], abs=0.1)


@pytest.mark.parametrize("name", ["London", "Phoenix", "Singapore", "Moscow", "Sydney"])
@pytest.mark.parametrize("month", [1, 7])
def test_afternoons_are_warm_and_dry_dawns_cold_and_damp(name: str, month: int) -> None:
    """Mid-afternoon is warmer than before dawn by about the daily range, and less humid."""
    weather = Weather(name, 3)
    afternoon = monthly_mean(weather, 2024, month, lambda o: o.temperature, 14.5)
    dawn = monthly_mean(weather, 2024, month, lambda o: o.temperature, 4.0)
    usual_range = city(name).temperature_range[month - 1]
    assert 0.6 * usual_range < afternoon - dawn < 1.4 * usual_range
    dry = monthly_mean(weather, 2024, month, lambda o: o.humidity, 14.5)
    damp = monthly_mean(weather, 2024, month, lambda o: o.humidity, 4.0)
    assert dry < damp - 5


def test_coldest_near_sunrise_warmest_mid_afternoon() -> None:
    """The average day in Phoenix in June bottoms out around sunrise and peaks after 14:00."""
    weather = Weather("Phoenix", 1)
    hourly = [monthly_mean(weather, 2024, 6, lambda o: o.temperature, h) for h in range(24)]
    assert 4 <= hourly.index(min(hourly)) <= 6  # sunrise is near 05:00 solar time in June
    assert 14 <= hourly.index(max(hourly)) <= 15


def test_clouds_shrink_the_daily_swing() -> None:
    """Overcast January days in Madrid vary less between night and afternoon than clear ones."""
    weather = Weather("Madrid", 4)
    place = city("Madrid")
    swings: dict[bool, list[float]] = {True: [], False: []}
    for year in range(2000, 2020):
        for day in range(1, 32):
            hours = [weather.at(utc(year, 1, day, h, place)) for h in range(24)]
            cloud = statistics.mean(o.cloud_cover for o in hours)
            if cloud > 0.7 or cloud < 0.3:
                temperatures = [o.temperature for o in hours]
                swings[cloud > 0.7].append(max(temperatures) - min(temperatures))
    assert statistics.mean(swings[True]) < 0.8 * statistics.mean(swings[False])


# --- the sun -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CITIES)
def test_sun_at_the_equinox(name: str) -> None:
    """At the equinox the noon sun stands 90° minus the latitude high, and midnight is dark."""
    place = city(name)
    weather = Weather(name, 0)
    noon = max(
        weather.at(utc(2024, 3, 20, 11 + minute / 60, place)).sun_elevation for minute in range(121)
    )
    assert noon == pytest.approx(90 - abs(place.latitude), abs=1.0)
    assert weather.at(utc(2024, 3, 20, 0, place)).sun_elevation < 0


def test_midnight_sun_and_polar_night() -> None:
    """Svalbard keeps the sun up at midsummer midnight and below the horizon at midwinter noon."""
    place = city("Longyearbyen")
    weather = Weather("Longyearbyen", 0)
    assert weather.at(utc(2024, 6, 21, 0, place)).sun_elevation > 5
    assert weather.at(utc(2024, 12, 21, 12, place)).sun_elevation < -5


def test_solar_noon_follows_the_equation_of_time() -> None:
    """In early November the sun peaks about 16 minutes before mean solar noon."""
    place = city("Singapore")
    weather = Weather("Singapore", 0)
    minutes = range(-40, 41)
    heights = [weather.at(utc(2024, 11, 3, 12 + m / 60, place)).sun_elevation for m in minutes]
    assert minutes[heights.index(max(heights))] == pytest.approx(-16, abs=2)


# --- bounds and speed ----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(CITIES),
    seed=st.integers(min_value=0, max_value=2**32),
    timestamp=st.floats(min_value=-2e9, max_value=4.1e9, allow_nan=False),
)
def test_outdoor_stays_physical(name: str, seed: int, timestamp: float) -> None:
    """Any city, seed and moment give finite, physical conditions."""
    outdoor = Weather(name, seed).at(timestamp)
    assert -70 < outdoor.temperature < 60
    assert 0 < outdoor.humidity <= 100
    assert -90 <= outdoor.sun_elevation <= 90
    assert 0 <= outdoor.cloud_cover <= 1
    assert all(map(math.isfinite, (outdoor.temperature, outdoor.humidity, outdoor.sun_elevation)))


def test_day_gives_the_local_hours() -> None:
    """day() reads each hour of a date in the city's standard time."""
    weather = Weather("Tokyo", 2)
    midnight = calendar.timegm((2024, 7, 1, 0, 0, 0)) - 9 * 3600
    hours = weather.day(date(2024, 7, 1))
    assert hours == [weather.at(midnight + 3600 * h) for h in range(24)]

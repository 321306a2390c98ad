"""weather (the domain): read-only entities whose state is the condition, and those HomeMaker
makes, which show the twin's outdoor weather."""

from __future__ import annotations

import pytest

from twin.domains import weather
from twin.errors import HomeDefinitionError, ServiceNotFoundError
from twin.home import Home
from twin.homefile import dump_home, load_home
from twin.outdoor import ConstantWeather, Outdoor
from twin.registry import EntityEntry


def test_weather_offers_no_service() -> None:
    assert weather.DOMAIN.services == {}
    home = Home()
    home.add_entity(EntityEntry("weather.home", "Home"), "sunny", weather.METRIC_UNITS)
    with pytest.raises(ServiceNotFoundError):
        home.call_service(
            "weather", "get_forecasts", {"type": "daily"}, {"entity_id": "weather.home"}
        )


@pytest.mark.parametrize(
    ("cloud", "sun", "condition"),
    [(0.1, 30, "sunny"), (0.1, -5, "clear-night"), (0.5, 30, "partlycloudy"), (0.9, -5, "cloudy")],
)
def test_the_condition_follows_the_sky(cloud: float, sun: float, condition: str) -> None:
    outdoor = Outdoor(temperature=12.34, humidity=71.6, sun_elevation=sun, cloud_cover=cloud)
    assert weather.reading(outdoor) == (
        condition,
        {"temperature": 12.3, "humidity": 72, "cloud_coverage": round(cloud * 100)},
    )


@pytest.mark.parametrize(
    ("state", "attributes", "match"),
    [
        ("raining", {}, "state: expected one of"),
        ("sunny", {"temperature_unit": "K"}, "temperature_unit: expected one of"),
        ("sunny", {"humidity": 140}, "humidity: expected a number 0-100"),
    ],
)
def test_an_impossible_weather_entity_is_refused(
    state: str, attributes: dict[str, object], match: str
) -> None:
    home = Home()
    home.add_entity(EntityEntry("weather.bad", "Bad"), state, attributes)
    with pytest.raises(HomeDefinitionError, match=match):
        load_home(dump_home(home))


def test_a_following_weather_entity_shows_the_outdoor_weather_as_time_goes_on() -> None:
    outdoor = Outdoor(temperature=-3.06, humidity=88.4, sun_elevation=-10, cloud_cover=0.95)
    home = Home(weather=ConstantWeather(outdoor))
    weather.add_forecast(home)
    home.add_entity(EntityEntry("weather.real", "Real"), "sunny", {"temperature": 30.0})
    home.advance(60)
    shown = home.state(weather.FORECAST)
    assert shown.state == "cloudy"
    assert (shown.attributes["temperature"], shown.attributes["humidity"]) == (-3.1, 88)
    assert shown.attributes["temperature_unit"] == "°C"
    assert home.state("weather.real").state == "sunny"  # a real home's weather keeps its own
    assert load_home(dump_home(home)).states == home.states

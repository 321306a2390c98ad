"""weather: the current weather as a weather service reports it (Home Assistant's WeatherEntity).

A weather entity is read-only: its state is the condition (`sunny`, `cloudy`, ...) and its
attributes are those WeatherEntity.state_attributes writes: each reading that is known, in the
units Home Assistant's metric system shows (°C, hPa, km/h, km, mm), with the unit attributes
always written; temperatures to a tenth of a degree (HA's precision for °C), humidity to a whole
percent, pressure and speeds to a hundredth. Home Assistant's only weather action,
get_forecasts, answers with data; the twin's services change states and answer nothing, so the
twin offers no forecast and no service.

A weather entity that remembers `follows_outdoor` (as HomeMaker's do) shows the twin's own
outdoor weather (twin.outdoor): the room physics writes `reading(...)` into it whenever it writes
the rooms' readings. Other weather entities (a real home's, imported) keep what they showed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..outdoor import Outdoor
from ..registry import EntityEntry
from ..service import EntityDraft
from ..state import State
from .descriptor import Carrying, Domain, renamed
from .rules import EntityRules, flag, number, one_of, optional

if TYPE_CHECKING:
    from ..home import Home

# WeatherEntityFeature: forecasts the entity can give (through get_forecasts).
FORECAST_DAILY = 1
FORECAST_HOURLY = 2
FORECAST_TWICE_DAILY = 4

# Home Assistant's ATTR_CONDITION_* states.
CONDITIONS = frozenset(
    (
        "clear-night",
        "cloudy",
        "exceptional",
        "fog",
        "hail",
        "lightning",
        "lightning-rainy",
        "partlycloudy",
        "pouring",
        "rainy",
        "snowy",
        "snowy-rainy",
        "sunny",
        "windy",
        "windy-variant",
    )
)

ATTR_TEMPERATURE = "temperature"
ATTR_HUMIDITY = "humidity"
ATTR_CLOUD_COVERAGE = "cloud_coverage"
# What a weather entity remembers when it shows the twin's outdoor weather.
FOLLOWS_OUTDOOR = "follows_outdoor"
# The weather entity HomeMaker adds to every home, named as Home Assistant's onboarding names its
# Met.no forecast.
FORECAST = "weather.forecast_home"

# The units WeatherEntity writes beside the readings, as Home Assistant's metric system has them.
METRIC_UNITS = {
    "temperature_unit": "°C",
    "pressure_unit": "hPa",
    "wind_speed_unit": "km/h",
    "visibility_unit": "km",
    "precipitation_unit": "mm",
}
# The units Home Assistant accepts for each (weather's VALID_UNITS).
_VALID_UNITS = {
    "temperature_unit": ("°C", "°F"),
    "pressure_unit": ("hPa", "kPa", "mbar", "inHg", "mmHg"),
    "wind_speed_unit": ("Beaufort", "ft/s", "km/h", "kn", "m/s", "mph"),
    "visibility_unit": ("km", "mi"),
    "precipitation_unit": ("mm", "in"),
}
# Below this share of the sky covered it is clear; above the second, cloudy.
CLEAR_BELOW = 0.25
CLOUDY_ABOVE = 0.7


def condition(outdoor: Outdoor) -> str:
    """The condition a weather service reports for outdoor conditions without precipitation."""
    if outdoor.cloud_cover < CLEAR_BELOW:
        return "sunny" if outdoor.sun_elevation > 0 else "clear-night"
    return "partlycloudy" if outdoor.cloud_cover <= CLOUDY_ABOVE else "cloudy"


def reading(outdoor: Outdoor) -> tuple[str, dict[str, Any]]:
    """The state and readings a weather entity shows for outdoor conditions, rounded as
    WeatherEntity rounds them (in °C)."""
    return condition(outdoor), {
        ATTR_TEMPERATURE: round(outdoor.temperature, 1) + 0.0,
        ATTR_HUMIDITY: round(outdoor.humidity),
        ATTR_CLOUD_COVERAGE: round(outdoor.cloud_cover * 100),
    }


def add_forecast(home: Home) -> State:
    """Add FORECAST, a weather entity that shows the home's own outdoor weather, as a home's
    weather service (Home Assistant's default Met.no `weather.forecast_home`) would."""
    condition, readings = reading(home.weather.at(home.now))
    entry = EntityEntry(FORECAST, "Forecast Home")
    added = home.add_entity(entry, condition, {**readings, **METRIC_UNITS})
    draft = EntityDraft.of(entry, added)
    draft.hidden[FOLLOWS_OUTDOOR] = True
    home.write(draft)
    return home.states[FORECAST]


def show(entity: EntityDraft) -> None:
    """The unit attributes WeatherEntity always writes, for an inventory entity that names none
    (its native units are then Home Assistant's metric ones)."""
    for key, unit in METRIC_UNITS.items():
        entity.attributes.setdefault(key, unit)


# What a weather entity may hold (twin.domains.rules).
RULES = EntityRules(
    {
        ATTR_TEMPERATURE: optional(number()),
        "apparent_temperature": optional(number()),
        "dew_point": optional(number()),
        ATTR_HUMIDITY: optional(number(0, 100)),
        ATTR_CLOUD_COVERAGE: optional(number(0, 100)),
        "uv_index": optional(number(0)),
        "ozone": optional(number(0)),
        "pressure": optional(number(0)),
        "wind_speed": optional(number(0)),
        "wind_gust_speed": optional(number(0)),
        "visibility": optional(number(0)),
        **{key: one_of(units) for key, units in _VALID_UNITS.items()},
        FOLLOWS_OUTDOOR: optional(flag),
    },
    states=CONDITIONS,
)


# A synthetic-home weather entity's native readings, by the attribute Home Assistant shows each as.
_NATIVE = {
    f"native_{reading}": reading
    for reading in (
        "temperature",
        "apparent_temperature",
        "dew_point",
        "pressure",
        "wind_speed",
        "wind_gust_speed",
        "visibility",
        *METRIC_UNITS,
    )
}


def from_arguments(arguments: dict[str, Any]) -> None:
    """A synthetic-home weather entity's native readings under Home Assistant's names."""
    renamed(arguments, _NATIVE)


DOMAIN = Domain(
    "weather",
    {},
    {
        "forecast_daily": FORECAST_DAILY,
        "forecast_hourly": FORECAST_HOURLY,
        "forecast_twice_daily": FORECAST_TWICE_DAILY,
    },
    rules=RULES,
    key_attributes=(ATTR_TEMPERATURE, ATTR_HUMIDITY),
    carrying=Carrying(
        state_attribute="condition",
        arguments=from_arguments,
        shows=show,
    ),
    color="#48cae4",
)

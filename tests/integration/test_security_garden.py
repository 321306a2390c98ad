"""Alarm panels, sirens, robot mowers, their numbers and selects, and weather: Home Assistant's
services act on the twin, HA shows the twin, and an independent twin given the same calls agrees
(state, attributes and error), as in tests/integration/test_lock.py."""

from __future__ import annotations

from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.home import Home

from .parity import as_json, call_both, catalog_types, independent_twin

PANEL = "alarm_control_panel.alarm_panel"  # every mode; number code, needed to arm
SMART = "alarm_control_panel.smart_alarm_system"  # arm home/away, trigger; no code
SIREN = "siren.alarm_siren"  # tones, volume, duration
STROBE = "siren.outdoor_siren"  # on and off only
MOWER = "lawn_mower.robot_lawn_mower"
HEIGHT = "number.robot_lawn_mower_cutting_height"
LIGHTS = "select.robot_lawn_mower_headlight_mode"
FORECAST = "weather.forecast_home"
DOMAINS = ("alarm_control_panel", "siren", "lawn_mower", "number", "select", "weather")


class Both:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, domain: str, service: str, entity_id: str, **data: Any) -> str | None:
        """A service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, domain, service, target, data)

    def state(self, entity_id: str) -> str:
        state = self.hass.states.get(entity_id)
        assert state is not None
        return state.state


@pytest.fixture
async def both(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Both:
    return Both(hass, loaded_home)


@pytest.mark.parametrize("domain", DOMAINS)
async def test_home_assistant_shows_every_entity_as_the_twin_has_it(
    hass: HomeAssistant, both: Both, domain: str
) -> None:
    twin = both.entry.runtime_data.home
    ids = [entity_id for entity_id in twin.entities if entity_id.startswith(f"{domain}.")]
    assert ids
    for entity_id in ids:
        shown = hass.states.get(entity_id)
        assert shown is not None, entity_id
        mine = twin.states[entity_id]
        assert as_json(shown.state, shown.attributes) == as_json(mine.state, mine.attributes)
        assert er.async_get(hass).async_get(entity_id) is not None


def test_every_catalog_type_of_the_new_domains_is_in_the_home() -> None:
    assert catalog_types("alarm_control_panel") == ["alarm_panel", "smart_alarm_system"]
    assert catalog_types("siren") == ["alarm_siren", "outdoor_siren"]
    assert catalog_types("lawn_mower") == ["robot_lawn_mower"]


# --- alarm panels ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "code", "after"),
    [
        (PANEL, "alarm_arm_away", {"code": "1234"}, None, "armed_away"),
        (PANEL, "alarm_arm_night", {"code": 1234}, None, "armed_night"),
        (PANEL, "alarm_arm_custom_bypass", {"code": "9"}, None, "armed_custom_bypass"),
        (PANEL, "alarm_arm_vacation", {}, "validation_error", "disarmed"),
        (PANEL, "alarm_arm_home", {"code": ""}, "validation_error", "disarmed"),
        (PANEL, "alarm_trigger", {}, None, "triggered"),
        (PANEL, "alarm_disarm", {}, None, "disarmed"),
        (SMART, "alarm_arm_home", {}, None, "armed_home"),
        (SMART, "alarm_arm_night", {}, "service_not_supported", "disarmed"),
        (SMART, "alarm_disarm", {"code": None}, "invalid_data", "disarmed"),
    ],
)
async def test_alarm_panels_follow_home_assistants_code_rule(
    both: Both, entity_id: str, service: str, data: dict[str, Any], code: str, after: str
) -> None:
    assert await both.call("alarm_control_panel", service, entity_id, **data) == code
    assert both.state(entity_id) == after


async def test_home_assistant_puts_in_the_panels_default_code(
    hass: HomeAssistant, both: Both
) -> None:
    """With a default code set on the entity, arming without one reaches the twin with it."""
    er.async_get(hass).async_update_entity_options(
        PANEL, "alarm_control_panel", {"default_code": "2468"}
    )
    await hass.async_block_till_done()
    await hass.services.async_call(
        "alarm_control_panel", "alarm_arm_away", {"entity_id": PANEL}, blocking=True
    )
    twin = both.entry.runtime_data.home.states[PANEL]
    assert both.state(PANEL) == twin.state == "armed_away"


# --- sirens ---------------------------------------------------------------------------------


async def test_sirens_sound_with_their_tones_and_toggle(both: Both) -> None:
    data = {"tone": "Fire alarm", "volume_level": 0.7, "duration": 30}
    assert await both.call("siren", "turn_on", SIREN, **data) is None
    assert both.state(SIREN) == "on"
    assert await both.call("siren", "turn_off", SIREN) is None
    assert await both.call("siren", "turn_on", STROBE, tone="whatever") is None  # no tones: dropped
    assert await both.call("siren", "toggle", STROBE) is None
    assert both.state(STROBE) == "off"
    assert await both.call("siren", "turn_on", SIREN, volume_level=2) == "invalid_data"


async def test_a_tone_the_siren_lacks_is_refused_in_the_same_words(
    hass: HomeAssistant, both: Both
) -> None:
    """Home Assistant raises a bare ValueError (siren's process_turn_on_params), the twin its
    typed ServiceValidationError; the message is the same and nothing changes."""
    with pytest.raises(ValueError, match="Invalid tone") as raised:
        await hass.services.async_call(
            "siren", "turn_on", {"entity_id": SIREN, "tone": "Siren"}, blocking=True
        )
    twin_error = None
    try:
        both.other.call_service("siren", "turn_on", {"tone": "Siren"}, {"entity_id": SIREN})
    except Exception as err:  # the typed error, compared below
        twin_error = err
    assert type(twin_error).__name__ == "ServiceValidationError"
    assert str(twin_error) == str(raised.value)
    assert both.state(SIREN) == both.other.states[SIREN].state == "off"


# --- mowers, numbers, selects --------------------------------------------------------------


async def test_a_mower_mows_pauses_and_heads_home(both: Both) -> None:
    for service, activity in (
        ("start_mowing", "mowing"),
        ("pause", "paused"),
        ("dock", "returning"),
    ):
        assert await both.call("lawn_mower", service, MOWER) is None
        assert both.state(MOWER) == activity
    assert await both.call("lawn_mower", "stop", MOWER) == "service_not_supported"


@pytest.mark.parametrize(
    ("value", "code", "after"),
    [(3, None, "3.0"), ("7.5", None, "7.5"), (9, None, "9.0"), (10, "validation_error", "5.0"),
     (0.5, "validation_error", "5.0"), ("high", "invalid_data", "5.0")],
)  # fmt: skip
async def test_a_number_is_set_within_its_range(
    both: Both, value: Any, code: str | None, after: str
) -> None:
    assert await both.call("number", "set_value", HEIGHT, value=value) == code
    assert both.state(HEIGHT) == after


@pytest.mark.parametrize(
    ("calls", "after"),
    [
        ([("select_option", {"option": "always_on"})], "always_on"),
        ([("select_last", {}), ("select_next", {})], "always_on"),
        ([("select_last", {}), ("select_next", {"cycle": False})], "evening_and_night"),
        ([("select_first", {}), ("select_previous", {})], "evening_and_night"),
        ([("select_previous", {"cycle": False})], "always_off"),
    ],
)
async def test_a_select_moves_through_its_options(
    both: Both, calls: list[tuple[str, dict[str, Any]]], after: str
) -> None:
    for service, data in calls:
        assert await both.call("select", service, LIGHTS, **data) is None
    assert both.state(LIGHTS) == after


async def test_an_option_the_select_lacks_is_refused(both: Both) -> None:
    assert await both.call("select", "select_option", LIGHTS, option="strobe") == "validation_error"
    assert both.state(LIGHTS) == "evening_only"


# --- weather --------------------------------------------------------------------------------


async def test_weather_is_read_only(hass: HomeAssistant, both: Both) -> None:
    assert hass.services.has_service("weather", "get_forecasts")
    assert both.state(FORECAST) == "partlycloudy"
    shown = hass.states.get(FORECAST)
    assert shown is not None
    assert shown.attributes["temperature"] == 14.3
    assert shown.attributes["wind_speed_unit"] == "km/h"

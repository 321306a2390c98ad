"""Homes HomeFlow did not make carry alarm panels, sirens, mowers, numbers, selects and weather:
a synthetic-home inventory (enum names, `_attr_*` arguments) and Home Assistant's own states
(the mirror) import them as Home Assistant shows them, and the twin acts on them."""

from __future__ import annotations

from typing import Any

import pytest

from twin.errors import ServiceValidationError
from twin.homefile import dump_home, export_ha_snapshot, import_ha_snapshot, load_home
from twin.mirror import Mirror

from .test_mirror import Clock, FakeLink, state

INVENTORY = """
areas:
- name: Garden
  id: garden
devices:
- name: Mower
  id: mower
  area: garden
  info: {manufacturer: Husqvarna, model: Automower 430X NERA}
entities:
- name: House Alarm
  id: alarm_control_panel.house
  attributes:
    supported_features:
    - alarm_control_panel.AlarmControlPanelEntityFeature.ARM_HOME
    - alarm_control_panel.AlarmControlPanelEntityFeature.ARM_AWAY
    code_format: alarm_control_panel.CodeFormat.NUMBER
    code_arm_required: true
    alarm_state: alarm_control_panel.AlarmControlPanelState.ARMED_AWAY
- name: Mower
  id: lawn_mower.mower
  device: mower
  attributes:
    supported_features:
    - lawn_mower.LawnMowerEntityFeature.START_MOWING
    - lawn_mower.LawnMowerEntityFeature.DOCK
    activity: lawn_mower.LawnMowerActivity.MOWING
- name: Mower Cutting height
  id: number.mower_cutting_height
  device: mower
  attributes:
    native_min_value: 2
    native_max_value: 6
    native_step: 0.5
    mode: number.NumberMode.SLIDER
    native_unit_of_measurement: cm
    native_value: 4.0
- name: Mower Headlight mode
  id: select.mower_headlight_mode
  device: mower
  attributes:
    options: [always_on, always_off]
    current_option: always_off
- name: Doorbell Siren
  id: siren.doorbell
  state: false
  attributes:
    supported_features:
    - siren.SirenEntityFeature.TURN_ON
    - siren.SirenEntityFeature.TURN_OFF
    - siren.SirenEntityFeature.TONES
    available_tones: [ding, dong]
- name: Forecast
  id: weather.forecast
  attributes:
    condition: rainy
    native_temperature: 9.4
    humidity: 81
"""


def test_an_inventory_carries_the_new_domains_as_home_assistant_shows_them() -> None:
    home, skipped = import_ha_snapshot(INVENTORY)
    assert skipped == []
    alarm = home.state("alarm_control_panel.house")
    assert alarm.state == "armed_away"
    assert alarm.attributes["code_format"] == "number"
    assert alarm.attributes["changed_by"] is None  # AlarmControlPanelEntity always writes it
    assert home.entities["alarm_control_panel.house"].supported_features == 3
    assert home.state("lawn_mower.mower").state == "mowing"
    height = home.entities["number.mower_cutting_height"]
    assert height.capabilities == {"min": 2, "max": 6, "step": 0.5, "mode": "slider"}
    assert height.unit_of_measurement == "cm"
    assert home.state("number.mower_cutting_height").state == "4.0"
    assert home.state("select.mower_headlight_mode").state == "always_off"
    assert home.entities["siren.doorbell"].capabilities == {"available_tones": ["ding", "dong"]}
    assert home.state("siren.doorbell").state == "off"
    forecast = home.state("weather.forecast")
    assert (forecast.state, forecast.attributes["temperature"]) == ("rainy", 9.4)
    assert forecast.attributes["temperature_unit"] == "°C"
    # The twin acts on them, by Home Assistant's rules.
    home.call_service("number", "set_value", {"value": 5.5}, {"entity_id": height.entity_id})
    assert home.state(height.entity_id).state == "5.5"
    with pytest.raises(ServiceValidationError, match="outside valid range 2 - 6"):
        home.call_service("number", "set_value", {"value": 7}, {"entity_id": height.entity_id})
    home.call_service("siren", "turn_on", {"tone": "dong"}, {"entity_id": "siren.doorbell"})
    home.call_service("lawn_mower", "dock", target={"entity_id": "lawn_mower.mower"})
    assert home.state("lawn_mower.mower").state == "returning"
    assert load_home(dump_home(home)).states == home.states
    assert import_ha_snapshot(export_ha_snapshot(home))[0].states == home.states


def ha_states() -> dict[str, dict[str, Any]]:
    """The six domains' states as Home Assistant's API gives them."""
    return {
        "alarm_control_panel.house": state(
            "alarm_control_panel.house",
            "armed_home",
            {
                "code_format": "text",
                "changed_by": "Keypad",
                "code_arm_required": False,
                "friendly_name": "House",
                "supported_features": 19,
            },
        ),
        "lawn_mower.mower": state(
            "lawn_mower.mower", "docked", {"friendly_name": "Mower", "supported_features": 15}
        ),
        "number.height": state(
            "number.height",
            "4.0",
            {
                "min": 2,
                "max": 6,
                "step": 0.5,
                "mode": "slider",
                "unit_of_measurement": "cm",
                "friendly_name": "Height",
            },
        ),
        "select.lights": state(
            "select.lights",
            "always_on",
            {"options": ["always_on", "always_off"], "friendly_name": "Lights"},
        ),
        "siren.bell": state(
            "siren.bell",
            "off",
            {"available_tones": ["ding"], "friendly_name": "Bell", "supported_features": 7},
        ),
        "weather.home": state(
            "weather.home",
            "rainy",
            {
                "temperature": 9.4,
                "humidity": 81,
                "temperature_unit": "°C",
                "pressure_unit": "hPa",
                "wind_speed_unit": "km/h",
                "visibility_unit": "km",
                "precipitation_unit": "mm",
                "friendly_name": "Home",
                "supported_features": 3,
            },
        ),
    }


async def test_the_mirror_mirrors_the_new_domains_and_acts_on_them() -> None:
    link = FakeLink()
    link.states_ = ha_states()
    link.registries["entity"] = [
        {"entity_id": entity_id, "device_id": None, "area_id": None, "name": None,
         "original_name": raw["attributes"]["friendly_name"], "entity_category": None}
        for entity_id, raw in link.states_.items()
    ]  # fmt: skip
    link.registries["device"] = []
    mirror = Mirror(link, "Flat", clock=Clock())
    await mirror.sync()
    home = mirror.home
    assert mirror.skipped == []
    assert {eid: s.as_dict() for eid, s in home.states.items()} == link.states_
    home.call_service("alarm_control_panel", "alarm_arm_away", target={"entity_id": "all"})
    assert home.state("alarm_control_panel.house").state == "armed_away"  # no code needed
    home.call_service("select", "select_next", target={"entity_id": "select.lights"})
    assert home.state("select.lights").state == "always_off"
    home.call_service("lawn_mower", "start_mowing", target={"entity_id": "lawn_mower.mower"})
    assert home.state("lawn_mower.mower").state == "mowing"

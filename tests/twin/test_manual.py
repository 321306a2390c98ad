"""The device manual: services by supported features, fields, ranges and options per entity."""

from __future__ import annotations

import json
from typing import Any

import pytest
import voluptuous as vol

from twin.catalog import load_catalog
from twin.domains import DOMAINS
from twin.errors import EntityNotFoundError, ServiceValidationError
from twin.home import Home
from twin.manual import FIELDS, accepts, describe
from twin.registry import Area, EntityEntry
from twin.validation import boolean, string

DEVICES = {
    "color_bulb": "Colour bulb",
    "dimmable_bulb": "Dimmable bulb",
    "onoff_light": "Porch light",
    "color_white_bulb": "White bulb",
    "split_air_conditioner": "Split AC",
    "smart_thermostat": "Thermostat",
    "portable_air_conditioner": "Portable AC",
    "tower_fan": "Tower fan",
    "bathroom_exhaust_fan": "Exhaust fan",
    "ceiling_fan_with_light": "Ceiling fan",
    "venetian_blind": "Blind",
    "garage_door_opener": "Garage door",
    "motorised_window": "Roof window",
    "smart_tv": "TV",
    "soundbar": "Soundbar",
    "smart_speaker": "Speaker",
    "humidifier": "Humidifier",
    "keypad_door_lock": "Back door",
    "smart_door_lock": "Front door",
    "unlatching_door_lock": "Gate lock",
    "electric_water_heater": "Boiler",
    "robot_vacuum": "Robot",
    "irrigation_valve": "Sprinkler",
    "temperature_sensor": "Hall thermometer",
}


@pytest.fixture(scope="module")
def home() -> Home:
    """One device of many catalog types, all in the living room."""
    home = Home()
    home.add_area(Area("living", "Living room"))
    catalog = load_catalog()
    for type_id, name in DEVICES.items():
        catalog[type_id].install(home, type_id, name, "living")
    return home


def services(home: Home, entity_id: str) -> dict[str, Any]:
    result: dict[str, Any] = describe(home, entity_id)["services"]
    return result


def fields(home: Home, entity_id: str, service: str) -> dict[str, Any]:
    result: dict[str, Any] = services(home, entity_id)[service]["fields"]
    return result


def test_the_manual_names_the_entity_its_device_and_state(home: Home) -> None:
    manual = describe(home, "light.colour_bulb")
    assert {key: manual[key] for key in ("entity_id", "name", "domain", "area", "state")} == {
        "entity_id": "light.colour_bulb",
        "name": "Colour bulb",
        "domain": "light",
        "area": "living",
        "state": "off",
    }
    assert manual["device"] == {"manufacturer": "LIFX", "model": "Color A19"}
    assert "device_class" not in manual
    assert describe(home, "cover.garage_door")["device_class"] == "garage"


def test_a_colour_bulb_shows_brightness_colour_and_effects(home: Home) -> None:
    turn_on = services(home, "light.colour_bulb")["turn_on"]
    on = turn_on["fields"]
    assert on["brightness"] == {
        "type": "integer",
        "required": False,
        "min": 0,
        "max": 255,
        "description": on["brightness"]["description"],
    }
    assert (on["brightness_pct"]["min"], on["brightness_pct"]["max"]) == (0, 100)
    assert on["brightness_pct"]["unit"] == "%"
    assert on["color_temp_kelvin"]["type"] == "integer"
    assert (on["color_temp_kelvin"]["min"], on["color_temp_kelvin"]["max"]) == (1500, 9000)
    assert on["color_temp_kelvin"]["unit"] == "K"
    assert on["hs_color"]["items"] == [
        {"type": "number", "min": 0, "max": 360},
        {"type": "number", "min": 0, "max": 100},
    ]
    assert on["rgb_color"]["length"] == 3
    assert on["rgb_color"]["items"] == {"type": "integer", "min": 0, "max": 255}
    assert on["xy_color"]["items"] == {"type": "number", "min": 0, "max": 1}
    assert on["effect"]["options"] == ["off", "colorloop", "pulse", "candle", "flame"]
    assert on["transition"]["unit"] == "s"
    assert "flash" not in on  # the bulb lacks the feature
    assert "white" not in on  # and the white mode
    assert ["brightness", "brightness_pct", "brightness_step", "brightness_step_pct"] in (
        turn_on["at_most_one_of"]
    )
    assert "hs_color" in next(g for g in turn_on["at_most_one_of"] if "rgb_color" in g)


def test_fields_repeated_from_an_earlier_service_are_named(home: Home) -> None:
    manual = services(home, "light.colour_bulb")
    assert manual["toggle"] == {
        "description": DOMAINS["light"].services["toggle"].description,
        "fields_as": "turn_on",
    }
    assert "fields" in manual["turn_off"]  # two fields only: shown in full


def test_white_and_plain_lights_hide_what_they_cannot_do(home: Home) -> None:
    dimmable = fields(home, "light.dimmable_bulb", "turn_on")
    assert set(dimmable) == {
        "profile",
        "transition",
        "brightness",
        "brightness_pct",
        "brightness_step",
        "brightness_step_pct",
        "flash",
    }
    assert dimmable["flash"]["options"] == ["short", "long"]
    assert set(fields(home, "light.porch_light", "turn_on")) == {"profile"}
    assert "fields" not in services(home, "light.porch_light")["turn_off"]
    white = fields(home, "light.white_bulb", "turn_on")
    assert white["white"]["type"] == ["boolean", "integer"]
    assert "hs_color" in white
    assert "effect" not in white


def test_a_split_air_conditioner(home: Home) -> None:
    manual = services(home, "climate.split_ac")
    assert list(manual) == [
        "set_hvac_mode",
        "set_temperature",
        "set_fan_mode",
        "set_swing_mode",
        "turn_on",
        "turn_off",
        "toggle",
    ]
    temperature = manual["set_temperature"]["fields"]
    assert temperature["temperature"] == {
        "type": "number",
        "required": False,
        "min": 16.0,
        "max": 30.0,
        "step": 0.5,
        "unit": "°C",
        "description": "Target temperature.",
    }
    assert "target_temp_low" not in temperature
    assert temperature["hvac_mode"]["options"] == ["off", "cool", "heat", "dry", "fan_only", "auto"]
    assert manual["set_hvac_mode"]["fields"]["hvac_mode"]["required"] is True
    assert manual["set_fan_mode"]["fields"]["fan_mode"]["options"] == [
        "auto",
        "quiet",
        "low",
        "medium",
        "high",
    ]


def test_a_range_thermostat_and_a_humidity_setting(home: Home) -> None:
    thermostat = services(home, "climate.thermostat")["set_temperature"]
    assert {"temperature", "target_temp_low", "target_temp_high"} <= set(thermostat["fields"])
    assert thermostat["all_or_none_of"] == [["target_temp_high", "target_temp_low"]]
    assert "set_humidity" not in services(home, "climate.thermostat")
    humidity = fields(home, "climate.portable_ac", "set_humidity")["humidity"]
    assert (humidity["min"], humidity["max"], humidity["step"], humidity["unit"]) == (
        35,
        85,
        5,
        "%",
    )


def test_fans_show_speed_steps_presets_and_nothing_unsupported(home: Home) -> None:
    tower = services(home, "fan.tower_fan")
    assert "set_direction" not in tower
    percentage = tower["set_percentage"]["fields"]["percentage"]
    assert (percentage["min"], percentage["max"], percentage["step"]) == (0, 100, 100 / 12)
    assert tower["turn_on"]["fields"]["preset_mode"]["options"] == ["natural", "sleep", "auto"]
    assert tower["oscillate"]["fields"]["oscillating"]["type"] == "boolean"
    exhaust = services(home, "fan.exhaust_fan")
    assert list(exhaust) == ["turn_on", "turn_off", "toggle"]
    assert "fields" not in exhaust["turn_on"]
    ceiling = services(home, "fan.ceiling_fan")
    assert ceiling["set_direction"]["fields"]["direction"]["options"] == ["forward", "reverse"]
    assert ceiling["set_preset_mode"]["fields"]["preset_mode"]["options"] == []


def test_covers_by_their_features(home: Home) -> None:
    blind = services(home, "cover.blind")
    assert blind["set_cover_position"]["fields"]["position"] == {
        "type": "integer",
        "required": True,
        "min": 0,
        "max": 100,
        "unit": "%",
        "description": "Position: 0 is closed, 100 fully open.",
    }
    assert "set_cover_tilt_position" in blind
    assert "fields" not in blind["open_cover"]  # no speed feature
    assert list(services(home, "cover.garage_door")) == [
        "open_cover",
        "close_cover",
        "stop_cover",
        "toggle",
    ]
    window = fields(home, "cover.roof_window", "open_cover")
    assert window["speed"]["options"] == ["silent", "fast", "default"]


def test_media_players_by_their_features(home: Home) -> None:
    tv = services(home, "media_player.tv")
    assert tv["select_source"]["fields"]["source"]["options"][:2] == ["HDMI 1", "HDMI 2"]
    volume = tv["volume_set"]["fields"]["volume_level"]
    assert (volume["type"], volume["min"], volume["max"]) == ("number", 0, 1)
    assert not {"select_sound_mode", "shuffle_set", "repeat_set"} & set(tv)
    play = tv["play_media"]
    assert play["fields"]["media_content_id"]["required"] is True
    assert play["fields"]["enqueue"]["options"] == ["add", "next", "play", "replace"]
    assert play["at_most_one_of"] == [["enqueue", "announce"]]
    soundbar = services(home, "media_player.soundbar")
    assert "Night" in soundbar["select_sound_mode"]["fields"]["sound_mode"]["options"]
    assert "play_media" not in soundbar
    speaker = services(home, "media_player.speaker")
    assert speaker["repeat_set"]["fields"]["repeat"]["options"] == ["off", "all", "one"]
    assert "turn_on" not in speaker


def test_humidifiers_locks_water_heaters_vacuums_and_valves(home: Home) -> None:
    humidifier = services(home, "humidifier.humidifier")
    humidity = humidifier["set_humidity"]["fields"]["humidity"]
    assert (humidity["min"], humidity["max"]) == (30, 80)
    assert humidifier["set_mode"]["fields"]["mode"]["options"] == ["auto", "sleep", "manual"]
    keypad = fields(home, "lock.back_door", "unlock")["code"]
    assert keypad["required"] is True
    assert keypad["pattern"] == r"^\d{4}$"
    front = services(home, "lock.front_door")
    assert fields(home, "lock.front_door", "lock")["code"]["required"] is False
    assert "open" not in front
    assert "open" in services(home, "lock.gate_lock")
    boiler = services(home, "water_heater.boiler")
    temperature = boiler["set_temperature"]["fields"]["temperature"]
    assert (temperature["min"], temperature["max"], temperature["step"]) == (40.0, 75.0, 1.0)
    assert boiler["set_operation_mode"]["fields"]["operation_mode"]["options"][0] == "eco"
    robot = services(home, "vacuum.robot")
    assert robot["set_fan_speed"]["fields"]["fan_speed"]["options"] == [
        "quiet",
        "balanced",
        "turbo",
        "max",
    ]
    assert robot["send_command"]["fields"]["params"]["type"] == ["object", "array"]
    position = fields(home, "valve.sprinkler", "set_valve_position")["position"]
    assert (position["min"], position["max"]) == (0, 100)


def test_a_sensor_has_no_services_but_its_unit(home: Home) -> None:
    manual = describe(home, "sensor.hall_thermometer")
    assert manual["services"] == {}
    assert manual["unit_of_measurement"] == "°C"
    assert manual["device_class"] == "temperature"


def test_every_manual_lists_exactly_the_supported_services_and_schema_fields(home: Home) -> None:
    for entity_id, entry in home.entities.items():
        manual = describe(home, entity_id)
        domain = DOMAINS[entry.domain]
        supported = [s.name for s in domain.services.values() if s.supported_by(entry)]
        assert list(manual["services"]) == supported, entity_id
        for name, service in manual["services"].items():
            known = {spec.name for spec in FIELDS[entry.domain, name]}
            assert set(service.get("fields", {})) <= known, (entity_id, name)
        assert json.loads(json.dumps(manual)) == manual
        assert describe(home, entity_id) == manual


def test_the_ranges_shown_are_the_ranges_the_home_enforces(home: Home) -> None:
    twin = home.copy()
    target = {"entity_id": "climate.split_ac"}
    twin.call_service("climate", "set_temperature", {"temperature": 30.0}, target)
    with pytest.raises(ServiceValidationError):
        twin.call_service("climate", "set_temperature", {"temperature": 30.5}, target)
    humidity = fields(home, "humidifier.humidifier", "set_humidity")["humidity"]
    target = {"entity_id": "humidifier.humidifier"}
    twin.call_service("humidifier", "set_humidity", {"humidity": humidity["max"]}, target)
    with pytest.raises(ServiceValidationError):
        twin.call_service("humidifier", "set_humidity", {"humidity": humidity["max"] + 1}, target)
    effects = fields(home, "light.colour_bulb", "turn_on")["effect"]["options"]
    target = {"entity_id": "light.colour_bulb"}
    twin.call_service("light", "turn_on", {"effect": effects[-1]}, target)
    with pytest.raises(ServiceValidationError):
        twin.call_service("light", "turn_on", {"effect": "disco"}, target)


def test_an_entity_without_capabilities_falls_back_to_the_domain_defaults() -> None:
    home = Home()
    home.add_entity(
        EntityEntry("climate.bare", "Bare", supported_features=1 | 4), "heat", {"temperature": 20}
    )
    manual = services(home, "climate.bare")
    temperature = manual["set_temperature"]["fields"]["temperature"]
    assert (temperature["min"], temperature["max"]) == (7.0, 35.0)
    assert "step" not in temperature
    humidity = manual["set_humidity"]["fields"]["humidity"]
    assert (humidity["min"], humidity["max"]) == (30, 99)
    assert manual["set_hvac_mode"]["fields"]["hvac_mode"]["options"] == []
    assert describe(home, "climate.bare")["device"] is None
    assert describe(home, "climate.bare")["area"] is None


def test_unknown_entities_raise() -> None:
    with pytest.raises(EntityNotFoundError, match=r"light\.nowhere"):
        describe(Home(), "light.nowhere")


@pytest.mark.parametrize(
    ("validator", "expected"),
    [
        (
            vol.All(vol.Coerce(int), vol.Range(min=0, max=10)),
            {"type": "integer", "min": 0, "max": 10},
        ),
        (
            vol.All(vol.Coerce(float), vol.Clamp(min=-1), vol.Range(min=0, max=5)),
            {"type": "number", "min": 0, "max": 5},
        ),
        (vol.In(["a", "b"]), {"type": "string", "options": ["a", "b"]}),
        (vol.In(["a", 1]), {"options": ["a", 1]}),
        (vol.Any(boolean, vol.In(["x"])), {"type": ["boolean", "string"], "options": ["x"]}),
        (vol.Schema(string), {"type": "string"}),
        (dict, {"type": "object"}),
        (True, {"type": "boolean"}),
        (lambda value: value, {}),
        (vol.Length(min=1), {}),
    ],
)
def test_what_a_validator_accepts(validator: Any, expected: dict[str, Any]) -> None:
    assert accepts(validator) == expected

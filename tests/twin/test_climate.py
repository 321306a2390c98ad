"""climate: Home Assistant's climate services, their schemas and ServiceValidationErrors, and
hvac_action kept consistent with the mode and temperatures."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import climate
from twin.domains.climate import derive_hvac_action
from twin.errors import (
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TwinError,
)
from twin.home import Home
from twin.registry import Area, EntityEntry

SPLIT = "climate.living_ac"
THERMOSTAT = "climate.hallway_thermostat"
HEAT_PUMP = "climate.bedroom_heat_pump"
TRV = "climate.bedroom_radiator"
PORTABLE = "climate.office_ac"
RANGE_ONLY = "climate.loft"
BARE = "climate.garage"

CLIMATE_TYPES = sorted(
    type_id
    for type_id, device_type in load_catalog().items()
    if any(spec.domain == "climate" for spec in device_type.entities)
)


def build_home() -> Home:
    """Every climate device type of the catalog, a range-only thermostat and a bare entity."""
    home = Home()
    for area_id in ("living", "bedroom", "office", "loft", "garage"):
        home.add_area(Area(area_id, area_id.title()))
    catalog = load_catalog()
    catalog["split_air_conditioner"].install(home, "ac", "Living AC", "living")
    catalog["smart_thermostat"].install(home, "stat", "Hallway thermostat", "living")
    catalog["heat_pump"].install(home, "hp", "Bedroom heat pump", "bedroom")
    catalog["radiator_thermostat"].install(home, "trv", "Bedroom radiator", "bedroom")
    catalog["portable_air_conditioner"].install(home, "pac", "Office AC", "office")
    # Like Home Assistant's demo "Ecobee": a range and no single target.
    home.add_entity(
        EntityEntry(
            RANGE_ONLY,
            "Loft",
            area_id="loft",
            supported_features=climate.TARGET_TEMPERATURE_RANGE
            | climate.TURN_ON
            | climate.TURN_OFF,
            capabilities={"hvac_modes": ["off", "heat", "cool", "heat_cool"]},
        ),
        "off",
        {
            "current_temperature": 18.0,
            "target_temp_low": 19.0,
            "target_temp_high": 25.0,
            "hvac_action": "off",
        },
    )
    # No limits, no options and no hvac_action: Home Assistant's defaults apply.
    home.add_entity(
        EntityEntry(
            BARE,
            "Garage",
            area_id="garage",
            supported_features=climate.TARGET_TEMPERATURE
            | climate.TARGET_HUMIDITY
            | climate.FAN_MODE
            | climate.TURN_ON,
            capabilities={"hvac_modes": ["heat"]},
        ),
        "heat",
        {"current_temperature": None, "temperature": 10.0, "humidity": 50, "fan_mode": None},
    )
    return home


@pytest.fixture
def home() -> Home:
    return build_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> None:
    home.call_service("climate", service, data, {"entity_id": entity_id})


def attrs(home: Home, entity_id: str) -> dict[str, Any]:
    return home.state(entity_id).attributes


def refuses(
    home: Home, error: type[TwinError], match: str, service: str, target: Any, **data: Any
) -> None:
    """The call fails with `error` and changes nothing."""
    before = dict(home.states)
    with pytest.raises(error, match=match):
        call(home, service, target, **data)
    assert home.states == before


# --- device types -------------------------------------------------------------------------------


def expected_keys(features: int, attributes: dict[str, Any]) -> set[str]:
    """The attribute names Home Assistant's ClimateEntity shows for these features."""
    keys = {"hvac_modes", "min_temp", "max_temp", "current_temperature", "friendly_name"}
    keys |= {"supported_features"} if features else set()
    optional = ("target_temp_step", "current_humidity", "hvac_action", "target_humidity_step")
    keys |= {key for key in optional if key in attributes}
    by_feature = {
        climate.TARGET_TEMPERATURE: {"temperature"},
        climate.TARGET_TEMPERATURE_RANGE: {"target_temp_low", "target_temp_high"},
        climate.TARGET_HUMIDITY: {"humidity", "min_humidity", "max_humidity"},
        climate.FAN_MODE: {"fan_mode", "fan_modes"},
        climate.PRESET_MODE: {"preset_mode", "preset_modes"},
        climate.SWING_MODE: {"swing_mode", "swing_modes"},
        climate.SWING_HORIZONTAL_MODE: {"swing_horizontal_mode", "swing_horizontal_modes"},
    }
    for feature, names in by_feature.items():
        if features & feature:
            keys |= names
    return keys


@pytest.mark.parametrize("type_id", CLIMATE_TYPES)
def test_device_types_start_as_home_assistant_shows_them(type_id: str) -> None:
    home = Home()
    load_catalog()[type_id].install(home, "d", "Unit")
    state = home.state("climate.unit")
    entry = home.entities["climate.unit"]
    features, shown = entry.supported_features, state.attributes
    assert set(shown) == expected_keys(features, shown)
    assert state.state in shown["hvac_modes"]
    assert shown["hvac_action"] == derive_hvac_action(state.state, shown)
    if features & climate.TURN_OFF:
        assert "off" in shown["hvac_modes"]
    for key in ("fan_mode", "preset_mode", "swing_mode", "swing_horizontal_mode"):
        if key in shown:
            assert shown[key] in shown[f"{key}s"]
    targets = [shown.get(key) for key in ("temperature", "target_temp_low", "target_temp_high")]
    for value in targets:
        assert value is None or shown["min_temp"] <= value <= shown["max_temp"]
    if features & climate.DUAL_TARGETS == climate.DUAL_TARGETS:
        ranged = state.state == "heat_cool"
        assert (shown["temperature"] is None) == ranged
        assert (shown["target_temp_low"] is None) != ranged
    sensors = [s for s in home.states.values() if s.attributes.get("device_class") == "temperature"]
    for sensor in sensors:
        assert float(sensor.state) == shown["current_temperature"]


def test_split_air_conditioner_has_its_own_temperature_sensor(home: Home) -> None:
    sensor = home.state("sensor.living_ac_inside_temperature")
    assert sensor.attributes["unit_of_measurement"] == "°C"
    assert float(sensor.state) == attrs(home, SPLIT)["current_temperature"]


def test_feature_flags_match_home_assistant() -> None:
    assert climate.DOMAIN.features == {
        "target_temperature": 1,
        "target_temperature_range": 2,
        "target_humidity": 4,
        "fan_mode": 8,
        "preset_mode": 16,
        "swing_mode": 32,
        "turn_off": 128,
        "turn_on": 256,
        "swing_horizontal_mode": 512,
    }
    assert set(climate.DOMAIN.services) == {
        "set_hvac_mode",
        "set_temperature",
        "set_humidity",
        "set_fan_mode",
        "set_preset_mode",
        "set_swing_mode",
        "set_swing_horizontal_mode",
        "turn_on",
        "turn_off",
        "toggle",
    }


# --- set_hvac_mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "action"),
    [
        ("cool", "idle"),  # 22 °C is below the 24 °C target
        ("heat", "heating"),
        ("dry", "drying"),
        ("fan_only", "fan"),
        ("auto", "heating"),
        ("off", "off"),
    ],
)
def test_set_hvac_mode(home: Home, mode: str, action: str) -> None:
    call(home, "set_hvac_mode", SPLIT, hvac_mode=mode)
    assert home.state(SPLIT).state == mode
    assert attrs(home, SPLIT)["hvac_action"] == action


def test_set_hvac_mode_refuses_modes_home_assistant_does_not_know(home: Home) -> None:
    for bad in ("Cool", "warm", 3, None, ["cool"]):
        refuses(
            home,
            InvalidServiceDataError,
            "expected HVACMode",
            "set_hvac_mode",
            SPLIT,
            hvac_mode=bad,
        )
    refuses(home, InvalidServiceDataError, "required key", "set_hvac_mode", SPLIT)
    refuses(
        home, InvalidServiceDataError, "extra keys", "set_hvac_mode", SPLIT, hvac_mode="cool", x=1
    )


def test_set_hvac_mode_refuses_a_mode_the_entity_lacks(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        r"HVAC mode heat_cool is not valid for climate.living_ac. Valid HVAC modes are: off, cool",
        "set_hvac_mode",
        SPLIT,
        hvac_mode="heat_cool",
    )
    refuses(
        home,
        ServiceValidationError,
        "Valid HVAC modes are: heat, off",
        "set_hvac_mode",
        TRV,
        hvac_mode="cool",
    )


# --- set_temperature ----------------------------------------------------------------------------


def test_set_temperature_coerces_and_shows_tenths_without_rounding_to_the_step(home: Home) -> None:
    call(home, "set_temperature", SPLIT, temperature="23.5")
    assert attrs(home, SPLIT)["temperature"] == 23.5
    call(home, "set_temperature", SPLIT, temperature=22.34)  # the step is 0.5
    assert attrs(home, SPLIT)["temperature"] == 22.3
    call(home, "set_temperature", SPLIT, temperature=21)
    assert type(attrs(home, SPLIT)["temperature"]) is float


@pytest.mark.parametrize("value", [16, 30, 16.0, "30"])
def test_set_temperature_accepts_the_limits(home: Home, value: Any) -> None:
    call(home, "set_temperature", SPLIT, temperature=value)
    assert attrs(home, SPLIT)["temperature"] == float(value)


@pytest.mark.parametrize("value", [15.9, 30.04, -5])
def test_set_temperature_refuses_values_outside_min_and_max(home: Home, value: float) -> None:
    refuses(
        home,
        ServiceValidationError,
        "is not valid for climate.living_ac. Accepted range is 16.0 to 30.0",
        "set_temperature",
        SPLIT,
        temperature=value,
    )


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 10**400, "1e999"])
def test_set_temperature_refuses_what_is_no_temperature(home: Home, value: Any) -> None:
    """Not a finite number is invalid data, before the entity's range is read (NaN would pass a
    range check, and 10**400 cannot become a float)."""
    refuses(
        home,
        InvalidServiceDataError,
        "must be a finite number",
        "set_temperature",
        SPLIT,
        temperature=value,
    )


def test_set_temperature_checks_every_target_against_the_limits(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "Provided temperature 40.0",
        "set_temperature",
        RANGE_ONLY,
        target_temp_low=20,
        target_temp_high=40,
    )


def test_set_temperature_uses_home_assistants_default_limits(home: Home) -> None:
    """HA's defaults are the ints 7 and 35, and its message shows them so."""
    call(home, "set_temperature", BARE, temperature=7)
    call(home, "set_temperature", BARE, temperature=35)
    refuses(home, ServiceValidationError, "is 7 to 35", "set_temperature", BARE, temperature=35.5)
    refuses(home, ServiceValidationError, "is 7 to 35", "set_temperature", BARE, temperature=6.9)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({}, "at least one of temperature, target_temp_high, target_temp_low"),
        ({"hvac_mode": "cool"}, "at least one of"),
        ({"target_temp_high": 25}, "group of inclusion"),
        ({"target_temp_low": 20}, "group of inclusion"),
        ({"temperature": "warm"}, "expected float"),
        ({"temperature": 22, "hvac_mode": "chilly"}, "expected HVACMode"),
        ({"temperature": 22, "fan_mode": "low"}, "extra keys"),
    ],
)
def test_set_temperature_schema(home: Home, data: dict[str, Any], match: str) -> None:
    refuses(home, InvalidServiceDataError, match, "set_temperature", SPLIT, **data)


def test_set_temperature_with_a_mode_sets_both(home: Home) -> None:
    call(home, "set_temperature", SPLIT, temperature=20, hvac_mode="cool")
    state = home.state(SPLIT)
    assert (state.state, state.attributes["temperature"]) == ("cool", 20.0)
    assert state.attributes["hvac_action"] == "cooling"  # 22 °C in the room


def test_set_temperature_refuses_a_mode_the_entity_lacks(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "HVAC mode heat_cool is not valid",
        "set_temperature",
        SPLIT,
        temperature=20,
        hvac_mode="heat_cool",
    )


def test_single_target_entities_refuse_a_range(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "climate.living_ac has no target temperature range; set temperature",
        "set_temperature",
        SPLIT,
        target_temp_low=20,
        target_temp_high=24,
    )


def test_range_entities_refuse_a_single_target(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "climate.loft has no single target temperature; set target_temp_low and target_temp_high",
        "set_temperature",
        RANGE_ONLY,
        temperature=21,
    )
    call(home, "set_temperature", RANGE_ONLY, target_temp_low=18.26, target_temp_high=22)
    shown = attrs(home, RANGE_ONLY)
    assert (shown["target_temp_low"], shown["target_temp_high"]) == (18.3, 22.0)
    assert "temperature" not in shown


def test_low_may_not_be_higher_than_high(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        r"target_temp_low \(23.0\) cannot be higher than target_temp_high \(22.0\)",
        "set_temperature",
        RANGE_ONLY,
        target_temp_low=23,
        target_temp_high=22,
    )
    call(home, "set_temperature", RANGE_ONLY, target_temp_low=22, target_temp_high=22)
    assert attrs(home, RANGE_ONLY)["target_temp_low"] == 22.0


def test_dual_thermostat_takes_the_range_in_heat_cool_and_a_single_target_otherwise(
    home: Home,
) -> None:
    refuses(
        home,
        ServiceValidationError,
        "in heat_cool mode takes target_temp_low and target_temp_high, not temperature",
        "set_temperature",
        THERMOSTAT,
        temperature=21,
    )
    refuses(
        home,
        ServiceValidationError,
        "in heat_cool mode takes",
        "set_temperature",
        THERMOSTAT,
        temperature=21,
        target_temp_low=19,
        target_temp_high=23,
    )
    call(home, "set_temperature", THERMOSTAT, target_temp_low=19, target_temp_high=23)
    call(home, "set_temperature", THERMOSTAT, temperature=22, hvac_mode="heat")
    shown = attrs(home, THERMOSTAT)
    assert home.state(THERMOSTAT).state == "heat"
    assert (shown["temperature"], shown["target_temp_low"], shown["target_temp_high"]) == (
        22.0,
        None,
        None,
    )
    assert shown["hvac_action"] == "heating"
    refuses(
        home,
        ServiceValidationError,
        "in heat mode takes temperature, not target_temp_low",
        "set_temperature",
        THERMOSTAT,
        target_temp_low=19,
        target_temp_high=23,
    )
    # The range is remembered while the single target shows, and the other way round.
    call(home, "set_hvac_mode", THERMOSTAT, hvac_mode="heat_cool")
    shown = attrs(home, THERMOSTAT)
    assert (shown["temperature"], shown["target_temp_low"], shown["target_temp_high"]) == (
        None,
        19.0,
        23.0,
    )
    call(home, "set_hvac_mode", THERMOSTAT, hvac_mode="off")
    assert attrs(home, THERMOSTAT)["temperature"] == 22.0
    call(home, "set_temperature", THERMOSTAT, temperature=18)
    call(
        home,
        "set_temperature",
        THERMOSTAT,
        target_temp_low=17,
        target_temp_high=26,
        hvac_mode="heat_cool",
    )
    assert home.state(THERMOSTAT).state == "heat_cool"
    assert attrs(home, THERMOSTAT)["target_temp_low"] == 17.0
    call(home, "set_hvac_mode", THERMOSTAT, hvac_mode="cool")
    assert attrs(home, THERMOSTAT)["temperature"] == 18.0


@pytest.mark.parametrize(("mode", "temperature"), [("heat", 20.0), ("cool", 24.0), ("off", 22.0)])
def test_dual_thermostat_leaving_its_first_range_keeps_the_setpoint_of_the_mode(
    home: Home, mode: str, temperature: float
) -> None:
    call(home, "set_hvac_mode", THERMOSTAT, hvac_mode=mode)
    assert attrs(home, THERMOSTAT)["temperature"] == temperature


def test_dual_thermostat_entering_its_first_range_centres_it_on_the_target(home: Home) -> None:
    home.add_entity(
        EntityEntry(
            "climate.study",
            "Study",
            supported_features=climate.DUAL_TARGETS,
            capabilities={"hvac_modes": ["heat", "heat_cool"], "min_temp": 10.0, "max_temp": 30.0},
        ),
        "heat",
        {
            "current_temperature": 20.0,
            "temperature": 29.5,
            "target_temp_low": None,
            "target_temp_high": None,
        },
    )
    call(home, "set_hvac_mode", "climate.study", hvac_mode="heat_cool")
    shown = attrs(home, "climate.study")
    assert (shown["temperature"], shown["target_temp_low"], shown["target_temp_high"]) == (
        None,
        28.5,
        30.0,
    )
    assert "hvac_action" not in shown


# --- set_humidity -------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "shown"), [(45, 45), ("60", 60), (45.7, 45), (35, 35), (85, 85)])
def test_set_humidity(home: Home, value: Any, shown: int) -> None:
    call(home, "set_humidity", PORTABLE, humidity=value)
    assert attrs(home, PORTABLE)["humidity"] == shown
    assert type(attrs(home, PORTABLE)["humidity"]) is int


@pytest.mark.parametrize("value", [34, 86, -1])
def test_set_humidity_refuses_values_outside_min_and_max(home: Home, value: int) -> None:
    refuses(
        home,
        ServiceValidationError,
        f"Provided humidity {value} is not valid for climate.office_ac. Accepted range is 35 to 85",
        "set_humidity",
        PORTABLE,
        humidity=value,
    )


def test_set_humidity_uses_home_assistants_default_limits(home: Home) -> None:
    call(home, "set_humidity", BARE, humidity=99)
    refuses(home, ServiceValidationError, "30 to 99", "set_humidity", BARE, humidity=29)


def test_set_humidity_schema_and_feature(home: Home) -> None:
    refuses(
        home, InvalidServiceDataError, "expected int", "set_humidity", PORTABLE, humidity="45.5"
    )
    refuses(home, InvalidServiceDataError, "required key", "set_humidity", PORTABLE)
    refuses(
        home,
        ServiceNotSupportedError,
        "does not support action climate.set_humidity",
        "set_humidity",
        SPLIT,
        humidity=50,
    )


# --- fan, preset and swing modes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "entity_id", "value", "label"),
    [
        ("set_fan_mode", SPLIT, "quiet", "Fan mode"),
        ("set_preset_mode", THERMOSTAT, "away", "Preset mode"),
        ("set_swing_mode", SPLIT, "both", "Swing mode"),
        ("set_swing_horizontal_mode", HEAT_PUMP, "split", "Horizontal swing mode"),
    ],
)
def test_option_services(home: Home, service: str, entity_id: str, value: str, label: str) -> None:
    key = service.removeprefix("set_")
    call(home, service, entity_id, **{key: value})
    assert attrs(home, entity_id)[key] == value
    refuses(
        home,
        ServiceValidationError,
        f"{label} turbo is not valid for {entity_id}. Valid {label.lower()}s are: ",
        service,
        entity_id,
        **{key: "turbo"},
    )
    refuses(home, InvalidServiceDataError, "required key", service, entity_id)
    refuses(home, InvalidServiceDataError, "should be a string", service, entity_id, **{key: ["a"]})
    refuses(
        home,
        ServiceNotSupportedError,
        f"does not support action climate.{service}",
        service,
        TRV,
        **{key: value},
    )


def test_option_values_are_coerced_to_strings(home: Home) -> None:
    call(home, "set_fan_mode", HEAT_PUMP, fan_mode=3)
    assert attrs(home, HEAT_PUMP)["fan_mode"] == "3"


def test_an_entity_without_options_refuses_every_value(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "Valid fan modes are: none",
        "set_fan_mode",
        BARE,
        fan_mode="low",
    )


# --- turn_on, turn_off, toggle ------------------------------------------------------------------


def test_turn_on_restores_the_last_mode(home: Home) -> None:
    call(home, "set_hvac_mode", HEAT_PUMP, hvac_mode="cool")
    call(home, "turn_off", HEAT_PUMP)
    assert home.state(HEAT_PUMP).state == "off"
    assert attrs(home, HEAT_PUMP)["hvac_action"] == "off"
    call(home, "turn_on", HEAT_PUMP)
    assert home.state(HEAT_PUMP).state == "cool"
    call(home, "set_hvac_mode", HEAT_PUMP, hvac_mode="dry")
    call(home, "set_hvac_mode", HEAT_PUMP, hvac_mode="off")
    call(home, "turn_on", HEAT_PUMP)
    assert home.state(HEAT_PUMP).state == "dry"


def test_turn_on_without_a_last_mode_chooses_as_home_assistant_does(home: Home) -> None:
    call(home, "turn_on", SPLIT)  # off, cool, heat, ...: heat_cool, then heat, then cool
    assert home.state(SPLIT).state == "heat"
    call(home, "turn_on", RANGE_ONLY)
    assert home.state(RANGE_ONLY).state == "heat_cool"
    call(home, "turn_on", PORTABLE)
    assert home.state(PORTABLE).state == "cool"
    home.add_entity(
        EntityEntry(
            "climate.fan",
            "Fan",
            supported_features=climate.TURN_ON,
            capabilities={"hvac_modes": ["off", "fan_only"]},
        ),
        "off",
    )
    call(home, "turn_on", "climate.fan")
    assert home.state("climate.fan").state == "fan_only"


def test_turn_on_leaves_an_entity_that_is_on_as_it_is(home: Home) -> None:
    call(home, "set_hvac_mode", HEAT_PUMP, hvac_mode="fan_only")
    result = home.call_service("climate", "turn_on", target={"entity_id": HEAT_PUMP})
    assert result.changed == ()
    assert home.state(HEAT_PUMP).state == "fan_only"


def test_toggle(home: Home) -> None:
    call(home, "toggle", TRV)
    assert home.state(TRV).state == "off"
    call(home, "toggle", TRV)
    assert home.state(TRV).state == "heat"
    assert attrs(home, TRV)["hvac_action"] == "heating"
    call(home, "toggle", BARE)  # only turn_on is supported: toggle is still offered
    assert home.state(BARE).state == "off"


def test_turn_on_and_off_need_their_features(home: Home) -> None:
    refuses(
        home, ServiceNotSupportedError, "does not support action climate.turn_off", "turn_off", BARE
    )
    home.add_entity(
        EntityEntry("climate.dumb", "Dumb", capabilities={"hvac_modes": ["heat"]}), "heat"
    )
    for service in ("turn_on", "turn_off", "toggle"):
        refuses(home, ServiceNotSupportedError, "does not support", service, "climate.dumb")


def test_homeassistant_turn_off_reaches_climate(home: Home) -> None:
    home.call_service("homeassistant", "turn_off", target={"area_id": "bedroom"})
    assert home.state(HEAT_PUMP).state == "off"
    assert home.state(TRV).state == "off"


# --- targets: skipping and all-or-nothing -------------------------------------------------------


def test_area_targets_skip_entities_without_the_feature(home: Home) -> None:
    result = home.call_service(
        "climate", "set_swing_mode", {"swing_mode": "swing"}, {"area_id": "bedroom"}
    )
    assert result.entity_ids == (HEAT_PUMP,)
    assert attrs(home, HEAT_PUMP)["swing_mode"] == "swing"


@pytest.mark.parametrize(
    ("service", "data", "target", "match"),
    [
        ("set_temperature", {"temperature": 30.5}, [HEAT_PUMP, SPLIT], "16.0 to 30.0"),
        (
            "set_fan_mode",
            {"fan_mode": "quiet"},
            [SPLIT, PORTABLE],
            "quiet is not valid for climate.office_ac",
        ),
        (
            "set_hvac_mode",
            {"hvac_mode": "heat"},
            [SPLIT, HEAT_PUMP, PORTABLE],
            "heat is not valid for climate.office_ac",
        ),
        (
            "turn_on",
            {},
            [SPLIT, PORTABLE, "climate.dumb"],
            "does not support action climate.turn_on",
        ),
    ],
)
def test_a_call_on_several_entities_changes_all_or_none(
    home: Home, service: str, data: dict[str, Any], target: list[str], match: str
) -> None:
    home.add_entity(
        EntityEntry("climate.dumb", "Dumb", capabilities={"hvac_modes": ["heat"]}), "heat"
    )
    error = ServiceNotSupportedError if service == "turn_on" else ServiceValidationError
    refuses(home, error, match, service, target, **data)


def test_an_area_call_changes_all_or_none(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceValidationError, match=r"climate\.hallway_thermostat in heat_cool"):
        home.call_service("climate", "set_temperature", {"temperature": 21}, {"area_id": "living"})
    assert home.states == before


# --- hvac_action ----------------------------------------------------------------------------------

temperatures = st.floats(min_value=5, max_value=35, allow_nan=False).map(lambda t: round(t, 1))


@given(
    mode=st.sampled_from(sorted(climate.HVAC_MODES)),
    current=st.none() | temperatures,
    target=temperatures,
    low=temperatures,
    width=st.floats(min_value=0, max_value=10, allow_nan=False),
    ranged=st.booleans(),
)
def test_hvac_action_follows_mode_and_temperatures(
    mode: str, current: float | None, target: float, low: float, width: float, ranged: bool
) -> None:
    high = low + width
    shown = (
        {
            "current_temperature": current,
            "temperature": None,
            "target_temp_low": low,
            "target_temp_high": high,
        }
        if ranged
        else {"current_temperature": current, "temperature": target}
    )
    heat_below, cool_above = (low, high) if ranged else (target, target)
    action = derive_hvac_action(mode, shown)
    fixed = {"off": "off", "dry": "drying", "fan_only": "fan"}
    if mode in fixed:
        assert action == fixed[mode]
    elif current is None:
        assert action == "idle"
    elif mode in ("heat", "heat_cool", "auto") and current < heat_below:
        assert action == "heating"
    elif mode in ("cool", "heat_cool", "auto") and current > cool_above:
        assert action == "cooling"
    else:
        assert action == "idle"


CALLS: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    st.tuples(
        st.just("set_hvac_mode"),
        st.fixed_dictionaries(
            {"hvac_mode": st.sampled_from(["off", "heat", "cool", "heat_cool", "dry"])}
        ),
    ),
    st.tuples(st.just("set_temperature"), st.fixed_dictionaries({"temperature": temperatures})),
    st.tuples(
        st.just("set_temperature"),
        st.fixed_dictionaries({"target_temp_low": temperatures, "target_temp_high": temperatures}),
    ),
    st.tuples(
        st.just("set_temperature"),
        st.fixed_dictionaries(
            {
                "temperature": temperatures,
                "hvac_mode": st.sampled_from(["heat", "cool", "heat_cool"]),
            }
        ),
    ),
    st.tuples(st.sampled_from(["turn_on", "turn_off", "toggle"]), st.just({})),
    st.tuples(
        st.just("set_preset_mode"),
        st.fixed_dictionaries({"preset_mode": st.sampled_from(["eco", "away", "nope"])}),
    ),
)


@settings(max_examples=60)
@given(
    entity_id=st.sampled_from([SPLIT, THERMOSTAT, HEAT_PUMP, TRV, PORTABLE, RANGE_ONLY]),
    calls=st.lists(CALLS, max_size=12),
)
def test_random_calls_keep_every_entity_consistent(
    entity_id: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    home = build_home()
    entry = home.entities[entity_id]
    for service, data in calls:
        before = home.state(entity_id)
        try:
            call(home, service, entity_id, **data)
        except TwinError:
            assert home.state(entity_id) is before
            continue
        state = home.state(entity_id)
        shown = state.attributes
        assert state.state in shown["hvac_modes"]
        assert shown["hvac_action"] == derive_hvac_action(state.state, shown)
        if shown["hvac_action"] == "heating":
            assert shown["current_temperature"] < (
                shown.get("target_temp_low") or shown["temperature"]
            )
        if shown["hvac_action"] == "cooling":
            assert shown["current_temperature"] > (
                shown.get("target_temp_high") or shown["temperature"]
            )
        low, high = shown.get("target_temp_low"), shown.get("target_temp_high")
        assert (low is None) == (high is None)
        assert low is None or low <= high
        if entry.supported_features & climate.DUAL_TARGETS == climate.DUAL_TARGETS:
            assert (shown["temperature"] is None) == (state.state == "heat_cool")
            assert (low is None) == (state.state != "heat_cool")
        assert "last_on_mode" not in state.as_dict()["attributes"]

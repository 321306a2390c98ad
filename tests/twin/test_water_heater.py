"""water_heater: Home Assistant's water heater services, schemas and ServiceValidationErrors."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import water_heater
from twin.errors import (
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TwinError,
)
from twin.home import Home
from twin.registry import Area, EntityEntry

TANK = "water_heater.utility_tank"
HYBRID = "water_heater.garage_hybrid"
PLAIN = "water_heater.cabin"
BARE = "water_heater.shed"

WATER_HEATER_TYPES = sorted(
    type_id
    for type_id, device_type in load_catalog().items()
    if any(spec.domain == "water_heater" for spec in device_type.entities)
)


def build_home() -> Home:
    """Both catalog water heaters, one with only on/off, one with no operation list."""
    home = Home()
    home.add_area(Area("utility", "Utility"))
    home.add_area(Area("garage", "Garage"))
    catalog = load_catalog()
    catalog["electric_water_heater"].install(home, "tank", "Utility tank", "utility")
    catalog["heat_pump_water_heater"].install(home, "hybrid", "Garage hybrid", "garage")
    home.add_entity(
        EntityEntry(
            PLAIN,
            "Cabin",
            area_id="utility",
            supported_features=water_heater.TARGET_TEMPERATURE | water_heater.ON_OFF,
        ),
        "on",
        {"current_temperature": 45.0, "temperature": 50.0},
    )
    home.add_entity(
        EntityEntry(
            BARE,
            "Shed",
            supported_features=water_heater.OPERATION_MODE | water_heater.TARGET_TEMPERATURE,
        ),
        "eco",
        {"temperature": 50.0, "operation_mode": "eco"},
    )
    return home


@pytest.fixture
def home() -> Home:
    return build_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> None:
    home.call_service("water_heater", service, data, {"entity_id": entity_id})


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


@pytest.mark.parametrize("type_id", WATER_HEATER_TYPES)
def test_device_types_start_as_home_assistant_shows_them(type_id: str) -> None:
    home = Home()
    load_catalog()[type_id].install(home, "d", "Tank")
    state = home.state("water_heater.tank")
    features = home.entities["water_heater.tank"].supported_features
    shown = state.attributes
    keys = {"min_temp", "max_temp", "current_temperature", "temperature", "friendly_name"}
    keys |= {"target_temp_high", "target_temp_low", "supported_features"}
    keys |= {"target_temp_step"} & set(shown)
    if features & water_heater.OPERATION_MODE:
        keys |= {"operation_list", "operation_mode"}
        assert shown["operation_mode"] == state.state
        assert state.state in shown["operation_list"]
    if features & water_heater.AWAY_MODE:
        keys.add("away_mode")
        assert shown["away_mode"] in ("on", "off")
    if features & water_heater.ON_OFF:
        assert "off" in shown["operation_list"]
    assert set(shown) == keys
    assert shown["min_temp"] <= shown["temperature"] <= shown["max_temp"]


def test_feature_flags_match_home_assistant() -> None:
    assert water_heater.DOMAIN.features == {
        "target_temperature": 1,
        "operation_mode": 2,
        "away_mode": 4,
        "on_off": 8,
    }
    assert set(water_heater.DOMAIN.services) == {
        "set_temperature",
        "set_operation_mode",
        "set_away_mode",
        "turn_on",
        "turn_off",
    }


# --- set_temperature ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [(60, 60.0), ("62.5", 62.5), (58.04, 58.0), (40, 40.0), (75, 75.0)]
)
def test_set_temperature(home: Home, value: Any, shown: float) -> None:
    call(home, "set_temperature", TANK, temperature=value)
    assert attrs(home, TANK)["temperature"] == shown
    assert type(attrs(home, TANK)["temperature"]) is float
    assert home.state(TANK).state == "eco"


@pytest.mark.parametrize("value", [39.9, 75.5])
def test_set_temperature_refuses_values_outside_min_and_max(home: Home, value: float) -> None:
    refuses(
        home,
        ServiceValidationError,
        "is not valid for water_heater.utility_tank. Accepted range is 40.0 to 75.0",
        "set_temperature",
        TANK,
        temperature=value,
    )


def test_set_temperature_uses_home_assistants_default_limits(home: Home) -> None:
    call(home, "set_temperature", BARE, temperature=43.3)
    call(home, "set_temperature", BARE, temperature=60)
    refuses(home, ServiceValidationError, "43.3 to 60.0", "set_temperature", BARE, temperature=61)


def test_set_temperature_with_an_operation_mode_sets_both(home: Home) -> None:
    call(home, "set_temperature", HYBRID, temperature=55, operation_mode="heat_pump")
    state = home.state(HYBRID)
    assert state.state == state.attributes["operation_mode"] == "heat_pump"
    assert state.attributes["temperature"] == 55.0


def test_set_temperature_refuses_an_operation_mode_the_entity_lacks(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "Operation mode heat_pump is not valid for water_heater.utility_tank. Valid operation "
        "modes are: eco, electric, high_demand, off",
        "set_temperature",
        TANK,
        temperature=55,
        operation_mode="heat_pump",
    )
    refuses(
        home,
        ServiceValidationError,
        "The operation list is not defined",
        "set_temperature",
        PLAIN,
        temperature=55,
        operation_mode="eco",
    )


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({}, "required key not provided"),
        ({"operation_mode": "eco"}, "required key not provided"),
        ({"temperature": "hot"}, "expected float"),
        ({"temperature": 50, "operation_mode": None}, "string value is None"),
        ({"temperature": 50, "target_temp_high": 60}, "extra keys"),
    ],
)
def test_set_temperature_schema(home: Home, data: dict[str, Any], match: str) -> None:
    refuses(home, InvalidServiceDataError, match, "set_temperature", TANK, **data)


# --- set_operation_mode -------------------------------------------------------------------------


def test_set_operation_mode(home: Home) -> None:
    call(home, "set_operation_mode", HYBRID, operation_mode="high_demand")
    state = home.state(HYBRID)
    assert (state.state, state.attributes["operation_mode"]) == ("high_demand", "high_demand")


def test_set_operation_mode_refuses_modes_outside_the_list(home: Home) -> None:
    refuses(
        home,
        ServiceValidationError,
        "Operation mode gas is not valid for water_heater.garage_hybrid. Valid operation modes "
        "are: eco, heat_pump, high_demand, electric, off",
        "set_operation_mode",
        HYBRID,
        operation_mode="gas",
    )
    refuses(
        home,
        ServiceValidationError,
        "Operation mode eco is not valid for water_heater.shed. The operation list is not defined",
        "set_operation_mode",
        BARE,
        operation_mode="eco",
    )
    refuses(home, InvalidServiceDataError, "required key", "set_operation_mode", HYBRID)
    refuses(
        home,
        ServiceNotSupportedError,
        "does not support action water_heater.set_operation_mode",
        "set_operation_mode",
        PLAIN,
        operation_mode="eco",
    )


# --- set_away_mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [(True, "on"), ("on", "on"), ("yes", "on"), (0, "off"), ("off", "off")]
)
def test_set_away_mode(home: Home, value: Any, shown: str) -> None:
    call(home, "set_away_mode", TANK, away_mode=value)
    assert attrs(home, TANK)["away_mode"] == shown
    assert home.state(TANK).state == "eco"


def test_set_away_mode_schema_and_feature(home: Home) -> None:
    refuses(
        home,
        InvalidServiceDataError,
        "invalid boolean value",
        "set_away_mode",
        TANK,
        away_mode="maybe",
    )
    refuses(home, InvalidServiceDataError, "required key", "set_away_mode", TANK)
    refuses(
        home,
        ServiceNotSupportedError,
        "does not support action water_heater.set_away_mode",
        "set_away_mode",
        PLAIN,
        away_mode=True,
    )


# --- turn_on, turn_off --------------------------------------------------------------------------


def test_turn_on_restores_the_last_operation_mode(home: Home) -> None:
    call(home, "set_operation_mode", HYBRID, operation_mode="heat_pump")
    call(home, "turn_off", HYBRID)
    state = home.state(HYBRID)
    assert (state.state, state.attributes["operation_mode"]) == ("off", "off")
    call(home, "turn_on", HYBRID)
    assert home.state(HYBRID).state == "heat_pump"
    call(home, "set_operation_mode", HYBRID, operation_mode="electric")
    call(home, "set_operation_mode", HYBRID, operation_mode="off")
    call(home, "turn_on", HYBRID)
    assert home.state(HYBRID).state == "electric"


def test_turn_on_without_a_last_mode_takes_the_first_mode_that_is_not_off(home: Home) -> None:
    home.add_entity(
        EntityEntry(
            "water_heater.boiler",
            "Boiler",
            supported_features=water_heater.OPERATION_MODE | water_heater.ON_OFF,
            capabilities={"operation_list": ["off", "performance", "eco"]},
        ),
        "off",
        {"operation_mode": "off"},
    )
    call(home, "turn_on", "water_heater.boiler")
    state = home.state("water_heater.boiler")
    assert (state.state, state.attributes["operation_mode"]) == ("performance", "performance")


def test_turn_on_leaves_a_heater_that_is_on_as_it_is(home: Home) -> None:
    call(home, "set_operation_mode", TANK, operation_mode="high_demand")
    result = home.call_service("water_heater", "turn_on", target={"entity_id": TANK})
    assert result.changed == ()
    assert home.state(TANK).state == "high_demand"


def test_a_heater_without_operation_modes_turns_on_and_off(home: Home) -> None:
    call(home, "turn_off", PLAIN)
    assert home.state(PLAIN).state == "off"
    assert "operation_mode" not in attrs(home, PLAIN)
    call(home, "turn_on", PLAIN)
    assert home.state(PLAIN).state == "on"


def test_turn_on_and_off_need_on_off(home: Home) -> None:
    for service in ("turn_on", "turn_off"):
        refuses(home, ServiceNotSupportedError, f"water_heater.{service}", service, BARE)


def test_homeassistant_turn_off_reaches_water_heaters(home: Home) -> None:
    home.call_service("homeassistant", "turn_off", target={"area_id": "utility"})
    assert home.state(TANK).state == "off"
    assert home.state(PLAIN).state == "off"


# --- all-or-nothing ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "data", "target", "match"),
    [
        (
            "set_temperature",
            {"temperature": 70},
            [TANK, HYBRID],
            "garage_hybrid. Accepted range is 43.0 to 60.0",
        ),
        (
            "set_operation_mode",
            {"operation_mode": "heat_pump"},
            [HYBRID, TANK],
            "heat_pump is not valid for water_heater.utility_tank",
        ),
        (
            "set_temperature",
            {"temperature": 50, "operation_mode": "heat_pump"},
            [HYBRID, TANK],
            "heat_pump is not valid for water_heater.utility_tank",
        ),
    ],
)
def test_a_call_on_several_heaters_changes_all_or_none(
    home: Home, service: str, data: dict[str, Any], target: list[str], match: str
) -> None:
    refuses(home, ServiceValidationError, match, service, target, **data)


# --- properties ---------------------------------------------------------------------------------

CALLS: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    st.tuples(
        st.just("set_temperature"), st.fixed_dictionaries({"temperature": st.floats(30, 80)})
    ),
    st.tuples(
        st.just("set_temperature"),
        st.fixed_dictionaries(
            {
                "temperature": st.floats(40, 60),
                "operation_mode": st.sampled_from(["eco", "electric", "heat_pump"]),
            }
        ),
    ),
    st.tuples(
        st.just("set_operation_mode"),
        st.fixed_dictionaries(
            {"operation_mode": st.sampled_from(["eco", "heat_pump", "off", "gas"])}
        ),
    ),
    st.tuples(st.just("set_away_mode"), st.fixed_dictionaries({"away_mode": st.booleans()})),
    st.tuples(st.sampled_from(["turn_on", "turn_off"]), st.just({})),
)


@settings(max_examples=60)
@given(entity_id=st.sampled_from([TANK, HYBRID]), calls=st.lists(CALLS, max_size=12))
def test_random_calls_keep_heaters_consistent(
    entity_id: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    home = build_home()
    for service, data in calls:
        before = home.state(entity_id)
        try:
            call(home, service, entity_id, **data)
        except TwinError:
            assert home.state(entity_id) is before
            continue
        state = home.state(entity_id)
        shown = state.attributes
        assert state.state == shown["operation_mode"]
        assert state.state in shown["operation_list"]
        assert shown["min_temp"] <= shown["temperature"] <= shown["max_temp"]
        assert shown["temperature"] == round(shown["temperature"], 1)
        assert shown["away_mode"] in ("on", "off")
        if service == "turn_on":
            assert state.state != "off"

"""humidifier: Home Assistant's humidifier services, range checks and actions on catalog devices."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains.humidifier import MODES, action
from twin.errors import (
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TwinError,
)
from twin.home import Home
from twin.registry import Area, EntityEntry

HUMIDIFIER = "humidifier.nursery_humidifier"
DEHUMIDIFIER = "humidifier.basement_dehumidifier"
PLAIN = "humidifier.plain"


@pytest.fixture
def home() -> Home:
    """The catalog's humidifier and dehumidifier, and a bare humidifier with Home Assistant's
    defaults (no modes, no action, no current humidity)."""
    home = Home()
    home.add_area(Area("nursery", "Nursery"))
    home.add_area(Area("basement", "Basement"))
    catalog = load_catalog()
    catalog["humidifier"].install(home, "hum", "Nursery humidifier", "nursery")
    catalog["dehumidifier"].install(home, "dehum", "Basement dehumidifier", "basement")
    home.add_entity(
        EntityEntry(
            PLAIN,
            "Plain",
            area_id="nursery",
            capabilities={"min_humidity": 0, "max_humidity": 100},
        ),
        "on",
        {"humidity": 45},
    )
    return home


def call(home: Home, service: str, entity_id: Any, **data: Any) -> None:
    home.call_service("humidifier", service, data, {"entity_id": entity_id})


def attr(home: Home, entity_id: str, name: str) -> Any:
    return home.state(entity_id).attributes[name]


def test_catalog_devices_show_home_assistants_attributes(home: Home) -> None:
    assert home.state(HUMIDIFIER).attributes == {
        "min_humidity": 30,
        "max_humidity": 80,
        "available_modes": ["auto", "sleep", "manual"],
        "action": "off",
        "current_humidity": 38,
        "humidity": 50,
        "mode": "auto",
        "device_class": "humidifier",
        "friendly_name": "Nursery humidifier",
        "supported_features": MODES,
    }
    dehumidifier = home.state(DEHUMIDIFIER).attributes
    assert dehumidifier["device_class"] == "dehumidifier"
    assert dehumidifier["target_humidity_step"] == 5
    assert home.state("sensor.basement_dehumidifier_humidity").attributes["device_class"] == (
        "humidity"
    )
    assert home.state("binary_sensor.basement_dehumidifier_tank_full").state == "off"
    assert home.state("sensor.nursery_humidifier_humidity").state == "38"


def test_turn_on_and_off_follow_with_the_action(home: Home) -> None:
    call(home, "turn_on", [HUMIDIFIER, DEHUMIDIFIER])
    assert home.state(HUMIDIFIER).state == "on"
    assert attr(home, HUMIDIFIER, "action") == "humidifying"
    assert attr(home, DEHUMIDIFIER, "action") == "drying"
    call(home, "turn_off", HUMIDIFIER)
    assert (home.state(HUMIDIFIER).state, attr(home, HUMIDIFIER, "action")) == ("off", "off")
    assert attr(home, HUMIDIFIER, "humidity") == 50


def test_toggle(home: Home) -> None:
    call(home, "toggle", [HUMIDIFIER, PLAIN])
    assert home.state(HUMIDIFIER).state == "on"
    assert home.state(PLAIN).state == "off"
    assert "action" not in home.state(PLAIN).attributes
    call(home, "toggle", HUMIDIFIER)
    assert attr(home, HUMIDIFIER, "action") == "off"


@pytest.mark.parametrize("service", ["turn_on", "turn_off", "toggle"])
def test_on_off_services_take_no_data(home: Home, service: str) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys"):
        call(home, service, HUMIDIFIER, humidity=50)


@pytest.mark.parametrize(("given", "stored"), [(60, 60), ("55", 55), (55.7, 55), (80, 80)])
def test_set_humidity_coerces_to_an_int(home: Home, given: Any, stored: int) -> None:
    call(home, "set_humidity", HUMIDIFIER, humidity=given)
    assert attr(home, HUMIDIFIER, "humidity") == stored
    assert home.state(HUMIDIFIER).state == "off"


@pytest.mark.parametrize("bad", [101, -1, "damp", None])
def test_set_humidity_rejects_what_the_schema_refuses(home: Home, bad: Any) -> None:
    with pytest.raises(InvalidServiceDataError, match="humidity"):
        call(home, "set_humidity", HUMIDIFIER, humidity=bad)


def test_set_humidity_needs_a_humidity(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="humidity"):
        call(home, "set_humidity", HUMIDIFIER)


@pytest.mark.parametrize("humidity", [29, 81, 0, 100])
def test_set_humidity_outside_the_devices_range_is_refused(home: Home, humidity: int) -> None:
    before = home.state(HUMIDIFIER)
    message = f"Provided humidity {humidity} is not valid. Accepted range is 30 to 80."
    with pytest.raises(ServiceValidationError, match=message):
        call(home, "set_humidity", HUMIDIFIER, humidity=humidity)
    assert home.state(HUMIDIFIER) is before


@pytest.mark.parametrize("humidity", [0, 100])
def test_set_humidity_defaults_to_the_whole_range(home: Home, humidity: int) -> None:
    call(home, "set_humidity", PLAIN, humidity=humidity)
    assert attr(home, PLAIN, "humidity") == humidity


def test_reaching_the_target_makes_the_device_idle(home: Home) -> None:
    call(home, "turn_on", [HUMIDIFIER, DEHUMIDIFIER])
    call(home, "set_humidity", HUMIDIFIER, humidity=38)
    assert attr(home, HUMIDIFIER, "action") == "idle"
    call(home, "set_humidity", DEHUMIDIFIER, humidity=64)
    assert attr(home, DEHUMIDIFIER, "action") == "idle"
    call(home, "set_humidity", DEHUMIDIFIER, humidity=60)
    assert attr(home, DEHUMIDIFIER, "action") == "drying"


def test_set_mode(home: Home) -> None:
    call(home, "set_mode", DEHUMIDIFIER, mode="continuous")
    assert attr(home, DEHUMIDIFIER, "mode") == "continuous"
    with pytest.raises(ServiceValidationError, match="valid modes are: auto, sleep, manual"):
        call(home, "set_mode", HUMIDIFIER, mode="turbo")
    assert attr(home, HUMIDIFIER, "mode") == "auto"
    with pytest.raises(InvalidServiceDataError, match="mode"):
        call(home, "set_mode", HUMIDIFIER)
    with pytest.raises(ServiceNotSupportedError, match=r"humidifier\.set_mode"):
        call(home, "set_mode", PLAIN, mode="auto")


def test_a_call_on_several_devices_changes_all_or_none(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceValidationError, match="35 to 85"):
        call(home, "set_humidity", [HUMIDIFIER, DEHUMIDIFIER], humidity=32)
    with pytest.raises(ServiceValidationError):
        call(home, "set_mode", [DEHUMIDIFIER, HUMIDIFIER], mode="smart")
    with pytest.raises(ServiceNotSupportedError):
        call(home, "set_mode", [HUMIDIFIER, PLAIN], mode="auto")
    assert home.states == before


def test_an_area_call_skips_devices_without_modes(home: Home) -> None:
    home.call_service("humidifier", "set_mode", {"mode": "sleep"}, {"area_id": "nursery"})
    assert attr(home, HUMIDIFIER, "mode") == "sleep"
    assert "mode" not in home.state(PLAIN).attributes


@given(
    on=st.booleans(),
    dehumidifier=st.booleans(),
    current=st.none() | st.floats(0, 100),
    target=st.none() | st.integers(0, 100),
)
def test_action_says_what_the_device_does(
    on: bool, dehumidifier: bool, current: float | None, target: int | None
) -> None:
    result = action("on" if on else "off", dehumidifier, current, target)
    working = "drying" if dehumidifier else "humidifying"
    if not on:
        assert result == "off"
    elif current is None or target is None:
        assert result == working
    elif current == target:
        assert result == "idle"
    else:
        too_wet = current > target
        assert result == (working if too_wet == dehumidifier else "idle")


@given(st.lists(st.tuples(st.sampled_from(["turn_on", "turn_off", "toggle"]), st.integers(20, 90))))
def test_any_calls_keep_the_action_consistent(calls: list[tuple[str, int]]) -> None:
    home = Home()
    load_catalog()["humidifier"].install(home, "hum", "Hum")
    for service, humidity in calls:
        call(home, service, "humidifier.hum")
        try:
            call(home, "set_humidity", "humidifier.hum", humidity=humidity)
        except TwinError:
            assert not 30 <= humidity <= 80
        state = home.state("humidifier.hum")
        target = state.attributes["humidity"]
        assert 30 <= target <= 80
        expected = "off" if state.state == "off" else "humidifying" if target > 38 else "idle"
        assert state.attributes["action"] == expected

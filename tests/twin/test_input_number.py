"""input_number: Home Assistant's input_number services, range checks and formatting."""

from __future__ import annotations

from typing import Any

import pytest

from twin.domains import input_number
from twin.errors import HomeDefinitionError, InvalidServiceDataError
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.manual import describe
from twin.registry import EntityEntry

from .helpers import NUMBER, add_helpers


@pytest.fixture
def home() -> Home:
    home = Home()
    add_helpers(home)
    return home


def call(home: Home, service: str, **data: Any) -> str:
    home.call_service("input_number", service, data, {"entity_id": NUMBER})
    return home.state(NUMBER).state


def test_services_are_home_assistants() -> None:
    assert set(input_number.DOMAIN.services) == {"set_value", "increment", "decrement"}


def test_set_value_coerces_and_formats_as_a_float(home: Home) -> None:
    assert call(home, "set_value", value=50) == "50.0"
    assert call(home, "set_value", value="32.5") == "32.5"
    assert home.state(NUMBER).attributes["min"] == 30.0


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (61, r"^Invalid value for input_number.target_humidity: 61.0 \(range 30.0 - 60.0\)$"),
        (-1, r"-1.0 \(range 30.0 - 60.0\)"),
        ("high", "expected float"),
        (float("nan"), "finite"),
        (None, "expected float"),
    ],
)
def test_set_value_refuses(home: Home, value: Any, message: str) -> None:
    with pytest.raises(InvalidServiceDataError, match=message):
        call(home, "set_value", value=value)
    assert home.state(NUMBER).state == "45.0"


def test_increment_and_decrement_are_clamped(home: Home) -> None:
    assert call(home, "increment") == "47.5"
    call(home, "set_value", value=59)
    assert call(home, "increment") == "60.0"
    assert call(home, "increment") == "60.0"
    call(home, "set_value", value=31)
    assert call(home, "decrement") == "30.0"
    assert call(home, "decrement") == "30.0"


def test_a_value_that_is_no_number_counts_as_min() -> None:
    home = Home()
    caps = {"min": 0.0, "max": 1.0, "step": 0.1, "mode": "box"}
    home.add_entity(EntityEntry("input_number.x", "X", capabilities=caps), "unknown")
    assert call_on(home, "input_number.x", "increment") == "0.1"
    assert call_on(home, "input_number.x", "increment") == str(0.1 + 0.1)  # float steps, as HA


def call_on(home: Home, entity_id: str, service: str) -> str:
    home.call_service("input_number", service, target={"entity_id": entity_id})
    return home.state(entity_id).state


def test_the_manual_gives_the_helpers_range(home: Home) -> None:
    manual = describe(home, NUMBER)
    value = manual["services"]["set_value"]["fields"]["value"]
    assert (value["min"], value["max"], value["step"]) == (30.0, 60.0, 2.5)


@pytest.mark.parametrize(
    ("capabilities", "message"),
    [
        ({"min": 5.0, "max": 5.0}, "max .5.0. is not greater than min"),
        ({"min": 0.0, "max": 5.0, "step": 0}, "step"),
        ({"min": 0.0, "max": 5.0, "mode": "dial"}, "mode"),
    ],
)
def test_a_snapshot_helper_must_be_one_home_assistant_can_hold(
    capabilities: dict[str, Any], message: str
) -> None:
    snapshot = {
        "entities": [{"entity_id": "input_number.x", "capabilities": capabilities}],
        "states": [{"entity_id": "input_number.x", "state": "1.0", "attributes": capabilities}],
    }
    with pytest.raises(HomeDefinitionError, match=message):
        import_ha_snapshot(snapshot)

"""number: set_value with Home Assistant's schema, range check and state form."""

from __future__ import annotations

import pytest

from twin.catalog import load_catalog
from twin.domains import number
from twin.errors import HomeDefinitionError, InvalidServiceDataError, ServiceValidationError
from twin.home import Home
from twin.homefile import dump_home, import_ha_snapshot, load_home
from twin.registry import Area, EntityEntry

HEIGHT = "number.mower_cutting_height"  # 1-9, step 1


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("garden", "Garden"))
    load_catalog()["robot_lawn_mower"].install(home, "mower", "Mower", "garden")
    return home


def set_value(home: Home, value: object, entity_id: str = HEIGHT) -> None:
    home.call_service("number", "set_value", {"value": value}, {"entity_id": entity_id})


def test_the_domain_is_home_assistants() -> None:
    assert set(number.DOMAIN.services) == {"set_value"}  # no increment/decrement in 2026.10
    assert number.DOMAIN.features == {}
    assert number.DOMAIN.device  # a device's setting, which the agent sets as Assist does


def test_a_cutting_height_shows_its_range_as_capabilities(home: Home) -> None:
    state = home.state(HEIGHT)
    assert state.state == "5.0"
    assert {key: state.attributes[key] for key in ("min", "max", "step", "mode")} == {
        "min": 1,
        "max": 9,
        "step": 1,
        "mode": "auto",
    }
    assert "supported_features" not in state.attributes  # NumberEntity has none
    assert home.entities[HEIGHT].entity_category == "config"


@pytest.mark.parametrize(("value", "shown"), [(3, "3.0"), ("7", "7.0"), (1, "1.0"), (8.5, "8.5")])
def test_set_value_writes_the_value_as_home_assistant_writes_a_float(
    home: Home, value: object, shown: str
) -> None:
    set_value(home, value)
    assert home.state(HEIGHT).state == shown


@pytest.mark.parametrize("value", [0, 9.01, 100, -1])
def test_a_value_out_of_range_is_refused_in_home_assistants_words(home: Home, value: float) -> None:
    before = home.state(HEIGHT)
    with pytest.raises(ServiceValidationError) as err:
        set_value(home, value)
    assert str(err.value) == (f"Value {float(value)} for {HEIGHT} is outside valid range 1 - 9.")
    assert home.state(HEIGHT) is before


@pytest.mark.parametrize(
    "data", [{}, {"value": "high"}, {"value": None}, {"value": "nan"}, {"value": 3, "step": 1}]
)
def test_bad_data_is_invalid(home: Home, data: dict[str, object]) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("number", "set_value", data, {"entity_id": HEIGHT})


def test_a_number_without_a_range_has_home_assistants_default(home: Home) -> None:
    home.add_entity(EntityEntry("number.level", "Level"), "50.0")
    set_value(home, 100, "number.level")
    assert home.state("number.level").state == "100.0"
    with pytest.raises(ServiceValidationError, match=r"outside valid range 0\.0 - 100\.0"):
        set_value(home, 101, "number.level")


@pytest.mark.parametrize(
    ("state", "capabilities", "match"),
    [
        ("high", {}, "state: expected a number"),
        ("5.0", {"min": 10, "max": 1}, "min .10. is above max .1."),
        ("5.0", {"mode": "dial"}, "mode: expected one of auto, box, slider"),
        ("5.0", {"step": -1}, "step"),
    ],
)
def test_a_home_file_with_an_impossible_number_is_refused(
    home: Home, state: str, capabilities: dict[str, object], match: str
) -> None:
    home.add_entity(EntityEntry("number.bad", "Bad", capabilities=capabilities), state)
    with pytest.raises(HomeDefinitionError, match=match):
        load_home(dump_home(home))


def test_a_home_file_keeps_numbers(home: Home) -> None:
    set_value(home, 2)
    assert load_home(dump_home(home)).states == home.states


@pytest.mark.parametrize(
    ("arguments", "shown"),
    [
        ({}, {"min": 0.0, "max": 100.0, "step": 1.0, "mode": "auto"}),
        ({"native_min_value": 0, "native_max_value": 1}, {"min": 0, "max": 1, "step": 0.1}),
        ({"native_min_value": 0, "native_max_value": 0.05}, {"step": 0.01}),
        ({"native_step": 5, "mode": "box"}, {"step": 5, "mode": "box"}),
    ],
)
def test_an_inventory_number_shows_the_range_and_step_home_assistant_does(
    arguments: dict[str, object], shown: dict[str, object]
) -> None:
    # NumberEntity shows min, max, step and mode however few of them the integration gives;
    # a step it is not given is 1, or a tenth of it as often as the range is not wider.
    inventory = {"entities": [{"id": "number.height", "attributes": arguments}]}
    home, _ = import_ha_snapshot(inventory)
    attributes = home.state("number.height").attributes
    assert {key: attributes[key] for key in shown} == shown


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"native_min_value": "abc"}, "capabilities.min"),
        ({"native_max_value": [1]}, "capabilities.max"),
        ({"native_max_value": float("nan")}, "capabilities.max"),
        ({"native_min_value": 10, "native_max_value": 1}, "min .10. is above max .1."),
    ],
)
def test_an_inventory_number_with_an_impossible_range_is_a_typed_error(
    arguments: dict[str, object], match: str
) -> None:
    inventory = {"entities": [{"id": "number.height", "attributes": arguments}]}
    with pytest.raises(HomeDefinitionError, match=match):
        import_ha_snapshot(inventory)


def test_an_inventory_numbers_range_given_as_none_is_home_assistants_default() -> None:
    arguments = {"native_min_value": None, "native_max_value": None}
    inventory = {"entities": [{"id": "number.height", "attributes": arguments}]}
    home, _ = import_ha_snapshot(inventory)
    attributes = home.state("number.height").attributes
    assert (attributes["min"], attributes["max"], attributes["step"]) == (0.0, 100.0, 1.0)

"""valve: Home Assistant's valve services, features, toggle rules and positions in the twin."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import valve
from twin.errors import InvalidServiceDataError, ServiceNotSupportedError
from twin.home import Home, ServiceResult
from twin.registry import Area, EntityEntry

MAIN = "valve.water_main"  # water main shut-off: open, close; no position; open
LAWN = "valve.lawn_valve"  # irrigation valve: open, close, set_position, stop; closed at 0
ALL_MOVES = valve.OPEN | valve.CLOSE | valve.SET_POSITION | valve.STOP


def make_home() -> Home:
    """A utility room with the water main and a garden with an irrigation valve."""
    home = Home()
    home.add_area(Area("utility", "Utility"))
    home.add_area(Area("garden", "Garden"))
    load_catalog()["water_main_shutoff"].install(home, "main", "Water Main", "utility")
    load_catalog()["irrigation_valve"].install(home, "lawn", "Lawn Valve", "garden")
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> ServiceResult:
    return home.call_service("valve", service, data, {"entity_id": entity_id})


def add_valve(home: Home, state: str, features: int, **attributes: Any) -> str:
    """A valve in any state, e.g. one a home starts with while it is still moving."""
    entity_id = f"valve.test_{len(home.entities)}"
    home.add_entity(EntityEntry(entity_id, "Test", supported_features=features), state, attributes)
    return entity_id


def shown(home: Home, entity_id: str) -> tuple[str, Any, Any]:
    """State, is_closed and current_position of a valve."""
    state = home.state(entity_id)
    return state.state, state.attributes.get("is_closed"), state.attributes.get("current_position")


def test_feature_flags_match_home_assistant() -> None:
    assert valve.DOMAIN.features == {"open": 1, "close": 2, "set_position": 4, "stop": 8}
    assert set(valve.DOMAIN.services) == {
        "open_valve",
        "close_valve",
        "set_valve_position",
        "stop_valve",
        "toggle",
    }


def test_catalog_valves(home: Home) -> None:
    main, lawn = home.state(MAIN).attributes, home.state(LAWN).attributes
    assert (main["device_class"], main["supported_features"]) == ("water", 3)
    assert (lawn["device_class"], lawn["supported_features"]) == ("water", 15)
    assert shown(home, MAIN) == ("open", False, None)
    assert shown(home, LAWN) == ("closed", True, 0)


def test_a_valve_without_position_opens_and_closes(home: Home) -> None:
    call(home, "close_valve", MAIN)
    assert shown(home, MAIN) == ("closed", True, None)
    assert home.state(MAIN).hidden["current_position"] == 0
    call(home, "open_valve", MAIN)
    assert shown(home, MAIN) == ("open", False, None)
    assert home.state(MAIN).hidden["current_position"] == 100


def test_a_valve_with_position_opens_and_closes_fully(home: Home) -> None:
    home.now += 5
    result = call(home, "open_valve", LAWN)
    assert shown(home, LAWN) == ("open", False, 100)
    assert result.changed == (home.state(LAWN),)
    assert home.state(LAWN).last_changed == home.now
    call(home, "close_valve", LAWN)
    assert shown(home, LAWN) == ("closed", True, 0)
    assert call(home, "close_valve", LAWN).changed == ()


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        (0, ("closed", True, 0)),
        (1, ("open", False, 1)),
        (50, ("open", False, 50)),
        (100, ("open", False, 100)),
        ("25", ("open", False, 25)),
        (99.9, ("open", False, 99)),
    ],
)
def test_set_valve_position(home: Home, position: Any, expected: tuple[Any, ...]) -> None:
    call(home, "open_valve", LAWN)
    call(home, "set_valve_position", LAWN, position=position)
    assert shown(home, LAWN) == expected


@pytest.mark.parametrize(
    "data",
    [
        {"position": -1},
        {"position": 101},
        {"position": "open"},
        {"position": None},
        {},
        {"position": 10, "speed": "fast"},
    ],
)
def test_invalid_positions_change_nothing(home: Home, data: dict[str, Any]) -> None:
    before = home.state(LAWN)
    with pytest.raises(InvalidServiceDataError, match=r"valve\.set_valve_position"):
        call(home, "set_valve_position", LAWN, **data)
    assert home.state(LAWN) is before


@pytest.mark.parametrize("service", ["open_valve", "close_valve", "stop_valve", "toggle"])
def test_services_without_data_refuse_data(home: Home, service: str) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys not allowed"):
        call(home, service, LAWN, position=50)


@pytest.mark.parametrize(
    ("service", "data", "features"),
    [
        ("open_valve", {}, valve.CLOSE | valve.SET_POSITION),
        ("close_valve", {}, valve.OPEN | valve.SET_POSITION),
        ("set_valve_position", {"position": 20}, valve.OPEN | valve.CLOSE),
        ("stop_valve", {}, valve.OPEN | valve.CLOSE),
        ("toggle", {}, valve.OPEN | valve.STOP),
        ("toggle", {}, valve.CLOSE),
    ],
)
def test_services_need_their_feature(
    home: Home, service: str, data: dict[str, Any], features: int
) -> None:
    limited = add_valve(home, "closed", features, is_closed=True)
    with pytest.raises(ServiceNotSupportedError, match=f"{limited} does not support"):
        call(home, service, limited, **data)
    assert shown(home, limited) == ("closed", True, None)


def test_stop_on_a_settled_valve_changes_nothing(home: Home) -> None:
    call(home, "set_valve_position", LAWN, position=30)
    before = home.state(LAWN)
    assert call(home, "stop_valve", LAWN).changed == ()
    assert home.state(LAWN) is before


@pytest.mark.parametrize(
    ("state", "position", "expected"),
    [
        ("opening", 30, ("open", False, 30)),
        ("closing", 30, ("open", False, 30)),
        ("closing", 0, ("closed", True, 0)),
    ],
)
def test_stop_settles_a_moving_valve_where_it_is(
    home: Home, state: str, position: int, expected: tuple[Any, ...]
) -> None:
    moving = add_valve(home, state, ALL_MOVES, is_closed=position == 0, current_position=position)
    call(home, "stop_valve", moving)
    assert shown(home, moving) == expected


def test_stop_leaves_a_moving_valve_without_position_part_way(home: Home) -> None:
    moving = add_valve(home, "opening", valve.OPEN | valve.CLOSE | valve.STOP, is_closed=True)
    call(home, "stop_valve", moving)
    assert shown(home, moving) == ("open", False, None)
    assert home.state(moving).hidden["current_position"] == valve.PART_WAY


@pytest.mark.parametrize(
    ("entity_id", "before", "after"),
    [
        (MAIN, ("open", False, None), ("closed", True, None)),
        (LAWN, ("closed", True, 0), ("open", False, 100)),
    ],
)
def test_toggle_a_settled_valve(
    home: Home, entity_id: str, before: tuple[Any, ...], after: tuple[Any, ...]
) -> None:
    assert shown(home, entity_id) == before
    call(home, "toggle", entity_id)
    assert shown(home, entity_id) == after
    call(home, "toggle", entity_id)
    assert shown(home, entity_id) == before


def test_toggle_a_part_open_valve_closes_it_unless_it_last_moved_closed(home: Home) -> None:
    call(home, "set_valve_position", LAWN, position=40)
    call(home, "toggle", LAWN)
    assert shown(home, LAWN) == ("closed", True, 0)

    moving = add_valve(home, "closing", ALL_MOVES, is_closed=False, current_position=70)
    call(home, "set_valve_position", moving, position=40)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 100)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 100)  # Home Assistant keeps opening it


def test_toggle_stops_a_moving_valve_that_can_stop(home: Home) -> None:
    moving = add_valve(home, "closing", ALL_MOVES, is_closed=False, current_position=70)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 70)


@pytest.mark.parametrize(
    ("state", "after"),
    [("opening", ("closed", True, 0)), ("closing", ("open", False, 100))],
)
def test_toggle_reverses_a_moving_valve_that_cannot_stop(
    home: Home, state: str, after: tuple[Any, ...]
) -> None:
    features = valve.OPEN | valve.CLOSE | valve.SET_POSITION
    moving = add_valve(home, state, features, is_closed=False, current_position=40)
    call(home, "toggle", moving)
    assert shown(home, moving) == after


def test_a_valve_opening_from_closed_is_not_closed(home: Home) -> None:
    # is_closed is the state being closed, as in HA's demo valve, so toggle turns it back.
    features = valve.OPEN | valve.CLOSE | valve.SET_POSITION
    moving = add_valve(home, "opening", features, is_closed=True, current_position=0)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("closed", True, 0)


def test_homeassistant_toggle_toggles_valves(home: Home) -> None:
    home.call_service("homeassistant", "toggle", target={"area_id": ["utility", "garden"]})
    assert shown(home, MAIN) == ("closed", True, None)
    assert shown(home, LAWN) == ("open", False, 100)


def test_an_area_target_skips_valves_without_the_feature(home: Home) -> None:
    target = {"area_id": ["utility", "garden"]}
    result = home.call_service("valve", "set_valve_position", {"position": 60}, target)
    assert result.entity_ids == (LAWN,)
    assert shown(home, MAIN) == ("open", False, None)


def test_an_unsupported_target_changes_no_target(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceNotSupportedError, match=MAIN):
        call(home, "set_valve_position", [LAWN, MAIN], position=60)
    assert home.states == before
    call(home, "close_valve", [LAWN, MAIN])
    assert shown(home, LAWN) == ("closed", True, 0)
    assert shown(home, MAIN) == ("closed", True, None)


@given(position=st.integers(0, 100), start=st.integers(0, 100))
def test_any_position_in_range_is_where_the_valve_ends(position: int, start: int) -> None:
    home = make_home()
    call(home, "set_valve_position", LAWN, position=start)
    call(home, "set_valve_position", LAWN, position=float(position))
    closed = position == 0
    assert shown(home, LAWN) == ("closed" if closed else "open", closed, position)


@given(position=st.one_of(st.integers(max_value=-1), st.integers(min_value=101)))
def test_any_position_out_of_range_changes_nothing(position: int) -> None:
    home = make_home()
    before = dict(home.states)
    with pytest.raises(InvalidServiceDataError, match="value must be at"):
        call(home, "set_valve_position", LAWN, position=position)
    assert home.states == before


def test_a_valve_without_a_position_opening_from_closed_toggles_open(home: Home) -> None:
    """ValveEntity.async_toggle reads is_closed, which a valve without a position shows: one
    opening that still says closed (and cannot stop) is opened, as Home Assistant does."""
    moving = add_valve(home, "opening", valve.OPEN | valve.CLOSE, is_closed=True)
    call(home, "toggle", moving)
    assert home.state(moving).state == "open"
    assert home.state(moving).attributes["is_closed"] is False

"""cover: Home Assistant's cover services, features, toggle rules and positions in the twin."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import cover
from twin.errors import InvalidServiceDataError, ServiceNotSupportedError, ServiceValidationError
from twin.home import Home, ServiceResult
from twin.registry import Area, EntityEntry

BLIND = "cover.living_blind"  # roller blind: open, close, stop, set_position; closed at 0
VENETIAN = "cover.study_blind"  # venetian blind: position and tilt; open at 100, tilt 50
GARAGE = "cover.garage_door"  # garage door: open, close, stop; no position; closed
WINDOW = "cover.roof_window"  # roof window: position and speeds silent/fast/default; closed at 0
COVER_TYPES = sorted(t for t, d in load_catalog().items() if d.category == "cover")


def make_home() -> Home:
    """A living room with a roller blind and a roof window, a study, and a garage."""
    home = Home()
    for area in ("living", "study", "garage"):
        home.add_area(Area(area, area.title()))
    catalog = load_catalog()
    catalog["roller_blind"].install(home, "blind", "Living Blind", "living")
    catalog["motorised_window"].install(home, "window", "Roof Window", "living")
    catalog["venetian_blind"].install(home, "venetian", "Study Blind", "study")
    catalog["garage_door_opener"].install(home, "garage", "Garage Door", "garage")
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> ServiceResult:
    return home.call_service("cover", service, data, {"entity_id": entity_id})


def add_cover(home: Home, state: str, features: int, **attributes: Any) -> str:
    """A cover in any state, e.g. one a home starts with while it is still moving."""
    entity_id = f"cover.test_{len(home.entities)}"
    home.add_entity(EntityEntry(entity_id, "Test", supported_features=features), state, attributes)
    return entity_id


def shown(home: Home, entity_id: str) -> tuple[str, Any, Any, Any]:
    """State, is_closed, current_position and current_tilt_position of a cover."""
    attributes = home.state(entity_id).attributes
    return (
        home.state(entity_id).state,
        attributes.get("is_closed"),
        attributes.get("current_position"),
        attributes.get("current_tilt_position"),
    )


ALL_MOVES = cover.OPEN | cover.CLOSE | cover.STOP | cover.SET_POSITION


@pytest.mark.parametrize("type_id", COVER_TYPES)
def test_catalog_covers_start_consistent(type_id: str) -> None:
    home = Home()
    load_catalog()[type_id].install(home, "d", "Thing")
    state = home.state("cover.thing")
    attributes = state.attributes
    assert state.state == ("closed" if attributes["is_closed"] else "open")
    assert attributes.get("current_position", 0 if attributes["is_closed"] else 100) in range(101)
    positioned = bool(attributes["supported_features"] & cover.SET_POSITION)
    assert ("current_position" in attributes) == positioned
    assert attributes["device_class"] in {"blind", "curtain", "shade", "garage", "window"}


def test_feature_flags_match_home_assistant() -> None:
    assert cover.DOMAIN.features == {
        "open": 1,
        "close": 2,
        "set_position": 4,
        "stop": 8,
        "open_tilt": 16,
        "close_tilt": 32,
        "stop_tilt": 64,
        "set_tilt_position": 128,
        "speed": 256,
    }
    assert sorted(cover.DOMAIN.services) == sorted(
        [
            "open_cover",
            "close_cover",
            "stop_cover",
            "toggle",
            "set_cover_position",
            "open_cover_tilt",
            "close_cover_tilt",
            "stop_cover_tilt",
            "set_cover_tilt_position",
            "toggle_cover_tilt",
        ]
    )


def test_open_and_close_a_positioned_cover(home: Home) -> None:
    home.now += 60
    result = call(home, "open_cover", BLIND)
    assert shown(home, BLIND) == ("open", False, 100, None)
    assert result.changed == (home.state(BLIND),)
    assert home.state(BLIND).last_changed == home.now
    call(home, "close_cover", BLIND)
    assert shown(home, BLIND) == ("closed", True, 0, None)


def test_moving_to_where_the_cover_is_changes_nothing(home: Home) -> None:
    before = home.state(BLIND)
    assert call(home, "close_cover", BLIND).changed == ()
    assert call(home, "set_cover_position", BLIND, position=0).changed == ()
    assert home.state(BLIND) is before


def test_a_garage_door_shows_no_position_but_keeps_it_hidden(home: Home) -> None:
    call(home, "open_cover", GARAGE)
    state = home.state(GARAGE)
    assert shown(home, GARAGE) == ("open", False, None, None)
    assert "current_position" not in state.attributes
    assert state.hidden["current_position"] == 100
    call(home, "close_cover", GARAGE)
    assert shown(home, GARAGE) == ("closed", True, None, None)
    assert home.state(GARAGE).hidden["current_position"] == 0


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        (0, ("closed", True, 0, None)),
        (1, ("open", False, 1, None)),
        (50, ("open", False, 50, None)),
        (99, ("open", False, 99, None)),
        (100, ("open", False, 100, None)),
        ("75", ("open", False, 75, None)),  # vol.Coerce(int), as Home Assistant
        (12.7, ("open", False, 12, None)),  # int() truncates
        (0.9, ("closed", True, 0, None)),
        (True, ("open", False, 1, None)),
    ],
)
def test_set_cover_position(home: Home, position: Any, expected: tuple[Any, ...]) -> None:
    call(home, "open_cover", BLIND)
    call(home, "set_cover_position", BLIND, position=position)
    assert shown(home, BLIND) == expected


@pytest.mark.parametrize(
    "data",
    [
        {"position": -1},
        {"position": 101},
        {"position": "abc"},
        {"position": "50.5"},
        {"position": None},
        {"position": [50]},
        {},
        {"position": 50, "brightness": 10},
    ],
)
def test_invalid_positions_change_nothing(home: Home, data: dict[str, Any]) -> None:
    before = home.state(BLIND)
    with pytest.raises(InvalidServiceDataError, match=r"cover\.set_cover_position"):
        call(home, "set_cover_position", BLIND, **data)
    assert home.state(BLIND) is before


@pytest.mark.parametrize(
    "data",
    [
        {"tilt_position": -1},
        {"tilt_position": 101},
        {"tilt_position": "half"},
        {},
        {"tilt_position": 50, "position": 50},
    ],
)
def test_invalid_tilt_positions_change_nothing(home: Home, data: dict[str, Any]) -> None:
    before = home.state(VENETIAN)
    with pytest.raises(InvalidServiceDataError, match=r"cover\.set_cover_tilt_position"):
        call(home, "set_cover_tilt_position", VENETIAN, **data)
    assert home.state(VENETIAN) is before


@pytest.mark.parametrize("service", ["stop_cover", "toggle", "open_cover_tilt", "stop_cover_tilt"])
def test_services_without_data_refuse_data(home: Home, service: str) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys not allowed"):
        call(home, service, VENETIAN, speed="fast")


def test_tilt_services(home: Home) -> None:
    call(home, "close_cover_tilt", VENETIAN)
    assert shown(home, VENETIAN) == ("open", False, 100, 0)
    call(home, "set_cover_tilt_position", VENETIAN, tilt_position="30")
    assert shown(home, VENETIAN) == ("open", False, 100, 30)
    call(home, "open_cover_tilt", VENETIAN)
    assert shown(home, VENETIAN) == ("open", False, 100, 100)
    assert call(home, "stop_cover_tilt", VENETIAN).changed == ()
    call(home, "close_cover", VENETIAN)
    assert shown(home, VENETIAN) == ("closed", True, 0, 100)  # tilt is independent


@pytest.mark.parametrize(("tilt", "after"), [(0, 100), (1, 0), (50, 0), (100, 0)])
def test_toggle_cover_tilt_opens_only_closed_slats(home: Home, tilt: int, after: int) -> None:
    call(home, "set_cover_tilt_position", VENETIAN, tilt_position=tilt)
    call(home, "toggle_cover_tilt", VENETIAN)
    assert home.state(VENETIAN).attributes["current_tilt_position"] == after


def test_stop_on_a_settled_cover_changes_nothing(home: Home) -> None:
    call(home, "set_cover_position", BLIND, position=40)
    before = home.state(BLIND)
    assert call(home, "stop_cover", [BLIND, GARAGE]).changed == ()
    assert home.state(BLIND) is before


@pytest.mark.parametrize(
    ("state", "position", "expected"),
    [
        ("opening", 40, ("open", False, 40, None)),
        ("closing", 40, ("open", False, 40, None)),
        ("closing", 0, ("closed", True, 0, None)),
        ("opening", 100, ("open", False, 100, None)),
    ],
)
def test_stop_settles_a_moving_cover_where_it_is(
    home: Home, state: str, position: int, expected: tuple[Any, ...]
) -> None:
    moving = add_cover(home, state, ALL_MOVES, is_closed=False, current_position=position)
    call(home, "stop_cover", moving)
    assert shown(home, moving) == expected


def test_stop_leaves_a_moving_garage_door_part_way(home: Home) -> None:
    moving = add_cover(home, "closing", cover.OPEN | cover.CLOSE | cover.STOP, is_closed=False)
    call(home, "stop_cover", moving)
    assert shown(home, moving) == ("open", False, None, None)
    assert home.state(moving).hidden["current_position"] == cover.PART_WAY


@pytest.mark.parametrize(
    ("position", "after"),
    [(0, ("open", False, 100, None)), (100, ("closed", True, 0, None))],
)
def test_toggle_a_settled_cover(home: Home, position: int, after: tuple[Any, ...]) -> None:
    call(home, "set_cover_position", BLIND, position=position)
    call(home, "toggle", BLIND)
    assert shown(home, BLIND) == after


def test_toggle_a_part_open_cover_closes_it_unless_it_last_moved_closed(home: Home) -> None:
    call(home, "set_cover_position", BLIND, position=40)
    call(home, "toggle", BLIND)
    assert shown(home, BLIND) == ("closed", True, 0, None)

    # Home Assistant saw this one closing, so it toggles the other way once it has stopped.
    moving = add_cover(home, "closing", ALL_MOVES, is_closed=False, current_position=60)
    call(home, "set_cover_position", moving, position=30)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 100, None)
    call(home, "set_cover_position", moving, position=30)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 100, None)
    assert home.state(moving).hidden["last_move_open"] is False


def test_toggle_a_garage_door(home: Home) -> None:
    call(home, "toggle", GARAGE)
    assert shown(home, GARAGE) == ("open", False, None, None)
    call(home, "toggle", GARAGE)
    assert shown(home, GARAGE) == ("closed", True, None, None)


def test_toggle_stops_a_moving_cover_that_can_stop(home: Home) -> None:
    moving = add_cover(home, "opening", ALL_MOVES, is_closed=False, current_position=30)
    call(home, "toggle", moving)
    assert shown(home, moving) == ("open", False, 30, None)


@pytest.mark.parametrize(
    ("state", "after"),
    [("closing", ("open", False, 100, None)), ("opening", ("closed", True, 0, None))],
)
def test_toggle_reverses_a_moving_cover_that_cannot_stop(
    home: Home, state: str, after: tuple[Any, ...]
) -> None:
    features = cover.OPEN | cover.CLOSE | cover.SET_POSITION
    moving = add_cover(home, state, features, is_closed=False, current_position=30)
    call(home, "toggle", moving)
    assert shown(home, moving) == after


def test_homeassistant_toggle_toggles_covers(home: Home) -> None:
    home.call_service("homeassistant", "toggle", target={"entity_id": [BLIND, GARAGE]})
    assert shown(home, BLIND)[0] == shown(home, GARAGE)[0] == "open"


@pytest.mark.parametrize(
    ("service", "data", "entity_id"),
    [
        ("set_cover_position", {"position": 50}, GARAGE),
        ("open_cover_tilt", {}, BLIND),
        ("close_cover_tilt", {}, BLIND),
        ("stop_cover_tilt", {}, GARAGE),
        ("set_cover_tilt_position", {"tilt_position": 50}, WINDOW),
        ("toggle_cover_tilt", {}, GARAGE),
    ],
)
def test_services_need_their_feature(
    home: Home, service: str, data: dict[str, Any], entity_id: str
) -> None:
    before = home.state(entity_id)
    with pytest.raises(ServiceNotSupportedError, match=f"{entity_id} does not support"):
        call(home, service, entity_id, **data)
    assert home.state(entity_id) is before


@pytest.mark.parametrize(
    ("service", "features"),
    [
        ("open_cover", cover.CLOSE | cover.STOP),
        ("close_cover", cover.OPEN | cover.STOP),
        ("stop_cover", cover.OPEN | cover.CLOSE),
        ("toggle", cover.OPEN),  # toggle needs both open and close
        ("toggle", cover.CLOSE),
        ("toggle_cover_tilt", cover.OPEN_TILT | cover.SET_TILT_POSITION),
    ],
)
def test_basic_services_need_their_feature(home: Home, service: str, features: int) -> None:
    limited = add_cover(home, "closed", features, is_closed=True)
    with pytest.raises(ServiceNotSupportedError):
        call(home, service, limited)
    assert shown(home, limited) == ("closed", True, None, None)


def test_an_area_target_skips_covers_without_the_feature(home: Home) -> None:
    result = home.call_service(
        "cover", "set_cover_position", {"position": 30}, {"area_id": "living"}
    )
    assert set(result.entity_ids) == {BLIND, WINDOW}
    tilt = home.call_service("cover", "close_cover_tilt", target={"area_id": ["living", "study"]})
    assert tilt.entity_ids == (VENETIAN,)
    assert shown(home, VENETIAN) == ("open", False, 100, 0)


def test_speed_is_checked_against_the_cover_speeds(home: Home) -> None:
    call(home, "open_cover", WINDOW, speed="silent")
    call(home, "set_cover_position", WINDOW, position=20, speed="fast")
    assert shown(home, WINDOW) == ("open", False, 20, None)
    message = re.escape("Speed warp is not valid. Valid speeds are: silent, fast, default.")
    with pytest.raises(ServiceValidationError, match=message):
        call(home, "close_cover", WINDOW, speed="warp")
    with pytest.raises(ServiceValidationError, match="Speed 5 is not valid"):
        call(home, "set_cover_position", WINDOW, position=0, speed=5)
    assert shown(home, WINDOW) == ("open", False, 20, None)


def test_speed_is_ignored_by_covers_without_speeds(home: Home) -> None:
    call(home, "open_cover", BLIND, speed="warp")
    assert shown(home, BLIND) == ("open", False, 100, None)
    with pytest.raises(InvalidServiceDataError, match="speed"):
        call(home, "open_cover", BLIND, speed=None)


def test_a_refused_speed_changes_no_target(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceValidationError):
        call(home, "open_cover", [BLIND, GARAGE, WINDOW], speed="warp")
    assert home.states == before


def test_an_unsupported_target_changes_no_target(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceNotSupportedError, match=GARAGE):
        call(home, "set_cover_position", [BLIND, WINDOW, GARAGE], position=50)
    assert home.states == before
    call(home, "set_cover_position", [BLIND, WINDOW], position=50)
    assert shown(home, BLIND) == shown(home, WINDOW) == ("open", False, 50, None)


@given(position=st.integers(0, 100), start=st.integers(0, 100))
def test_any_position_in_range_is_where_the_cover_ends(position: int, start: int) -> None:
    home = make_home()
    call(home, "set_cover_position", VENETIAN, position=start)
    call(home, "set_cover_position", VENETIAN, position=position)
    call(home, "set_cover_tilt_position", VENETIAN, tilt_position=str(position))
    closed = position == 0
    assert shown(home, VENETIAN) == ("closed" if closed else "open", closed, position, position)


@given(position=st.one_of(st.integers(max_value=-1), st.integers(min_value=101)))
def test_any_position_out_of_range_changes_nothing(position: int) -> None:
    home = make_home()
    before = dict(home.states)
    with pytest.raises(InvalidServiceDataError, match="value must be at"):
        call(home, "set_cover_position", BLIND, position=position)
    with pytest.raises(InvalidServiceDataError, match="value must be at"):
        call(home, "set_cover_tilt_position", VENETIAN, tilt_position=position)
    assert home.states == before


@given(position=st.integers(0, 100))
def test_toggling_twice_from_a_settled_end_returns_there(position: int) -> None:
    home = make_home()
    call(home, "set_cover_position", BLIND, position=position)
    first = shown(home, BLIND)
    call(home, "toggle", BLIND)
    call(home, "toggle", BLIND)
    assert shown(home, BLIND) == (first if position in (0, 100) else ("open", False, 100, None))

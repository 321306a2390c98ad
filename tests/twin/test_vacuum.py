"""vacuum: HA's StateVacuumEntity services, features and activities."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains.vacuum import DOMAIN
from twin.errors import (
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
)
from twin.home import Home, ServiceResult
from twin.registry import Area, EntityEntry

ROBOT = "vacuum.downstairs_robot"
BASIC = "vacuum.upstairs_robot"
ACTIVITIES = ("cleaning", "docked", "idle", "paused", "returning", "error")
# What each service does from each activity; a missing activity means no change.
TRANSITIONS: dict[str, dict[str, str]] = {
    "start": dict.fromkeys(ACTIVITIES, "cleaning"),
    "clean_spot": dict.fromkeys(ACTIVITIES, "cleaning"),
    "pause": {"cleaning": "paused"},
    "stop": {"cleaning": "idle", "paused": "idle", "returning": "idle"},
    "return_to_base": {a: "returning" for a in ACTIVITIES if a != "docked"},
    "locate": {},
}


def make_home() -> Home:
    """A full-featured robot downstairs and a basic one upstairs."""
    home = Home()
    home.add_area(Area("downstairs", "Downstairs"))
    home.add_area(Area("upstairs", "Upstairs"))
    catalog = load_catalog()
    catalog["robot_vacuum"].install(home, "robot", "Downstairs robot", "downstairs")
    catalog["robot_vacuum_basic"].install(home, "basic", "Upstairs robot", "upstairs")
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> ServiceResult:
    return home.call_service("vacuum", service, data, {"entity_id": entity_id})


def activity(home: Home, entity_id: str = ROBOT) -> str:
    return home.state(entity_id).state


def put(home: Home, state: str, entity_id: str = ROBOT) -> None:
    """Bring a robot into `state` with the services a user would call."""
    steps = {
        "docked": [],
        "cleaning": ["start"],
        "paused": ["start", "pause"],
        "idle": ["start", "stop"],
        "returning": ["start", "return_to_base"],
    }[state]
    for step in steps:
        call(home, step, entity_id)
    assert activity(home, entity_id) == state


def test_catalog_robots_show_fan_speed_only_with_the_feature(home: Home) -> None:
    robot = home.state(ROBOT).attributes
    assert robot["fan_speed"] in robot["fan_speed_list"]
    assert robot["supported_features"] & 32
    assert "fan_speed" not in home.state(BASIC).attributes
    assert "fan_speed_list" not in home.state(BASIC).attributes
    assert home.state("sensor.downstairs_robot_battery").attributes["unit_of_measurement"] == "%"


def test_features_are_home_assistants_values() -> None:
    names = ["pause", "stop", "return_home", "fan_speed", "send_command", "locate"]
    assert DOMAIN.feature_flags(names) == 4 | 8 | 16 | 32 | 256 | 512
    assert (
        DOMAIN.feature_flags(["clean_spot", "map", "state", "start"]) == 1024 | 2048 | 4096 | 8192
    )


@pytest.mark.parametrize("service", sorted(TRANSITIONS))
@pytest.mark.parametrize("before", ["docked", "cleaning", "paused", "idle", "returning"])
def test_activities_follow_the_robot(home: Home, service: str, before: str) -> None:
    put(home, before)
    call(home, service, ROBOT)
    assert activity(home) == TRANSITIONS[service].get(before, before)


@pytest.mark.parametrize("service", sorted(TRANSITIONS))
def test_from_error(service: str) -> None:
    home = Home()
    home.add_entity(EntityEntry("vacuum.robot", "Robot", supported_features=0x3FFF), "error")
    call(home, service, "vacuum.robot")
    assert activity(home, "vacuum.robot") == TRANSITIONS[service].get("error", "error")


@given(st.lists(st.sampled_from(sorted(TRANSITIONS)), max_size=25))
def test_any_sequence_follows_the_transitions(services: list[str]) -> None:
    home = make_home()
    expected = "docked"
    for service in services:
        call(home, service, ROBOT)
        expected = TRANSITIONS[service].get(expected, expected)
        assert activity(home) == expected


def test_set_fan_speed(home: Home) -> None:
    call(home, "set_fan_speed", ROBOT, fan_speed="turbo")
    assert home.state(ROBOT).attributes["fan_speed"] == "turbo"
    assert activity(home) == "docked"


def test_set_fan_speed_rejects_an_unknown_speed(home: Home) -> None:
    before = home.state(ROBOT)
    with pytest.raises(ServiceValidationError, match=r"no fan speed 'Turbo'.*quiet, balanced"):
        call(home, "set_fan_speed", ROBOT, fan_speed="Turbo")
    with pytest.raises(InvalidServiceDataError, match="fan_speed"):
        call(home, "set_fan_speed", ROBOT)
    assert home.state(ROBOT) is before


@pytest.mark.parametrize("params", [None, {"x": 1}, [1, 2], "spot", 3])
def test_send_command_is_accepted_and_shows_nothing(home: Home, params: Any) -> None:
    data = {"command": "app_zoned_clean"} if params is None else {"command": 1, "params": params}
    assert call(home, "send_command", ROBOT, **data).changed == ()


@pytest.mark.parametrize(
    "data", [{}, {"params": {}}, {"command": None}, {"command": "go", "speed": 1}]
)
def test_send_command_rejects_bad_data(home: Home, data: dict[str, Any]) -> None:
    with pytest.raises(InvalidServiceDataError, match=r"vacuum\.send_command"):
        call(home, "send_command", ROBOT, **data)


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("start", {}),
        ("pause", {}),
        ("stop", {}),
        ("return_to_base", {}),
        ("clean_spot", {}),
        ("locate", {}),
        ("set_fan_speed", {"fan_speed": "max"}),
        ("send_command", {"command": "beep"}),
    ],
)
def test_every_service_needs_its_feature(service: str, data: dict[str, Any]) -> None:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    home.add_entity(EntityEntry("vacuum.bare", "Bare", area_id="hall"), "docked")
    with pytest.raises(ServiceNotSupportedError, match=rf"vacuum\.{service}"):
        call(home, service, "vacuum.bare", **data)
    home.call_service("vacuum", service, data, {"area_id": "hall"})
    assert activity(home, "vacuum.bare") == "docked"


def test_basic_robot_lacks_fan_speed_and_spot_cleaning(home: Home) -> None:
    with pytest.raises(ServiceNotSupportedError):
        call(home, "set_fan_speed", BASIC, fan_speed="max")
    with pytest.raises(ServiceNotSupportedError):
        call(home, "clean_spot", BASIC)
    call(home, "start", BASIC)
    assert activity(home, BASIC) == "cleaning"


def test_area_targets_skip_robots_without_the_feature(home: Home) -> None:
    call(home, "start", [ROBOT, BASIC])
    result = home.call_service(
        "vacuum", "clean_spot", target={"area_id": ["downstairs", "upstairs"]}
    )
    assert result.entity_ids == (ROBOT,)


def test_vacuums_have_no_turn_on(home: Home) -> None:
    with pytest.raises(ServiceNotFoundError, match=r"vacuum\.turn_on"):
        call(home, "turn_on", ROBOT)
    result = home.call_service("homeassistant", "turn_on", target={"entity_id": ROBOT})
    assert result.entity_ids == ()
    assert activity(home) == "docked"


def test_several_robots_change_together_or_not_at_all(home: Home) -> None:
    home.add_entity(
        EntityEntry(
            "vacuum.mini",
            "Mini",
            area_id="upstairs",
            supported_features=32 | 8192,
            capabilities={"fan_speed_list": ["low", "high"]},
        ),
        "docked",
        {"fan_speed": "low"},
    )
    before = dict(home.states)
    with pytest.raises(ServiceValidationError, match=r"vacuum\.mini"):
        call(home, "set_fan_speed", [ROBOT, "vacuum.mini"], fan_speed="max")
    assert home.states == before
    call(home, "start", [ROBOT, BASIC, "vacuum.mini"])
    assert {activity(home, e) for e in (ROBOT, BASIC, "vacuum.mini")} == {"cleaning"}

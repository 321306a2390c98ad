"""lawn_mower: Home Assistant's LawnMowerEntity services, features and activities."""

from __future__ import annotations

import pytest

from twin.catalog import load_catalog
from twin.domains import lawn_mower
from twin.errors import InvalidServiceDataError, ServiceNotSupportedError
from twin.home import Home
from twin.registry import Area, EntityEntry

MOWER = "lawn_mower.mower"  # start_mowing, pause, dock
FULL = "lawn_mower.full"  # every feature
ACTIVITIES = ("mowing", "docked", "paused", "returning", "idle", "error")
# What each service does from each activity; a missing activity means no change.
TRANSITIONS = {
    "start_mowing": dict.fromkeys(ACTIVITIES, "mowing"),
    "pause": {"mowing": "paused"},
    "dock": {a: "returning" for a in ACTIVITIES if a != "docked"},
    "stop": {"mowing": "idle", "paused": "idle", "returning": "idle"},
}


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("garden", "Garden"))
    load_catalog()["robot_lawn_mower"].install(home, "mower", "Mower", "garden")
    home.add_entity(EntityEntry("lawn_mower.full", "Full", supported_features=15), "docked")
    return home


def test_features_are_home_assistants() -> None:
    assert lawn_mower.DOMAIN.features == {"start_mowing": 1, "pause": 2, "dock": 4, "stop": 8}
    assert set(lawn_mower.DOMAIN.services) == set(TRANSITIONS)


@pytest.mark.parametrize("service", TRANSITIONS)
@pytest.mark.parametrize("activity", ACTIVITIES)
def test_each_service_from_each_activity(home: Home, service: str, activity: str) -> None:
    home.add_entity(EntityEntry("lawn_mower.x", "X", supported_features=15), activity)
    home.call_service("lawn_mower", service, {}, {"entity_id": "lawn_mower.x"})
    assert home.state("lawn_mower.x").state == TRANSITIONS[service].get(activity, activity)


def test_a_catalog_mower_mows_pauses_and_docks(home: Home) -> None:
    for service, activity in (
        ("start_mowing", "mowing"),
        ("pause", "paused"),
        ("dock", "returning"),
    ):
        home.call_service("lawn_mower", service, {}, {"entity_id": MOWER})
        assert home.state(MOWER).state == activity
    with pytest.raises(ServiceNotSupportedError):
        home.call_service("lawn_mower", "stop", {}, {"entity_id": MOWER})


def test_a_returning_mower_reaches_its_dock_on_the_clock(home: Home) -> None:
    home.call_service("lawn_mower", "start_mowing", {}, {"entity_id": MOWER})
    home.call_service("lawn_mower", "dock", {}, {"entity_id": MOWER})
    home.advance(600)
    assert home.state(MOWER).state == "docked"


def test_services_take_no_data(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("lawn_mower", "start_mowing", {"zone": 1}, {"entity_id": FULL})

"""scene: activating a scene is the time of its last activation; the twin does not know what a
scene sets, so nothing else changes."""

from __future__ import annotations

from typing import Any

import pytest

from twin.domains import DEVICE_DOMAINS, scene
from twin.errors import InvalidServiceDataError
from twin.home import Home
from twin.registry import Area, EntityEntry

MOVIE = "scene.movie_night"


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("living_room", "Living Room"))
    home.add_entity(EntityEntry(MOVIE, "Movie night", area_id="living_room"), "unknown")
    home.add_entity(EntityEntry("switch.lamp", "Lamp", area_id="living_room"), "off")
    return home


def test_the_domain_matches_home_assistant() -> None:
    assert set(scene.DOMAIN.services) == {"turn_on"}
    assert "scene" in DEVICE_DOMAINS


@pytest.mark.parametrize(
    "data", [{}, {"transition": 2}, {"transition": "1.5"}, {"transition": 9999}]
)
def test_turn_on_writes_the_activation_time_only(home: Home, data: dict[str, Any]) -> None:
    home.advance(61, step=61)
    result = home.call_service("scene", "turn_on", data, {"entity_id": MOVIE})
    assert [state.entity_id for state in result.changed] == [MOVIE]
    assert home.state(MOVIE).state == "2026-01-01T00:01:01+00:00"
    assert home.state("switch.lamp").state == "off"


def test_an_area_turn_on_reaches_its_scenes(home: Home) -> None:
    home.call_service("homeassistant", "turn_on", target={"area_id": "living_room"})
    assert home.state(MOVIE).state == "2026-01-01T00:00:00+00:00"
    assert home.state("switch.lamp").state == "on"


@pytest.mark.parametrize("data", [{"transition": "slow"}, {"transition": None}, {"brightness": 5}])
def test_bad_data_changes_nothing(home: Home, data: dict[str, Any]) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("scene", "turn_on", data, {"entity_id": MOVIE})
    assert home.state(MOVIE).state == "unknown"

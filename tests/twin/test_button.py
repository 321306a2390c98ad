"""button: a press is the time of the last press, on the home's clock, as ButtonEntity's state."""

from __future__ import annotations

from dataclasses import replace

import pytest

from twin import tools
from twin.catalog import load_catalog
from twin.domains import DEVICE_DOMAINS, button
from twin.errors import HomeDefinitionError, InvalidServiceDataError, ServiceNotFoundError
from twin.home import DEFAULT_START, Home
from twin.homefile import dump_home, load_home
from twin.registry import Area

RESTART = "button.front_door_restart"


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    load_catalog()["video_doorbell"].install(home, "bell", "Front Door", "hall")
    return home


def test_the_domain_matches_home_assistant() -> None:
    assert set(button.DOMAIN.services) == {"press"}
    assert button.DOMAIN.features == {}
    assert "button" in DEVICE_DOMAINS  # a user asks for a press, as Assist offers it


def test_a_press_writes_the_home_clock_time(home: Home) -> None:
    assert home.state(RESTART).state == "unknown"
    assert home.entities[RESTART].device_class == "restart"
    assert home.entities[RESTART].entity_category == "config"
    home.call_service("button", "press", target={"entity_id": RESTART})
    assert home.state(RESTART).state == "2026-01-01T00:00:00+00:00"
    home.advance(90.25, step=90.25)
    result = tools.call_service(home, "button", "press", {"entity_id": RESTART})
    assert result["changed"][0]["state"] == "2026-01-01T00:01:30.250000+00:00"
    assert home.state(RESTART).last_changed == DEFAULT_START + 90.25


def test_press_takes_no_data_and_a_button_nothing_else(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(InvalidServiceDataError):
        home.call_service("button", "press", {"force": True}, {"entity_id": RESTART})
    with pytest.raises(ServiceNotFoundError):
        home.call_service("button", "turn_on", target={"entity_id": RESTART})
    assert home.states == before


@pytest.mark.parametrize("state", ["pressed", "2026-01-01T00:00:00", "yesterday"])
def test_a_state_that_is_no_time_is_refused(home: Home, state: str) -> None:
    home.states[RESTART] = replace(home.states[RESTART], state=state)
    with pytest.raises(HomeDefinitionError, match="expected a time"):
        load_home(dump_home(home))

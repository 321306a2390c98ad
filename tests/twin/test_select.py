"""select: select_option and select_first/last/next/previous, as Home Assistant's SelectEntity."""

from __future__ import annotations

import pytest

from twin.catalog import load_catalog
from twin.domains import select
from twin.errors import HomeDefinitionError, InvalidServiceDataError, ServiceValidationError
from twin.home import Home
from twin.homefile import dump_home, load_home
from twin.registry import Area, EntityEntry

LIGHTS = "select.mower_headlight_mode"
OPTIONS = ["always_on", "always_off", "evening_only", "evening_and_night"]


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("garden", "Garden"))
    load_catalog()["robot_lawn_mower"].install(home, "mower", "Mower", "garden")
    return home


def call(home: Home, service: str, entity_id: str = LIGHTS, **data: object) -> str:
    home.call_service("select", service, data, {"entity_id": entity_id})
    return home.state(entity_id).state


def test_the_domain_is_home_assistants(home: Home) -> None:
    assert set(select.DOMAIN.services) == {
        "select_option",
        "select_first",
        "select_last",
        "select_next",
        "select_previous",
    }
    assert home.state(LIGHTS).attributes["options"] == OPTIONS
    assert home.state(LIGHTS).state == "evening_only"


def test_select_option_and_the_ends(home: Home) -> None:
    assert call(home, "select_option", option="always_on") == "always_on"
    assert call(home, "select_last") == "evening_and_night"
    assert call(home, "select_first") == "always_on"


def test_next_and_previous_cycle_unless_told_not_to(home: Home) -> None:
    call(home, "select_last")
    assert call(home, "select_next") == "always_on"
    assert call(home, "select_previous") == "evening_and_night"
    assert call(home, "select_next", cycle=False) == "evening_and_night"
    call(home, "select_first")
    assert call(home, "select_previous", cycle=False) == "always_on"
    assert call(home, "select_next", cycle=False) == "always_off"


def test_from_no_option_next_is_the_first_and_previous_the_last(home: Home) -> None:
    home.add_entity(
        EntityEntry("select.mode", "Mode", capabilities={"options": ["a", "b"]}), "unknown"
    )
    assert call(home, "select_next", "select.mode", cycle=False) == "a"
    home.add_entity(
        EntityEntry("select.other", "Other", capabilities={"options": ["a", "b"]}), "unknown"
    )
    assert call(home, "select_previous", "select.other", cycle=False) == "b"


def test_an_option_the_entity_lacks_is_refused_in_home_assistants_words(home: Home) -> None:
    with pytest.raises(ServiceValidationError) as err:
        call(home, "select_option", option="strobe")
    assert str(err.value) == (
        f"Option strobe is not valid for entity {LIGHTS}, valid options are: "
        "always_on, always_off, evening_only, evening_and_night."
    )
    assert home.state(LIGHTS).state == "evening_only"


@pytest.mark.parametrize(
    "service", ["select_first", "select_last", "select_next", "select_previous"]
)
def test_a_select_without_options_refuses_to_move(home: Home, service: str) -> None:
    home.add_entity(EntityEntry("select.empty", "Empty", capabilities={"options": []}), "unknown")
    with pytest.raises(
        ServiceValidationError, match=r"select\.empty has no options to select from"
    ):
        call(home, service, "select.empty")


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("select_option", {}),
        ("select_option", {"option": None}),
        ("select_next", {"cycle": 1}),
        ("select_first", {"cycle": True}),
    ],
)
def test_bad_data_is_invalid(home: Home, service: str, data: dict[str, object]) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("select", service, data, {"entity_id": LIGHTS})


def test_a_state_that_is_no_option_is_refused_in_a_home_file(home: Home) -> None:
    home.add_entity(EntityEntry("select.bad", "Bad", capabilities={"options": ["a"]}), "b")
    with pytest.raises(HomeDefinitionError, match="expected one of the options"):
        load_home(dump_home(home))

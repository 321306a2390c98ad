"""input_select: Home Assistant's input_select services, cycling and option checks."""

from __future__ import annotations

from typing import Any

import pytest

from twin.domains import input_select
from twin.errors import (
    EntityRefusedError,
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceValidationError,
)
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.registry import EntityEntry

from .helpers import OPTIONS, SELECT, add_helpers


@pytest.fixture
def home() -> Home:
    home = Home()
    add_helpers(home)
    return home


def call(home: Home, service: str, **data: Any) -> str:
    home.call_service("input_select", service, data, {"entity_id": SELECT})
    return home.state(SELECT).state


def test_services_are_home_assistants() -> None:
    assert set(input_select.DOMAIN.services) == {
        "select_option",
        "select_first",
        "select_last",
        "select_next",
        "select_previous",
        "set_options",
    }


def test_select_option_first_and_last(home: Home) -> None:
    assert call(home, "select_option", option="Night") == "Night"
    assert call(home, "select_first") == "Home"
    assert call(home, "select_last") == "Night"


def test_next_and_previous_cycle_unless_told_not_to(home: Home) -> None:
    assert call(home, "select_previous") == "Night"
    assert call(home, "select_next") == "Home"
    assert call(home, "select_previous", cycle=False) == "Home"
    call(home, "select_last")
    assert call(home, "select_next", cycle=False) == "Night"


def test_an_option_it_lacks_is_refused_in_home_assistants_words(home: Home) -> None:
    with pytest.raises(EntityRefusedError) as caught:
        call(home, "select_option", option="Party")
    assert str(caught.value) == "Invalid option: Party (possible options: Home, Away, Night)"
    assert caught.value.code == "error"
    assert home.state(SELECT).state == "Home"


@pytest.mark.parametrize(
    ("data", "message"),
    [({"option": None}, "string value is None"), ({"cycle": "yes"}, "expected bool")],
)
def test_bad_data_is_invalid(home: Home, data: dict[str, Any], message: str) -> None:
    service = "select_option" if "option" in data else "select_next"
    with pytest.raises(InvalidServiceDataError, match=message):
        call(home, service, **data)


def test_set_options_keeps_the_current_option_or_takes_the_first(home: Home) -> None:
    assert call(home, "set_options", options=["Away", "Home"]) == "Home"
    assert home.state(SELECT).attributes["options"] == ["Away", "Home"]
    assert call(home, "set_options", options="Vacation") == "Vacation"  # one option, a list
    assert home.state(SELECT).attributes["options"] == ["Vacation"]
    assert OPTIONS == ["Home", "Away", "Night"]  # the helper's own list is not changed


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (["A", "A"], EntityRefusedError, r"^Duplicated options: \['A', 'A'\]$"),
        ([], InvalidServiceDataError, "length of value must be at least 1"),
        ([None], InvalidServiceDataError, "string value is None"),
    ],
)
def test_set_options_refuses(
    home: Home, options: list[Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        call(home, "set_options", options=options)
    assert home.state(SELECT).attributes["options"] == OPTIONS


def test_a_select_without_options_picks_none() -> None:
    home = Home()
    home.add_entity(EntityEntry("input_select.x", "X"), "unknown")
    with pytest.raises(ServiceValidationError, match=r"^Entity input_select\.x has no options"):
        home.call_service("input_select", "select_next", target={"entity_id": "input_select.x"})
    with pytest.raises(EntityRefusedError, match=r"possible options: \)$"):
        home.call_service(
            "input_select", "select_option", {"option": "A"}, {"entity_id": "input_select.x"}
        )


@pytest.mark.parametrize(
    ("state", "options"), [("Home", []), ("Home", ["Home", "Home"]), ("Party", ["Home"])]
)
def test_a_snapshot_select_must_be_one_home_assistant_can_hold(
    state: str, options: list[str]
) -> None:
    snapshot = {
        "states": [
            {"entity_id": "input_select.x", "state": state, "attributes": {"options": options}}
        ]
    }
    with pytest.raises(HomeDefinitionError, match="options"):
        import_ha_snapshot(snapshot)

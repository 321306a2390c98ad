"""alarm_control_panel: arming, disarming and triggering with Home Assistant's features and code
rule."""

from __future__ import annotations

import pytest

from twin.catalog import load_catalog
from twin.domains import alarm_control_panel as alarm
from twin.errors import (
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
)
from twin.home import Home
from twin.homefile import dump_home, load_home
from twin.registry import Area, EntityEntry

PANEL = "alarm_control_panel.panel"  # every feature; a number code, needed to arm
SMART = "alarm_control_panel.smart"  # arm home/away, trigger; no code
ARMING = {
    "alarm_arm_home": "armed_home",
    "alarm_arm_away": "armed_away",
    "alarm_arm_night": "armed_night",
    "alarm_arm_vacation": "armed_vacation",
    "alarm_arm_custom_bypass": "armed_custom_bypass",
}


@pytest.fixture
def home() -> Home:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    catalog = load_catalog()
    catalog["alarm_panel"].install(home, "panel", "Panel", "hall")
    catalog["smart_alarm_system"].install(home, "smart", "Smart", "hall")
    return home


def call(home: Home, service: str, entity_id: str = PANEL, **data: object) -> str:
    home.call_service("alarm_control_panel", service, data, {"entity_id": entity_id})
    return home.state(entity_id).state


def test_features_and_states_are_home_assistants() -> None:
    assert alarm.DOMAIN.features == {
        "arm_home": 1,
        "arm_away": 2,
        "arm_night": 4,
        "trigger": 8,
        "arm_custom_bypass": 16,
        "arm_vacation": 32,
    }
    assert len(alarm.STATES) == 10


def test_a_panel_shows_what_home_assistant_always_writes(home: Home) -> None:
    attributes = home.state(PANEL).attributes
    assert (attributes["code_format"], attributes["code_arm_required"]) == ("number", True)
    assert attributes["changed_by"] is None
    assert attributes["supported_features"] == 63
    assert home.state(SMART).attributes["code_format"] is None


@pytest.mark.parametrize(("service", "armed"), ARMING.items())
def test_arming_with_a_code_then_disarming(home: Home, service: str, armed: str) -> None:
    assert call(home, service, code="1234") == armed
    assert call(home, "alarm_disarm", code="1234") == "disarmed"


@pytest.mark.parametrize("code", [None, ""])
def test_arming_without_a_code_is_refused_where_one_is_required(
    home: Home, code: str | None
) -> None:
    data = {} if code is None else {"code": code}
    with pytest.raises(ServiceValidationError) as err:
        call(home, "alarm_arm_away", **data)
    assert str(err.value) == f"Arming requires a code but none was given for {PANEL}."
    assert home.state(PANEL).state == "disarmed"


def test_a_panel_that_needs_no_code_arms_without_one(home: Home) -> None:
    assert call(home, "alarm_arm_away", SMART) == "armed_away"
    assert call(home, "alarm_disarm", SMART) == "disarmed"


def test_trigger_and_disarm_need_no_code(home: Home) -> None:
    assert call(home, "alarm_trigger") == "triggered"
    assert call(home, "alarm_disarm") == "disarmed"


def test_a_code_is_coerced_to_text_and_any_code_is_taken(home: Home) -> None:
    assert call(home, "alarm_arm_home", code=1234) == "armed_home"
    assert call(home, "alarm_disarm", code="abcd") == "disarmed"  # code_format is a UI hint


def test_a_panel_without_the_feature_refuses_the_mode(home: Home) -> None:
    with pytest.raises(ServiceNotSupportedError):
        call(home, "alarm_arm_night", SMART)


@pytest.mark.parametrize("data", [{"code": None}, {"code": [1]}, {"pin": "1"}])
def test_bad_data_is_invalid(home: Home, data: dict[str, object]) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("alarm_control_panel", "alarm_disarm", data, {"entity_id": PANEL})


@pytest.mark.parametrize(
    ("state", "attributes", "match"),
    [
        ("armed", {}, "state: expected one of"),
        ("disarmed", {"code_format": "pin"}, "code_format: expected one of number, text"),
        ("disarmed", {"code_arm_required": "yes"}, "code_arm_required: expected true or false"),
    ],
)
def test_an_impossible_panel_is_refused_in_a_home_file(
    home: Home, state: str, attributes: dict[str, object], match: str
) -> None:
    home.add_entity(EntityEntry("alarm_control_panel.bad", "Bad"), state, attributes)
    with pytest.raises(HomeDefinitionError, match=match):
        load_home(dump_home(home))

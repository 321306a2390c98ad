"""input_boolean: Home Assistant's input_boolean services in the twin."""

from __future__ import annotations

import pytest

from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.domains import DEVICE_DOMAINS, input_boolean
from twin.errors import InvalidServiceDataError
from twin.home import Home

from .helpers import BOOLEAN, add_helpers


@pytest.fixture
def home() -> Home:
    home = Home()
    add_helpers(home)
    return home


def test_services_are_home_assistants() -> None:
    assert set(input_boolean.DOMAIN.services) == {"turn_on", "turn_off", "toggle"}
    # A home's helpers are exposed as its devices are: the agent sets them as Assist does.
    assert "input_boolean" in DEVICE_DOMAINS


def test_turn_on_off_and_toggle(home: Home) -> None:
    target = {"entity_id": BOOLEAN}
    home.call_service("input_boolean", "turn_on", target=target)
    assert home.state(BOOLEAN).state == "on"
    home.call_service("input_boolean", "toggle", target=target)
    assert home.state(BOOLEAN).state == "off"
    home.call_service("homeassistant", "toggle", target=target)
    assert home.state(BOOLEAN).state == "on"
    home.call_service("input_boolean", "turn_off", target=target)
    assert home.state(BOOLEAN).state == "off"
    assert dict(home.state(BOOLEAN).attributes) == {
        "editable": False,
        "friendly_name": "Guest mode",
    }


def test_data_is_refused(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys not allowed"):
        home.call_service("input_boolean", "turn_on", {"brightness": 3}, {"entity_id": BOOLEAN})
    assert home.state(BOOLEAN).state == "off"


def test_a_policy_may_forbid_helpers(home: Home) -> None:
    call = ("input_boolean", "turn_on", {"entity_id": BOOLEAN})
    assert DEFAULT_POLICY.check(home, *call).allowed
    assert ActionPolicy(domains=DEVICE_DOMAINS - {"input_boolean"}).check(home, *call).code == (
        "forbidden_domain"
    )

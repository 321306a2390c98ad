"""lock: Home Assistant's lock services, the open feature and code format checks in the twin."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import lock
from twin.errors import InvalidServiceDataError, ServiceNotSupportedError, ServiceValidationError
from twin.home import Home, ServiceResult
from twin.homefile import import_ha_snapshot
from twin.registry import Area, EntityEntry

FRONT = "lock.front_door"  # smart deadbolt: lock, unlock; no code
BACK = "lock.back_door"  # unlatching lock: lock, unlock, open; no code
GATE = "lock.side_gate"  # keypad lock: lock, unlock with a code matching ^\d{4}$


def make_home() -> Home:
    """A hall with the front and back doors, and a side gate in the garden."""
    home = Home()
    home.add_area(Area("hall", "Hall"))
    home.add_area(Area("garden", "Garden"))
    catalog = load_catalog()
    catalog["smart_door_lock"].install(home, "front", "Front Door", "hall")
    catalog["unlatching_door_lock"].install(home, "back", "Back Door", "hall")
    catalog["keypad_door_lock"].install(home, "gate", "Side Gate", "garden")
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> ServiceResult:
    return home.call_service("lock", service, data, {"entity_id": entity_id})


def states(home: Home, *entity_ids: str) -> tuple[str, ...]:
    return tuple(home.state(entity_id).state for entity_id in entity_ids)


def test_feature_flags_match_home_assistant() -> None:
    assert lock.DOMAIN.features == {"open": 1}
    assert set(lock.DOMAIN.services) == {"lock", "unlock", "open"}


def test_catalog_locks_carry_a_battery_sensor(home: Home) -> None:
    battery = home.state("sensor.front_door_battery")
    assert battery.attributes["device_class"] == "battery"
    assert battery.attributes["unit_of_measurement"] == "%"
    assert 0 <= float(battery.state) <= 100
    assert home.entities["sensor.front_door_battery"].entity_category == "diagnostic"
    assert home.state(BACK).attributes["supported_features"] == lock.OPEN
    assert home.state(FRONT).attributes["supported_features"] == 0  # shown even when 0, as in HA
    assert home.state(GATE).attributes["code_format"] == r"^\d{4}$"
    assert states(home, FRONT, BACK, GATE) == ("locked", "locked", "locked")


def test_unlock_open_and_lock(home: Home) -> None:
    home.now += 30
    result = call(home, "unlock", FRONT)
    assert states(home, FRONT) == ("unlocked",)
    assert result.changed == (home.state(FRONT),)
    assert home.state(FRONT).last_changed == home.now
    call(home, "open", BACK)
    assert states(home, BACK) == ("open",)
    call(home, "lock", [FRONT, BACK])
    assert states(home, FRONT, BACK) == ("locked", "locked")


def test_locking_a_locked_lock_changes_nothing(home: Home) -> None:
    before = home.state(FRONT)
    assert call(home, "lock", FRONT).changed == ()
    assert home.state(FRONT) is before


@pytest.mark.parametrize("state", ["jammed", "locking", "unlocking", "opening", "open", "unknown"])
@pytest.mark.parametrize(("service", "after"), [("lock", "locked"), ("unlock", "unlocked")])
def test_any_state_locks_and_unlocks(home: Home, state: str, service: str, after: str) -> None:
    entity_id = "lock.test"
    home.add_entity(EntityEntry(entity_id, "Test"), state)
    call(home, service, entity_id)
    assert states(home, entity_id) == (after,)


def test_open_needs_the_open_feature(home: Home) -> None:
    before = home.state(FRONT)
    with pytest.raises(
        ServiceNotSupportedError, match=f"{FRONT} does not support action lock.open"
    ):
        call(home, "open", FRONT)
    assert home.state(FRONT) is before


def test_open_through_an_area_skips_locks_that_cannot_open(home: Home) -> None:
    result = home.call_service("lock", "open", target={"area_id": "hall"})
    assert result.entity_ids == (BACK,)
    assert states(home, FRONT, BACK) == ("locked", "open")


@pytest.mark.parametrize("code", ["1234", 1234, "0000", "0042", "1234\n"])
def test_a_code_of_the_right_format_is_accepted(home: Home, code: Any) -> None:
    # Like Home Assistant, re.match with `$`: a trailing newline still matches.
    call(home, "unlock", GATE, code=code)
    assert states(home, GATE) == ("unlocked",)


@pytest.mark.parametrize("service", ["lock", "unlock"])
@pytest.mark.parametrize(
    "data", [{}, {"code": ""}, {"code": "12"}, {"code": "12345"}, {"code": "abcd"}]
)
def test_a_code_of_the_wrong_format_is_refused(
    home: Home, service: str, data: dict[str, Any]
) -> None:
    call(home, "unlock", GATE, code="1111")
    call(home, "lock", GATE, code="1111")
    before = home.state(GATE)
    message = re.escape(r"The code for lock.side_gate doesn't match pattern ^\d{4}$")
    with pytest.raises(ServiceValidationError, match=message):
        call(home, service, GATE, **data)
    assert home.state(GATE) is before


def test_code_format_matches_from_the_start_only() -> None:
    home = Home()
    capabilities = {"code_format": r"\d{4}"}
    entry = EntityEntry(
        "lock.shed", "Shed", supported_features=lock.OPEN, capabilities=capabilities
    )
    home.add_entity(entry, "locked")
    call(home, "open", "lock.shed", code="12345 and more")
    assert states(home, "lock.shed") == ("open",)
    with pytest.raises(ServiceValidationError, match="doesn't match pattern"):
        call(home, "lock", "lock.shed", code="x1234")


def test_locks_without_a_code_format_take_any_code_or_none(home: Home) -> None:
    call(home, "unlock", FRONT, code="anything")
    call(home, "open", BACK, code=7)
    assert states(home, FRONT, BACK) == ("unlocked", "open")


@pytest.mark.parametrize(
    "data", [{"code": None}, {"code": ["1234"]}, {"code": {"pin": "1234"}}, {"pin": "1234"}]
)
@pytest.mark.parametrize("service", ["lock", "unlock", "open"])
def test_invalid_data_changes_nothing(home: Home, service: str, data: dict[str, Any]) -> None:
    before = home.state(BACK)
    with pytest.raises(InvalidServiceDataError, match=f"lock.{service}"):
        call(home, service, BACK, **data)
    assert home.state(BACK) is before


def test_a_refused_code_changes_no_target(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceValidationError, match=GATE):
        call(home, "unlock", [FRONT, BACK, GATE])
    assert home.states == before
    call(home, "unlock", [FRONT, BACK, GATE], code="2468")
    assert states(home, FRONT, BACK, GATE) == ("unlocked", "unlocked", "unlocked")


def test_an_unsupported_target_changes_no_target(home: Home) -> None:
    before = dict(home.states)
    with pytest.raises(ServiceNotSupportedError, match=FRONT):
        call(home, "open", [BACK, FRONT])
    assert home.states == before


@given(code=st.from_regex(r"\A[0-9]{4}\Z"))
def test_every_four_digit_code_unlocks_the_keypad_lock(code: str) -> None:
    home = make_home()
    call(home, "unlock", GATE, code=code)
    assert states(home, GATE) == ("unlocked",)


@given(code=st.text(max_size=8).filter(lambda code: re.match(r"^\d{4}$", code) is None))
def test_every_other_code_is_refused(code: str) -> None:
    home = make_home()
    before = home.state(GATE)
    with pytest.raises(ServiceValidationError):
        call(home, "unlock", GATE, code=code)
    assert home.state(GATE) is before


# --- imported locks keep their code format -------------------------------------------------------


@pytest.mark.parametrize("registry", [False, True])
def test_an_imported_lock_checks_its_code_format(registry: bool) -> None:
    """Home Assistant writes code_format in the state only (it is no capability attribute): a
    lock imported from a snapshot, with or without its registry entry, still checks codes."""
    attributes = {"supported_features": 0, "code_format": r"^\d{4}$"}
    snapshot: dict[str, Any] = {
        "states": [{"entity_id": GATE, "state": "locked", "attributes": attributes}]
    }
    if registry:
        snapshot["entities"] = [{"entity_id": GATE, "capabilities": {}}]
    home, _ = import_ha_snapshot(snapshot)
    for data in ({}, {"code": "12"}):
        with pytest.raises(ServiceValidationError, match="doesn't match pattern"):
            call(home, "unlock", GATE, **data)
    assert home.state(GATE).state == "locked"
    call(home, "unlock", GATE, code="1234")
    assert home.state(GATE).state == "unlocked"

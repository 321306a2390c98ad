"""Locks: Home Assistant's lock services act on the twin, and HA shows the twin.

Home Assistant checks a code against the lock's code_format (or puts in the user's default code)
before the entity sees the call; every call also goes, unchanged, to an independent twin, and Home
Assistant's state, the integration's twin and the independent twin must agree.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.catalog import load_catalog
from twin.home import Home

from .conftest import every_device_home, set_up_home
from .parity import as_json, assert_same, call_both, catalog_types, independent_twin

CATALOG = load_catalog()
LOCK_TYPES = catalog_types("lock")
DEADBOLT = "lock.smart_door_lock"
UNLATCHING = "lock.unlatching_door_lock"
KEYPAD = "lock.keypad_door_lock"
LOCKS = [DEADBOLT, UNLATCHING, KEYPAD]


class Locks:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A lock service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "lock", service, target, data)

    def state(self, entity_id: str) -> str:
        """The state Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return state.state


@pytest.fixture
async def locks(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Locks:
    """The loaded home's locks and their independent twin."""
    return Locks(hass, loaded_home)


async def load_home_with(hass: HomeAssistant, states: dict[str, str]) -> MockConfigEntry:
    """Set up `every_device_home` with some entities starting in the given states."""
    home = every_device_home()
    for entity_id, state in states.items():
        home.states[entity_id] = replace(home.states[entity_id], state=state)
    return await set_up_home(hass, home)


# --- every device type --------------------------------------------------------------------------


async def test_the_home_has_every_catalog_lock(locks: Locks) -> None:
    twin = locks.entry.runtime_data.home
    assert sorted(e for e in twin.entities if e.startswith("lock.")) == sorted(LOCKS)
    assert sorted(f"lock.{type_id}" for type_id in LOCK_TYPES) == sorted(LOCKS)


@pytest.mark.parametrize("type_id", LOCK_TYPES)
async def test_every_lock_type_shows_the_twin_and_unlocks(
    hass: HomeAssistant, locks: Locks, type_id: str
) -> None:
    entity_id = f"lock.{type_id}"
    registered = er.async_get(hass).async_get(entity_id)
    assert registered is not None
    assert registered.unique_id == f"{locks.entry.entry_id}_{entity_id}"
    twin = locks.entry.runtime_data.home.states[entity_id]
    state = hass.states.get(entity_id)
    assert as_json(state.state, state.attributes) == as_json(twin.state, twin.attributes)
    assert state.attributes.get("code_format") == CATALOG[type_id].entities[0].capabilities.get(
        "code_format"
    )
    assert await locks.call("unlock", entity_id, code="1234") is None
    assert locks.state(entity_id) == "unlocked"
    assert await locks.call("lock", entity_id, code="1234") is None
    assert locks.state(entity_id) == "locked"


@pytest.mark.parametrize(
    "state", ["locked", "unlocked", "open", "jammed", "locking", "unlocking", "opening", "unknown"]
)
async def test_every_lock_state_shows_and_any_action_settles_it(
    hass: HomeAssistant, state: str
) -> None:
    entry = await load_home_with(hass, dict.fromkeys(LOCKS, state))
    other = independent_twin(entry)
    assert_same(hass, entry, other, "lock")
    assert hass.states.get(DEADBOLT).state == state
    for service, entity_id, data in [
        ("unlock", DEADBOLT, {}),
        ("open", UNLATCHING, {}),
        ("lock", KEYPAD, {"code": "0000"}),
    ]:
        target = {"entity_id": entity_id}
        assert await call_both(hass, entry, other, "lock", service, target, data) is None
    assert [hass.states.get(e).state for e in LOCKS] == ["unlocked", "open", "locked"]


# --- services -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity_id", "calls", "expected"),
    [
        (DEADBOLT, [("unlock", {})], "unlocked"),
        (DEADBOLT, [("unlock", {}), ("lock", {})], "locked"),
        (DEADBOLT, [("lock", {})], "locked"),
        (DEADBOLT, [("unlock", {"code": "anything"})], "unlocked"),
        (DEADBOLT, [("unlock", {"code": ""})], "unlocked"),
        (UNLATCHING, [("open", {})], "open"),
        (UNLATCHING, [("open", {}), ("lock", {})], "locked"),
        (UNLATCHING, [("open", {}), ("unlock", {})], "unlocked"),
        (KEYPAD, [("unlock", {"code": "1234"})], "unlocked"),
        (KEYPAD, [("unlock", {"code": 4321})], "unlocked"),
        (KEYPAD, [("unlock", {"code": "0000"}), ("lock", {"code": "9999"})], "locked"),
    ],
)
async def test_services_act_on_the_twin(
    locks: Locks, entity_id: str, calls: list[tuple[str, dict[str, Any]]], expected: str
) -> None:
    for service, data in calls:
        assert await locks.call(service, entity_id, **data) is None
    assert locks.state(entity_id) == expected


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "code"),
    [
        (KEYPAD, "unlock", {}, "validation_error"),
        (KEYPAD, "unlock", {"code": ""}, "validation_error"),
        (KEYPAD, "unlock", {"code": "12a4"}, "validation_error"),
        (KEYPAD, "unlock", {"code": "12345"}, "validation_error"),
        (KEYPAD, "lock", {"code": "123"}, "validation_error"),
        (KEYPAD, "unlock", {"code": ["1234"]}, "invalid_data"),
        (DEADBOLT, "unlock", {"code": None}, "invalid_data"),
        (DEADBOLT, "unlock", {"pin": "1234"}, "invalid_data"),
        (DEADBOLT, "open", {}, "service_not_supported"),
        (KEYPAD, "open", {"code": "1234"}, "service_not_supported"),
        (DEADBOLT, "toggle", {}, "service_not_found"),
    ],
)
async def test_refused_calls_change_nothing(
    locks: Locks, entity_id: str, service: str, data: dict[str, Any], code: str
) -> None:
    before = locks.state(entity_id)
    assert await locks.call(service, entity_id, **data) == code
    assert locks.state(entity_id) == before


async def test_home_assistant_puts_in_the_default_code(hass: HomeAssistant, locks: Locks) -> None:
    """A default code set on the entity reaches the twin, which then accepts the call."""
    er.async_get(hass).async_update_entity_options(KEYPAD, "lock", {"default_code": "2468"})
    await hass.async_block_till_done()
    await hass.services.async_call("lock", "unlock", {"entity_id": KEYPAD}, blocking=True)
    twin = locks.entry.runtime_data.home.states[KEYPAD]
    assert locks.state(KEYPAD) == twin.state == "unlocked"


# --- many random calls --------------------------------------------------------------------------


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One lock service, with a code that fits the keypad more often than not."""
    service = rng.choice(["lock", "unlock", "unlock", "open"])
    data: dict[str, Any] = {}
    code = rng.choice([None, f"{rng.randint(0, 9999):04d}", rng.randint(1000, 9999), "", "12a4"])
    if code is not None:
        data["code"] = code
    if rng.random() < 0.03:
        data["pin"] = 1
    return service, data


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_calls_keep_home_assistant_and_the_twins_equal(
    locks: Locks, seed: int
) -> None:
    rng = random.Random(seed)
    outcomes = []
    seen = set()
    for _ in range(300):
        service, data = random_call(rng)
        outcomes.append(await locks.call(service, rng.choice(LOCKS), **data))
        seen |= {locks.state(entity_id) for entity_id in LOCKS}
    assert set(outcomes) == {None, "invalid_data", "validation_error", "service_not_supported"}
    assert outcomes.count(None) > 120
    assert seen == {"locked", "unlocked", "open"}

"""Robot vacuums: Home Assistant's vacuum services act on the twin, and HA shows the twin.

Every call goes through Home Assistant and, unchanged, to an independent twin; Home Assistant's
state, the integration's twin and the independent twin must agree, types included.
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
VACUUM_TYPES = catalog_types("vacuum")
ROBOT = "vacuum.robot_vacuum"
BASIC = "vacuum.robot_vacuum_basic"
VACUUMS = [ROBOT, BASIC]
ACTIVITIES = ["cleaning", "docked", "idle", "paused", "returning", "error"]


class Vacuums:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A vacuum service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "vacuum", service, target, data)

    def shown(self, entity_id: str) -> dict[str, Any]:
        """The state and attributes Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return {"state": state.state, **state.attributes}


@pytest.fixture
async def vacuums(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Vacuums:
    """The loaded home's vacuums and their independent twin."""
    return Vacuums(hass, loaded_home)


async def load_home_with(hass: HomeAssistant, state: str) -> Vacuums:
    """Set up `every_device_home` with its vacuums starting in `state`."""
    home = every_device_home()
    for entity_id in VACUUMS:
        home.states[entity_id] = replace(home.states[entity_id], state=state)
    entry = await set_up_home(hass, home)
    return Vacuums(hass, entry)


# --- every device type --------------------------------------------------------------------------


async def test_the_home_has_every_catalog_vacuum(vacuums: Vacuums) -> None:
    twin = vacuums.entry.runtime_data.home
    assert sorted(e for e in twin.entities if e.startswith("vacuum.")) == sorted(VACUUMS)
    assert sorted(f"vacuum.{type_id}" for type_id in VACUUM_TYPES) == sorted(VACUUMS)


@pytest.mark.parametrize("type_id", VACUUM_TYPES)
async def test_every_vacuum_type_shows_the_twin_and_cleans(
    hass: HomeAssistant, vacuums: Vacuums, type_id: str
) -> None:
    entity_id = f"vacuum.{type_id}"
    registered = er.async_get(hass).async_get(entity_id)
    assert registered is not None
    assert registered.unique_id == f"{vacuums.entry.entry_id}_{entity_id}"
    twin = vacuums.entry.runtime_data.home.states[entity_id]
    state = hass.states.get(entity_id)
    assert as_json(state.state, state.attributes) == as_json(twin.state, twin.attributes)
    spec = CATALOG[type_id].entities[0]
    assert state.attributes.get("fan_speed_list") == spec.capabilities.get("fan_speed_list")
    for service, activity in [("start", "cleaning"), ("pause", "paused"), ("stop", "idle")]:
        assert await vacuums.call(service, entity_id) is None
        assert vacuums.shown(entity_id)["state"] == activity


@pytest.mark.parametrize("state", [*ACTIVITIES, "unknown"])
async def test_every_activity_shows_and_start_leaves_it(hass: HomeAssistant, state: str) -> None:
    homes = await load_home_with(hass, state)
    assert_same(hass, homes.entry, homes.other, "vacuum")
    assert homes.shown(BASIC)["state"] == state
    assert await homes.call("start", BASIC) is None
    assert homes.shown(BASIC)["state"] == "cleaning"


# --- services -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity_id", "calls", "expected"),
    [
        (ROBOT, ["start"], {"state": "cleaning"}),
        (ROBOT, ["start", "pause"], {"state": "paused"}),
        (ROBOT, ["start", "pause", "start"], {"state": "cleaning"}),
        (ROBOT, ["pause"], {"state": "docked"}),
        (ROBOT, ["start", "stop"], {"state": "idle"}),
        (ROBOT, ["stop"], {"state": "docked"}),
        (ROBOT, ["start", "return_to_base"], {"state": "returning"}),
        (ROBOT, ["start", "return_to_base", "stop"], {"state": "idle"}),
        (ROBOT, ["return_to_base"], {"state": "docked"}),
        (ROBOT, ["clean_spot"], {"state": "cleaning"}),
        (ROBOT, ["start", "locate"], {"state": "cleaning"}),
        (BASIC, ["start", "return_to_base"], {"state": "returning"}),
        (BASIC, ["locate"], {"state": "docked"}),
    ],
)
async def test_services_act_on_the_twin(
    vacuums: Vacuums, entity_id: str, calls: list[str], expected: dict[str, Any]
) -> None:
    for service in calls:
        assert await vacuums.call(service, entity_id) is None
    assert vacuums.shown(entity_id) | expected == vacuums.shown(entity_id)


@pytest.mark.parametrize(
    "data",
    [
        {"command": "empty_bin"},
        {"command": "set_water_level", "params": {"level": 2}},
        {"command": "go_to", "params": [25500, 25500]},
        {"command": "beep", "params": "twice"},
        {"command": 7},
    ],
)
async def test_send_command_reaches_the_twin_and_shows_nothing(
    vacuums: Vacuums, data: dict[str, Any]
) -> None:
    before = vacuums.shown(ROBOT)
    assert await vacuums.call("send_command", ROBOT, **data) is None
    assert vacuums.shown(ROBOT) == before


async def test_fan_speed_is_set_and_kept(vacuums: Vacuums) -> None:
    assert await vacuums.call("set_fan_speed", ROBOT, fan_speed="turbo") is None
    assert vacuums.shown(ROBOT)["fan_speed"] == "turbo"
    assert await vacuums.call("start", ROBOT) is None
    assert await vacuums.call("return_to_base", ROBOT) is None
    assert vacuums.shown(ROBOT)["fan_speed"] == "turbo"


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "code"),
    [
        (ROBOT, "set_fan_speed", {"fan_speed": "hurricane"}, "validation_error"),
        (ROBOT, "set_fan_speed", {"fan_speed": "Turbo"}, "validation_error"),
        (ROBOT, "set_fan_speed", {}, "invalid_data"),
        (ROBOT, "set_fan_speed", {"fan_speed": None}, "invalid_data"),
        (ROBOT, "set_fan_speed", {"fan_speed": ["max"]}, "invalid_data"),
        (ROBOT, "send_command", {}, "invalid_data"),
        (ROBOT, "send_command", {"params": [1]}, "invalid_data"),
        (ROBOT, "send_command", {"command": "x", "extra": 1}, "invalid_data"),
        (ROBOT, "start", {"speed": "max"}, "invalid_data"),
        (ROBOT, "stop", {"now": True}, "invalid_data"),
        (BASIC, "set_fan_speed", {"fan_speed": "max"}, "service_not_supported"),
        (BASIC, "clean_spot", {}, "service_not_supported"),
        (BASIC, "send_command", {"command": "beep"}, "service_not_supported"),
        (ROBOT, "turn_on", {}, "service_not_found"),
        (ROBOT, "start_pause", {}, "service_not_found"),
    ],
)
async def test_refused_calls_change_nothing(
    vacuums: Vacuums, entity_id: str, service: str, data: dict[str, Any], code: str
) -> None:
    assert await vacuums.call("start", entity_id) is None
    before = vacuums.shown(entity_id)
    assert await vacuums.call(service, entity_id, **data) == code
    assert vacuums.shown(entity_id) == before


# --- many random calls --------------------------------------------------------------------------

SPEEDS = ["quiet", "balanced", "turbo", "max", "hurricane"]


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One vacuum service, with data that is valid more often than not."""
    service = rng.choice(
        [
            "start",
            "start",
            "pause",
            "stop",
            "return_to_base",
            "clean_spot",
            "locate",
            "set_fan_speed",
            "set_fan_speed",
            "send_command",
        ]
    )
    data: dict[str, Any] = {}
    if service == "set_fan_speed":
        data["fan_speed"] = rng.choice([*SPEEDS, None])
    elif service == "send_command":
        data["command"] = rng.choice(["empty_bin", "beep"])
        params = rng.choice([None, {"level": 1}, [1, 2], "x"])
        if params is not None:
            data["params"] = params
    if rng.random() < 0.03:
        data["bogus"] = 1
    return service, data


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_calls_keep_home_assistant_and_the_twins_equal(
    vacuums: Vacuums, seed: int
) -> None:
    rng = random.Random(seed)
    outcomes = []
    seen = set()
    for _ in range(300):
        service, data = random_call(rng)
        outcomes.append(await vacuums.call(service, rng.choice(VACUUMS), **data))
        seen |= {vacuums.shown(entity_id)["state"] for entity_id in VACUUMS}
    assert set(outcomes) == {None, "invalid_data", "validation_error", "service_not_supported"}
    assert outcomes.count(None) > 120
    assert seen == {"docked", "cleaning", "paused", "idle", "returning"}

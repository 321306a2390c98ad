"""The humidifier platform: Home Assistant's services act on the twin device; HA shows the twin."""

from __future__ import annotations

import random
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.catalog import load_catalog
from twin.home import Home

from .parity import (
    as_json,
    assert_registered_as_the_twin,
    assert_same,
    call_both,
    catalog_types,
    ha_target,
    independent_twin,
    shown,
)

CATALOG = load_catalog()
HUMIDIFIER_TYPES = catalog_types("humidifier")
ENTITY_IDS = [f"humidifier.{type_id}" for type_id in HUMIDIFIER_TYPES]
HUMIDIFIER = "humidifier.humidifier"
DEHUMIDIFIER = "humidifier.dehumidifier"


async def act(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    other: Home,
    service: str,
    entity_id: str,
    **data: Any,
) -> str | None:
    """A humidifier service through Home Assistant and on the independent twin; the error."""
    target = {"entity_id": entity_id}
    return await call_both(hass, entry, other, "humidifier", service, target, data)


async def test_every_humidifier_type_shows_the_twin(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert_registered_as_the_twin(hass, loaded_home, "humidifier", ENTITY_IDS)
    assert [shown(hass, e)["device_class"] for e in (HUMIDIFIER, DEHUMIDIFIER)] == [
        "humidifier",
        "dehumidifier",
    ]
    assert_same(hass, loaded_home, independent_twin(loaded_home), "humidifier")


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "expected"),
    [
        (HUMIDIFIER, "turn_on", {}, {"state": "on", "action": "humidifying"}),
        (DEHUMIDIFIER, "turn_on", {}, {"state": "on", "action": "drying"}),
        (HUMIDIFIER, "toggle", {}, {"state": "on", "action": "humidifying"}),
        (HUMIDIFIER, "turn_off", {}, {"state": "off", "action": "off"}),
        (HUMIDIFIER, "set_humidity", {"humidity": 35}, {"humidity": 35, "action": "off"}),
        (HUMIDIFIER, "set_humidity", {"humidity": "45"}, {"humidity": 45}),
        (HUMIDIFIER, "set_humidity", {"humidity": 30.9}, {"humidity": 30}),
        (DEHUMIDIFIER, "set_humidity", {"humidity": 85}, {"humidity": 85}),
        (HUMIDIFIER, "set_mode", {"mode": "sleep"}, {"mode": "sleep"}),
        (DEHUMIDIFIER, "set_mode", {"mode": "continuous"}, {"mode": "continuous"}),
    ],
)
async def test_services_act_on_the_twin(
    hass: HomeAssistant,
    loaded_home: MockConfigEntry,
    entity_id: str,
    service: str,
    data: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    other = independent_twin(loaded_home)
    assert await act(hass, loaded_home, other, service, entity_id, **data) is None
    assert shown(hass, entity_id) | expected == shown(hass, entity_id)


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "code"),
    [
        (HUMIDIFIER, "set_humidity", {"humidity": 101}, "invalid_data"),
        (HUMIDIFIER, "set_humidity", {"humidity": -1}, "invalid_data"),
        (HUMIDIFIER, "set_humidity", {"humidity": 29}, "validation_error"),
        (DEHUMIDIFIER, "set_humidity", {"humidity": 86}, "validation_error"),
        (HUMIDIFIER, "set_humidity", {"humidity": "wet"}, "invalid_data"),
        (HUMIDIFIER, "set_humidity", {}, "invalid_data"),
        # Home Assistant leaves the mode to the device; the twin's refuses one it lacks.
        (HUMIDIFIER, "set_mode", {"mode": "turbo"}, "validation_error"),
        (DEHUMIDIFIER, "set_mode", {"mode": "sleep"}, "validation_error"),
        (HUMIDIFIER, "set_mode", {}, "invalid_data"),
        (HUMIDIFIER, "set_mode", {"mode": None}, "invalid_data"),
        (HUMIDIFIER, "turn_on", {"humidity": 40}, "invalid_data"),
        (HUMIDIFIER, "toggle", {"mode": "auto"}, "invalid_data"),
        (HUMIDIFIER, "set_mode", {"mode": "auto", "humidity": 40}, "invalid_data"),
        (HUMIDIFIER, "set_speed", {"speed": 2}, "service_not_found"),
    ],
)
async def test_refused_calls_change_nothing(
    hass: HomeAssistant,
    loaded_home: MockConfigEntry,
    entity_id: str,
    service: str,
    data: dict[str, Any],
    code: str,
) -> None:
    other = independent_twin(loaded_home)
    before = shown(hass, entity_id)
    assert await act(hass, loaded_home, other, service, entity_id, **data) == code
    assert shown(hass, entity_id) == before


async def test_action_follows_state_target_and_room(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """On and short of the target: working; at or past it: idle (current 38 %, 64 %)."""
    other = independent_twin(loaded_home)
    for entity_id, humidity, action in [
        (HUMIDIFIER, 35, "idle"),
        (HUMIDIFIER, 40, "humidifying"),
        (DEHUMIDIFIER, 70, "idle"),
        (DEHUMIDIFIER, 60, "drying"),
    ]:
        assert await act(hass, loaded_home, other, "turn_on", entity_id) is None
        assert (
            await act(hass, loaded_home, other, "set_humidity", entity_id, humidity=humidity)
            is None
        )
        assert shown(hass, entity_id)["action"] == action
    assert await act(hass, loaded_home, other, "toggle", DEHUMIDIFIER) is None
    assert shown(hass, DEHUMIDIFIER)["action"] == "off"


async def test_a_floor_target_reaches_both_devices(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    floor = {"floor_id": "ground"}
    for service, data in [("set_humidity", {"humidity": 55}), ("turn_on", {}), ("toggle", {})]:
        assert await call_both(hass, loaded_home, other, "humidifier", service, floor, data) is None
    assert [shown(hass, e)["humidity"] for e in ENTITY_IDS] == [55, 55]
    assert [hass.states.get(e).state for e in ENTITY_IDS] == ["off", "off"]


async def test_each_targeted_device_takes_the_call_on_its_own(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Home Assistant calls each device separately: the humidifier goes to sleep although the
    dehumidifier has no such mode (the twin alone refuses the whole call)."""
    target = ha_target(loaded_home, {"floor_id": "ground"})
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(
            "humidifier", "set_mode", {"mode": "sleep"}, blocking=True, target=target
        )
    assert [shown(hass, e)["mode"] for e in (HUMIDIFIER, DEHUMIDIFIER)] == ["sleep", "set"]
    twin = loaded_home.runtime_data.home
    for entity_id in ENTITY_IDS:
        state, mine = hass.states.get(entity_id), twin.states[entity_id]
        assert as_json(state.state, state.attributes) == as_json(mine.state, mine.attributes)


async def test_room_physics_reaches_home_assistant(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    assert await act(hass, loaded_home, other, "set_humidity", HUMIDIFIER, humidity=70) is None
    assert await act(hass, loaded_home, other, "turn_on", HUMIDIFIER) is None
    before = shown(hass, HUMIDIFIER)["current_humidity"]
    loaded_home.runtime_data.advance(1800)
    other.advance(1800)
    await hass.async_block_till_done()
    assert shown(hass, HUMIDIFIER)["current_humidity"] > before
    assert_same(hass, loaded_home, other, "humidifier")


# --- many random calls --------------------------------------------------------------------------

# Every mode of the catalog's devices, and two that none has.
MODES = [
    *sorted(
        {
            mode
            for device_type in CATALOG.values()
            for spec in device_type.entities
            for mode in spec.capabilities.get("available_modes") or ()
        }
    ),
    "turbo",
    1,
]
SERVICES = ["turn_on", "turn_off", "toggle", "set_humidity", "set_mode"]


def humidity(rng: random.Random) -> Any:
    """Mostly a percentage within or near the devices' limits, sometimes text or out of 0-100."""
    return rng.choice(
        [rng.randint(20, 95), rng.randint(35, 80), str(rng.randint(30, 90)), 101, "wet"]
    )


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One humidifier service with data that is valid more often than not."""
    service = rng.choice(SERVICES)
    data: dict[str, Any] = {}
    if service == "set_humidity":
        data["humidity"] = humidity(rng)
    elif service == "set_mode":
        data["mode"] = rng.choice(MODES)
    if rng.random() < 0.04:
        data["brightness"] = 1
    return service, data


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_calls_keep_home_assistant_and_the_twins_equal(
    hass: HomeAssistant, loaded_home: MockConfigEntry, seed: int
) -> None:
    rng = random.Random(seed)
    other = independent_twin(loaded_home)
    outcomes = []
    for _ in range(300):
        service, data = random_call(rng)
        outcomes.append(
            await act(hass, loaded_home, other, service, rng.choice(ENTITY_IDS), **data)
        )
    # The calls reached every outcome, and changed the devices.
    assert set(outcomes) == {None, "invalid_data", "validation_error"}
    start = independent_twin(loaded_home)
    assert all(other.states[e] != start.states[e] for e in ENTITY_IDS)

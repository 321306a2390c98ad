"""The water_heater platform: Home Assistant's services act on the twin tank; HA shows the twin."""

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
WATER_HEATER_TYPES = catalog_types("water_heater")
ENTITY_IDS = [f"water_heater.{type_id}" for type_id in WATER_HEATER_TYPES]
ELECTRIC = "water_heater.electric_water_heater"
HEAT_PUMP = "water_heater.heat_pump_water_heater"


async def act(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    other: Home,
    service: str,
    entity_id: str,
    **data: Any,
) -> str | None:
    """A water_heater service through Home Assistant and on the independent twin; the error."""
    target = {"entity_id": entity_id}
    return await call_both(hass, entry, other, "water_heater", service, target, data)


async def test_every_water_heater_type_shows_the_twin(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert_registered_as_the_twin(hass, loaded_home, "water_heater", ENTITY_IDS)
    assert_same(hass, loaded_home, independent_twin(loaded_home), "water_heater")


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "expected"),
    [
        (ELECTRIC, "set_temperature", {"temperature": 57.3}, {"temperature": 57.3}),
        (ELECTRIC, "set_temperature", {"temperature": "61.26"}, {"temperature": 61.3}),
        (HEAT_PUMP, "set_temperature", {"temperature": 43}, {"temperature": 43.0}),
        (
            ELECTRIC,
            "set_temperature",
            {"temperature": 65, "operation_mode": "high_demand"},
            {"state": "high_demand", "operation_mode": "high_demand", "temperature": 65.0},
        ),
        (
            HEAT_PUMP,
            "set_operation_mode",
            {"operation_mode": "heat_pump"},
            {"state": "heat_pump", "operation_mode": "heat_pump"},
        ),
        (ELECTRIC, "set_operation_mode", {"operation_mode": "off"}, {"state": "off"}),
        (ELECTRIC, "set_away_mode", {"away_mode": True}, {"away_mode": "on"}),
        (HEAT_PUMP, "set_away_mode", {"away_mode": "yes"}, {"away_mode": "on"}),
        (HEAT_PUMP, "set_away_mode", {"away_mode": 0}, {"away_mode": "off"}),
        (ELECTRIC, "turn_off", {}, {"state": "off", "operation_mode": "off"}),
        (ELECTRIC, "turn_on", {}, {"state": "eco", "operation_mode": "eco"}),
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
        # Home Assistant leaves the range to the device; the twin's tank refuses.
        (ELECTRIC, "set_temperature", {"temperature": 75.1}, "validation_error"),
        (HEAT_PUMP, "set_temperature", {"temperature": 42}, "validation_error"),
        (ELECTRIC, "set_temperature", {"temperature": "hot"}, "invalid_data"),
        (ELECTRIC, "set_temperature", {}, "invalid_data"),
        (ELECTRIC, "set_temperature", {"operation_mode": "eco"}, "invalid_data"),
        (
            ELECTRIC,
            "set_temperature",
            {"temperature": 55, "operation_mode": "turbo"},
            "validation_error",
        ),
        (
            ELECTRIC,
            "set_temperature",
            {"temperature": 80, "operation_mode": "high_demand"},
            "validation_error",
        ),
        (ELECTRIC, "set_temperature", {"temperature": 55, "target_temp_high": 60}, "invalid_data"),
        (ELECTRIC, "set_operation_mode", {"operation_mode": "heat_pump"}, "validation_error"),
        (ELECTRIC, "set_operation_mode", {}, "invalid_data"),
        (HEAT_PUMP, "set_operation_mode", {"operation_mode": None}, "invalid_data"),
        (ELECTRIC, "set_away_mode", {"away_mode": "maybe"}, "invalid_data"),
        (ELECTRIC, "set_away_mode", {}, "invalid_data"),
        (ELECTRIC, "turn_on", {"operation_mode": "eco"}, "invalid_data"),
        (ELECTRIC, "turn_off", {"away_mode": True}, "invalid_data"),
        (ELECTRIC, "set_vacation_mode", {}, "service_not_found"),
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


async def test_turn_on_returns_to_the_mode_before_off(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    calls = [
        ("set_operation_mode", {"operation_mode": "high_demand"}),
        ("turn_off", {}),
        ("turn_off", {}),
        ("turn_on", {}),
    ]
    for service, data in calls:
        assert await act(hass, loaded_home, other, service, ELECTRIC, **data) is None
    assert hass.states.get(ELECTRIC).state == "high_demand"


async def test_a_floor_target_reaches_both_tanks(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    floor = {"floor_id": "ground"}
    for service, data in [
        ("set_temperature", {"temperature": 50.5}),
        ("set_away_mode", {"away_mode": True}),
        ("turn_off", {}),
    ]:
        assert (
            await call_both(hass, loaded_home, other, "water_heater", service, floor, data) is None
        )
    assert [shown(hass, e)["temperature"] for e in ENTITY_IDS] == [50.5, 50.5]
    assert [hass.states.get(e).state for e in ENTITY_IDS] == ["off", "off"]


async def test_each_targeted_tank_takes_the_call_on_its_own(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Home Assistant calls each tank separately: the electric one takes 42 °C even though the
    heat pump's refuses it (the twin alone refuses the whole call)."""
    target = ha_target(loaded_home, {"floor_id": "ground"})
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(
            "water_heater", "set_temperature", {"temperature": 42}, blocking=True, target=target
        )
    assert [shown(hass, e)["temperature"] for e in (ELECTRIC, HEAT_PUMP)] == [42.0, 50.0]
    twin = loaded_home.runtime_data.home
    for entity_id in ENTITY_IDS:
        state, mine = hass.states.get(entity_id), twin.states[entity_id]
        assert as_json(state.state, state.attributes) == as_json(mine.state, mine.attributes)


async def test_tank_physics_reaches_home_assistant(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    data = {"temperature": 70, "operation_mode": "high_demand"}
    assert await act(hass, loaded_home, other, "set_temperature", ELECTRIC, **data) is None
    before = shown(hass, ELECTRIC)["current_temperature"]
    loaded_home.runtime_data.advance(3600)
    other.advance(3600)
    await hass.async_block_till_done()
    assert shown(hass, ELECTRIC)["current_temperature"] > before
    assert_same(hass, loaded_home, other, "water_heater")


# --- many random calls --------------------------------------------------------------------------

# Every operation mode of the catalog's tanks, and two that none has.
OPERATIONS = [
    *sorted(
        {
            mode
            for device_type in CATALOG.values()
            for spec in device_type.entities
            if spec.domain == "water_heater"
            for mode in spec.capabilities.get("operation_list") or ()
        }
    ),
    "turbo",
    2,
]
# set_temperature twice as often as the others.
SERVICES = ["set_temperature"] * 2 + ["set_operation_mode", "set_away_mode", "turn_on", "turn_off"]
AWAY = [True, False, "on", "off", "yes", 0, 1, "maybe"]


def temperature(rng: random.Random) -> Any:
    """Mostly a number within or near the tanks' limits, sometimes text."""
    return rng.choice(
        [
            round(rng.uniform(35.0, 80.0), rng.randint(0, 2)),
            round(rng.uniform(45.0, 60.0), 1),
            rng.randint(38, 78),
            str(round(rng.uniform(45.0, 60.0), 1)),
            "hot",
        ]
    )


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One water_heater service with data that is valid more often than not."""
    service = rng.choice(SERVICES)
    data: dict[str, Any] = {}
    if service == "set_temperature":
        if rng.random() < 0.95:
            data["temperature"] = temperature(rng)
        if rng.random() < 0.3:
            data["operation_mode"] = rng.choice(OPERATIONS)
    elif service == "set_operation_mode":
        data["operation_mode"] = rng.choice(OPERATIONS)
    elif service == "set_away_mode":
        data["away_mode"] = rng.choice(AWAY)
    if rng.random() < 0.04:
        data["target_temp_low"] = 40
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
    # The calls reached every outcome, and changed the tanks.
    assert set(outcomes) == {None, "invalid_data", "validation_error"}
    start = independent_twin(loaded_home)
    assert all(other.states[e] != start.states[e] for e in ENTITY_IDS)

"""The climate platform: Home Assistant's climate services act on the twin; HA shows the twin."""

from __future__ import annotations

import random
from dataclasses import replace
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
CLIMATE_TYPES = catalog_types("climate")
SPLIT = "climate.split_air_conditioner"
HEAT_PUMP = "climate.heat_pump"
THERMOSTAT = "climate.smart_thermostat"
RADIATOR = "climate.radiator_thermostat"
PORTABLE = "climate.portable_air_conditioner"
ENTITY_IDS = [f"climate.{type_id}" for type_id in CLIMATE_TYPES]
GROUND_FLOOR = [SPLIT, RADIATOR, PORTABLE, THERMOSTAT]


async def act(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    other: Home,
    service: str,
    entity_id: str,
    **data: Any,
) -> str | None:
    """A climate service through Home Assistant and on the independent twin; the error code."""
    return await call_both(hass, entry, other, "climate", service, {"entity_id": entity_id}, data)


# --- every device type --------------------------------------------------------------------------


async def test_every_climate_type_shows_the_twin(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    assert_registered_as_the_twin(hass, loaded_home, "climate", ENTITY_IDS)
    assert_same(hass, loaded_home, independent_twin(loaded_home), "climate")


async def test_a_state_that_is_not_a_mode_shows_unknown(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """An imported home may hold "unavailable", or an action Home Assistant does not know."""
    home = independent_twin(loaded_home)
    split = home.states[SPLIT]
    home.states[SPLIT] = replace(
        split, state="unavailable", attributes={**split.attributes, "hvac_action": "unavailable"}
    )
    loaded_home.runtime_data.replace(home)
    state = hass.states.get(SPLIT)
    assert state.state == "unknown"
    assert "hvac_action" not in state.attributes


async def test_temperatures_show_to_a_tenth_whatever_the_step(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """The step (0.5) is for the user interface; Home Assistant must not round 22.3 to it."""
    other = independent_twin(loaded_home)
    assert await act(hass, loaded_home, other, "set_temperature", SPLIT, temperature=22.3) is None
    assert shown(hass, SPLIT)["temperature"] == 22.3
    assert await act(hass, loaded_home, other, "set_temperature", SPLIT, temperature=22.36) is None
    assert shown(hass, SPLIT)["temperature"] == 22.4
    data = {"target_temp_low": 19.3, "target_temp_high": 23.7}
    assert await act(hass, loaded_home, other, "set_temperature", THERMOSTAT, **data) is None
    assert shown(hass, THERMOSTAT) | data == shown(hass, THERMOSTAT)
    assert shown(hass, SPLIT)["target_temp_step"] == 0.5


# --- services -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "expected"),
    [
        (SPLIT, "set_hvac_mode", {"hvac_mode": "cool"}, {"state": "cool", "hvac_action": "idle"}),
        (
            SPLIT,
            "set_hvac_mode",
            {"hvac_mode": "heat"},
            {"state": "heat", "hvac_action": "heating"},
        ),
        (HEAT_PUMP, "set_hvac_mode", {"hvac_mode": "off"}, {"state": "off", "hvac_action": "off"}),
        (
            HEAT_PUMP,
            "set_temperature",
            {"temperature": "18.5", "hvac_mode": "cool"},
            {"state": "cool", "temperature": 18.5, "hvac_action": "cooling"},
        ),
        (
            THERMOSTAT,
            "set_temperature",
            {"target_temp_low": 18, "target_temp_high": 25.5},
            {"target_temp_low": 18.0, "target_temp_high": 25.5, "temperature": None},
        ),
        (
            THERMOSTAT,
            "set_temperature",
            {"temperature": 22, "hvac_mode": "heat"},
            {"state": "heat", "temperature": 22.0, "target_temp_low": None},
        ),
        (
            THERMOSTAT,
            "set_hvac_mode",
            {"hvac_mode": "heat"},
            {"state": "heat", "temperature": 20.0, "target_temp_high": None},
        ),
        (
            RADIATOR,
            "set_temperature",
            {"temperature": 5},
            {"temperature": 5.0, "hvac_action": "idle"},
        ),
        (PORTABLE, "set_humidity", {"humidity": 60}, {"humidity": 60}),
        (PORTABLE, "set_humidity", {"humidity": "40"}, {"humidity": 40}),
        (SPLIT, "set_fan_mode", {"fan_mode": "quiet"}, {"fan_mode": "quiet"}),
        (HEAT_PUMP, "set_fan_mode", {"fan_mode": 3}, {"fan_mode": "3"}),
        (SPLIT, "set_swing_mode", {"swing_mode": "both"}, {"swing_mode": "both"}),
        (
            HEAT_PUMP,
            "set_swing_horizontal_mode",
            {"swing_horizontal_mode": "split"},
            {"swing_horizontal_mode": "split"},
        ),
        (THERMOSTAT, "set_preset_mode", {"preset_mode": "away"}, {"preset_mode": "away"}),
        (SPLIT, "turn_on", {}, {"state": "heat", "hvac_action": "heating"}),
        (HEAT_PUMP, "turn_off", {}, {"state": "off", "hvac_action": "off"}),
        (SPLIT, "toggle", {}, {"state": "heat"}),
        (RADIATOR, "toggle", {}, {"state": "off", "hvac_action": "off"}),
        (PORTABLE, "turn_on", {}, {"state": "cool", "hvac_action": "cooling"}),
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
        (SPLIT, "set_hvac_mode", {"hvac_mode": "warm"}, "invalid_data"),
        (SPLIT, "set_hvac_mode", {}, "invalid_data"),
        (PORTABLE, "set_hvac_mode", {"hvac_mode": "heat"}, "validation_error"),
        (SPLIT, "set_temperature", {"temperature": 30.5}, "validation_error"),
        (SPLIT, "set_temperature", {"temperature": 15.9}, "validation_error"),
        (SPLIT, "set_temperature", {"temperature": "hot"}, "invalid_data"),
        (SPLIT, "set_temperature", {}, "invalid_data"),
        (SPLIT, "set_temperature", {"hvac_mode": "cool"}, "invalid_data"),
        (THERMOSTAT, "set_temperature", {"target_temp_low": 20}, "invalid_data"),
        (SPLIT, "set_temperature", {"temperature": 22, "hvac_mode": "warm"}, "invalid_data"),
        (
            THERMOSTAT,
            "set_temperature",
            {"target_temp_low": 25, "target_temp_high": 20},
            "validation_error",
        ),
        (
            THERMOSTAT,
            "set_temperature",
            {"target_temp_low": 5, "target_temp_high": 20},
            "validation_error",
        ),
        (
            SPLIT,
            "set_temperature",
            {"target_temp_low": 20, "target_temp_high": 24},
            "validation_error",
        ),
        (THERMOSTAT, "set_temperature", {"temperature": 22}, "validation_error"),
        (
            SPLIT,
            "set_temperature",
            {"temperature": 22, "hvac_mode": "heat_cool"},
            "validation_error",
        ),
        (SPLIT, "set_humidity", {"humidity": 50}, "service_not_supported"),
        (PORTABLE, "set_humidity", {"humidity": 90}, "validation_error"),
        (PORTABLE, "set_humidity", {"humidity": "wet"}, "invalid_data"),
        (SPLIT, "set_fan_mode", {"fan_mode": "turbo"}, "validation_error"),
        (RADIATOR, "set_fan_mode", {"fan_mode": "auto"}, "service_not_supported"),
        (SPLIT, "set_fan_mode", {"fan_mode": None}, "invalid_data"),
        (SPLIT, "set_preset_mode", {"preset_mode": "eco"}, "service_not_supported"),
        (THERMOSTAT, "set_preset_mode", {"preset_mode": "vacation"}, "validation_error"),
        (THERMOSTAT, "set_swing_mode", {"swing_mode": "both"}, "service_not_supported"),
        (SPLIT, "set_swing_mode", {"swing_mode": "swing"}, "validation_error"),
        (
            SPLIT,
            "set_swing_horizontal_mode",
            {"swing_horizontal_mode": "auto"},
            "service_not_supported",
        ),
        (
            HEAT_PUMP,
            "set_swing_horizontal_mode",
            {"swing_horizontal_mode": "left"},
            "validation_error",
        ),
        (SPLIT, "turn_on", {"hvac_mode": "heat"}, "invalid_data"),
        (SPLIT, "set_fan_mode", {"fan_mode": "auto", "speed": 3}, "invalid_data"),
        (SPLIT, "set_aux_heat", {"aux_heat": True}, "service_not_found"),
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
    """The twin's choice, not Home Assistant's fallback (heat_cool where a device has it)."""
    other = independent_twin(loaded_home)
    for entity_id, mode in [(HEAT_PUMP, "cool"), (THERMOSTAT, "heat")]:
        for service, after in [
            ("set_hvac_mode", mode),
            ("turn_off", "off"),
            ("turn_on", mode),
            ("toggle", "off"),
            ("toggle", mode),
        ]:
            data = {"hvac_mode": mode} if service == "set_hvac_mode" else {}
            assert await act(hass, loaded_home, other, service, entity_id, **data) is None
            assert hass.states.get(entity_id).state == after


async def test_a_floor_target_skips_devices_without_the_feature(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Only the thermostat has presets, the radiator has no fan; the heat pump is upstairs."""
    other = independent_twin(loaded_home)
    floor = {"floor_id": "ground"}
    for service, data in [
        ("set_preset_mode", {"preset_mode": "eco"}),
        ("set_fan_mode", {"fan_mode": "auto"}),
        ("turn_off", {}),
    ]:
        assert await call_both(hass, loaded_home, other, "climate", service, floor, data) is None
    assert shown(hass, THERMOSTAT)["preset_mode"] == "eco"
    assert [hass.states.get(e).state for e in GROUND_FLOOR] == ["off"] * 4
    assert await call_both(hass, loaded_home, other, "climate", "turn_on", floor, {}) is None
    assert [hass.states.get(e).state for e in GROUND_FLOOR] == ["heat", "heat", "cool", "heat_cool"]
    assert hass.states.get(HEAT_PUMP).state == "heat"


async def test_each_targeted_device_takes_the_call_on_its_own(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    """Home Assistant calls each entity of a floor separately: those that accept the data change
    even when another refuses it (the twin alone refuses the whole call)."""
    target = ha_target(loaded_home, {"floor_id": "ground"})
    with pytest.raises(ServiceValidationError):
        await hass.services.async_call(
            "climate", "set_temperature", {"temperature": 16.5}, blocking=True, target=target
        )
    # The portable's range starts at 17; the thermostat in heat_cool takes only a range.
    assert [shown(hass, e)["temperature"] for e in GROUND_FLOOR] == [
        16.5,
        16.5,
        24.0,
        None,
    ]
    twin = loaded_home.runtime_data.home
    for entity_id in ENTITY_IDS:
        state, mine = hass.states.get(entity_id), twin.states[entity_id]
        assert as_json(state.state, state.attributes) == as_json(mine.state, mine.attributes)


async def test_room_physics_reaches_home_assistant(
    hass: HomeAssistant, loaded_home: MockConfigEntry
) -> None:
    other = independent_twin(loaded_home)
    data = {"temperature": 28, "hvac_mode": "heat"}
    assert await act(hass, loaded_home, other, "set_temperature", SPLIT, **data) is None
    before = shown(hass, SPLIT)["current_temperature"]
    loaded_home.runtime_data.advance(1800)
    other.advance(1800)
    await hass.async_block_till_done()
    assert shown(hass, SPLIT)["current_temperature"] > before
    assert_same(hass, loaded_home, other, "climate")


# --- many random calls --------------------------------------------------------------------------

MODES = ["off", "heat", "cool", "heat_cool", "auto", "dry", "fan_only", "warm", 3]
# Every option of the catalog's devices, and two that none has.
OPTIONS = {
    key: [
        *sorted(
            {
                option
                for device_type in CATALOG.values()
                for spec in device_type.entities
                for option in spec.capabilities.get(f"{key}s") or ()
            }
        ),
        "bogus",
        1,
    ]
    for key in ("fan_mode", "preset_mode", "swing_mode", "swing_horizontal_mode")
}


def temperature(rng: random.Random) -> Any:
    """Mostly a number within or near the devices' limits, sometimes text or junk."""
    return rng.choice(
        [
            round(rng.uniform(3.0, 38.0), rng.randint(0, 2)),
            round(rng.uniform(15.0, 28.0), 1),
            rng.randint(4, 36),
            str(round(rng.uniform(15.0, 28.0), 1)),
            "hot",
        ]
    )


def temperature_data(rng: random.Random) -> dict[str, Any]:
    """A single target, a range (sometimes reversed or half), both, or none; maybe a mode."""
    shape = rng.choice(["single", "single", "range", "range", "both", "low", "none"])
    data: dict[str, Any] = {}
    if shape in ("single", "both"):
        data["temperature"] = temperature(rng)
    if shape in ("range", "both"):
        low = round(rng.uniform(6.0, 30.0), 1)
        data["target_temp_low"] = low
        data["target_temp_high"] = round(low + rng.uniform(-2.0, 8.0), 1)
    if shape == "low":
        data["target_temp_low"] = temperature(rng)
    if shape == "none" or rng.random() < 0.3:
        data["hvac_mode"] = rng.choice(MODES)
    return data


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One climate service with data that is valid more often than not."""
    service = rng.choice(
        [
            "set_hvac_mode",
            "set_temperature",
            "set_temperature",
            "set_humidity",
            "set_fan_mode",
            "set_preset_mode",
            "set_swing_mode",
            "set_swing_horizontal_mode",
            "turn_on",
            "turn_off",
            "toggle",
        ]
    )
    data: dict[str, Any]
    if service == "set_hvac_mode":
        data = {"hvac_mode": rng.choice(MODES)}
    elif service == "set_temperature":
        data = temperature_data(rng)
    elif service == "set_humidity":
        data = {"humidity": rng.choice([rng.randint(20, 95), str(rng.randint(30, 90)), "wet"])}
    elif service.startswith("set_"):
        key = service.removeprefix("set_")
        data = {key: rng.choice(OPTIONS[key])}
    else:
        data = {}
    if rng.random() < 0.04:
        data["speed"] = 1
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
    assert set(outcomes) == {None, "invalid_data", "validation_error", "service_not_supported"}
    start = independent_twin(loaded_home)
    assert all(other.states[e] != start.states[e] for e in ENTITY_IDS)

"""Fans: Home Assistant's fan services act on the twin, and HA shows the twin.

Every call goes through Home Assistant and, unchanged, to an independent twin; both must accept it
or refuse it alike, and Home Assistant's state, the integration's twin and the independent twin
must agree, types included. Home Assistant's FanEntity does increase_speed, decrease_speed and
toggle itself (through set_percentage, turn_on and turn_off), so these tests also hold the twin's
port of that arithmetic to Home Assistant's.
"""

from __future__ import annotations

import random
from typing import Any

import probatio
import pytest
from homeassistant.components.fan import NotValidPresetModeError
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.home import Home

from .parity import assert_same, call_both, catalog_types, independent_twin

FAN_TYPES = catalog_types("fan")
CEILING = "fan.ceiling_fan_with_light"
TOWER = "fan.tower_fan"
PEDESTAL = "fan.pedestal_fan"
EXHAUST = "fan.bathroom_exhaust_fan"
PURIFIER = "fan.air_purifier"
FANS = [CEILING, TOWER, PEDESTAL, EXHAUST, PURIFIER]


class Fans:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A fan service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "fan", service, target, data)

    def shown(self, entity_id: str) -> dict[str, Any]:
        """The state and attributes Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return {"state": state.state, **state.attributes}


@pytest.fixture
async def fans(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Fans:
    """The loaded home's fans and their independent twin."""
    return Fans(hass, loaded_home)


# --- every device type --------------------------------------------------------------------------


async def test_every_fan_type_is_a_fan_entity(hass: HomeAssistant, fans: Fans) -> None:
    twin = fans.entry.runtime_data.home
    assert sorted(hass.states.async_entity_ids("fan")) == sorted(FANS)
    types = {twin.devices[twin.entities[e].device_id].device_type for e in FANS}
    assert sorted(types) == FAN_TYPES
    assert_same(hass, fans.entry, fans.other, "fan")


@pytest.mark.parametrize(
    ("entity_id", "speeds"), [(CEILING, 6), (TOWER, 12), (PEDESTAL, 4), (PURIFIER, 3)]
)
async def test_speed_count_gives_the_twins_percentage_step(
    fans: Fans, entity_id: str, speeds: int
) -> None:
    step = fans.entry.runtime_data.home.entities[entity_id].capabilities["percentage_step"]
    assert fans.shown(entity_id)["percentage_step"] == step == 100 / speeds


# --- every service, good and bad data -----------------------------------------------------------

SERVICE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("turn_on", {}),
    ("turn_on", {"percentage": 40}),
    ("turn_on", {"percentage": "75"}),
    ("turn_on", {"preset_mode": "sleep"}),
    ("turn_on", {"percentage": 20, "preset_mode": "auto"}),
    ("turn_on", {"percentage": 101}),
    ("turn_on", {"preset_mode": "turbo"}),
    ("turn_on", {"brightness": 10}),
    ("turn_off", {}),
    ("turn_off", {"percentage": 0}),
    ("toggle", {}),
    ("toggle", {}),
    ("set_percentage", {"percentage": 33}),
    ("set_percentage", {"percentage": 0}),
    ("set_percentage", {"percentage": -1}),
    ("set_percentage", {"percentage": "fast"}),
    ("set_percentage", {}),
    ("increase_speed", {}),
    ("increase_speed", {"percentage_step": 30}),
    ("decrease_speed", {}),
    ("decrease_speed", {"percentage_step": 100}),
    ("decrease_speed", {"percentage_step": 101}),
    ("set_preset_mode", {"preset_mode": "natural"}),
    ("set_preset_mode", {"preset_mode": "sleep"}),
    ("set_preset_mode", {"preset_mode": "turbo"}),
    ("set_preset_mode", {}),
    ("oscillate", {"oscillating": True}),
    ("oscillate", {"oscillating": "off"}),
    ("oscillate", {"oscillating": "sideways"}),
    ("set_direction", {"direction": "reverse"}),
    ("set_direction", {"direction": "forward"}),
    ("set_direction", {"direction": "sideways"}),
]


async def test_every_service_on_every_fan(fans: Fans) -> None:
    for service, data in SERVICE_CALLS:
        for entity_id in FANS:
            # From off and from running, so each call meets both.
            for start in ({}, {"percentage": 50}):
                await fans.call("turn_on", entity_id, **start)
                await fans.call(service, entity_id, **data)
                await fans.call("turn_off", entity_id)


async def test_speeds_step_as_home_assistant_counts_them(fans: Fans) -> None:
    await fans.call("set_percentage", TOWER, percentage=50)
    await fans.call("increase_speed", TOWER)
    assert fans.shown(TOWER)["percentage"] == 58  # speed 7 of 12
    await fans.call("decrease_speed", TOWER)
    assert fans.shown(TOWER)["percentage"] == 50
    await fans.call("increase_speed", TOWER, percentage_step=45)
    assert fans.shown(TOWER)["percentage"] == 95
    await fans.call("increase_speed", TOWER, percentage_step=45)
    assert fans.shown(TOWER)["percentage"] == 100

    await fans.call("set_percentage", PEDESTAL, percentage=25)
    await fans.call("decrease_speed", PEDESTAL)
    assert (fans.shown(PEDESTAL)["state"], fans.shown(PEDESTAL)["percentage"]) == ("off", 0)
    await fans.call("increase_speed", PEDESTAL)
    assert (fans.shown(PEDESTAL)["state"], fans.shown(PEDESTAL)["percentage"]) == ("on", 25)


async def test_presets_and_resuming(fans: Fans) -> None:
    def running(entity_id: str) -> tuple[str, int | None, str | None]:
        shown = fans.shown(entity_id)
        return shown["state"], shown["percentage"], shown["preset_mode"]

    await fans.call("set_preset_mode", TOWER, preset_mode="sleep")
    assert running(TOWER) == ("on", None, "sleep")
    await fans.call("toggle", TOWER)
    assert running(TOWER) == ("off", 0, None)
    await fans.call("toggle", TOWER)
    assert running(TOWER) == ("on", None, "sleep")

    await fans.call("turn_on", PURIFIER, percentage=67)
    await fans.call("turn_off", PURIFIER)
    await fans.call("turn_on", PURIFIER)
    assert running(PURIFIER) == ("on", 67, None)
    await fans.call("turn_on", PURIFIER, preset_mode="auto")
    assert running(PURIFIER) == ("on", None, "auto")
    await fans.call("set_percentage", PURIFIER, percentage=0)
    assert running(PURIFIER) == ("off", 0, None)


async def test_direction_oscillation_and_a_fan_without_speeds(fans: Fans) -> None:
    await fans.call("set_direction", CEILING, direction="reverse")
    assert fans.shown(CEILING)["direction"] == "reverse"
    await fans.call("oscillate", PEDESTAL, oscillating="on")
    assert fans.shown(PEDESTAL)["oscillating"] is True
    # A percentage means nothing to an on/off fan: it just turns on.
    await fans.call("turn_on", EXHAUST, percentage=30)
    assert fans.shown(EXHAUST)["state"] == "on"
    assert "percentage" not in fans.shown(EXHAUST)


REFUSED_CALLS: list[tuple[str, dict[str, Any], str, str]] = [
    ("set_preset_mode", {"preset_mode": "turbo"}, TOWER, "validation_error"),
    ("turn_on", {"preset_mode": "breeze"}, CEILING, "validation_error"),
    ("turn_on", {"preset_mode": "auto"}, EXHAUST, "validation_error"),
    ("set_direction", {"direction": "up"}, CEILING, "validation_error"),
    ("set_percentage", {"percentage": 140}, PEDESTAL, "invalid_data"),
    ("increase_speed", {"percentage_step": -1}, PEDESTAL, "invalid_data"),
    ("oscillate", {"oscillating": "maybe"}, PEDESTAL, "invalid_data"),
    ("turn_off", {"speed": "low"}, PEDESTAL, "invalid_data"),
    ("oscillate", {"oscillating": True}, CEILING, "service_not_supported"),
    ("set_direction", {"direction": "reverse"}, TOWER, "service_not_supported"),
    ("increase_speed", {}, EXHAUST, "service_not_supported"),
    ("set_preset_mode", {"preset_mode": "auto"}, EXHAUST, "service_not_supported"),
]


async def test_refused_calls_change_nothing(hass: HomeAssistant, fans: Fans) -> None:
    for service, data, entity_id, code in REFUSED_CALLS:
        await fans.call("turn_on", entity_id)
        before = hass.states.get(entity_id)
        assert await fans.call(service, entity_id, **data) == code, (service, data, entity_id)
        assert hass.states.get(entity_id) is before


async def test_an_unknown_preset_is_home_assistants_own_error(
    hass: HomeAssistant, fans: Fans
) -> None:
    with pytest.raises(NotValidPresetModeError):
        await hass.services.async_call(
            "fan", "set_preset_mode", {"entity_id": TOWER, "preset_mode": "turbo"}, blocking=True
        )


async def test_set_direction_without_a_direction_is_refused(
    hass: HomeAssistant, fans: Fans
) -> None:
    """Home Assistant's schema lets it through (its FanEntity would fail with a TypeError); the
    entity hands it to the twin, which says that direction is required: invalid data, as Home
    Assistant's vol.Invalid."""
    with pytest.raises(probatio.Invalid, match=r"required key not provided.*direction"):
        await hass.services.async_call(
            "fan", "set_direction", {"entity_id": CEILING}, blocking=True
        )
    assert fans.shown(CEILING)["direction"] == "forward"


async def test_a_call_on_every_fan(hass: HomeAssistant, fans: Fans) -> None:
    target = {"entity_id": FANS}
    assert await call_both(hass, fans.entry, fans.other, "fan", "turn_on", target, {}) is None
    assert all(fans.shown(entity_id)["state"] == "on" for entity_id in FANS)


# --- many random calls --------------------------------------------------------------------------


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A fan service and data, valid or not."""
    percentage = rng.choice([0, 1, 17, 33, 50, 66, 99, 100, -5, 150, "42", "fast"])
    preset = rng.choice(["natural", "sleep", "auto", "turbo"])
    service = rng.choice(
        [
            "turn_on",
            "turn_off",
            "toggle",
            "set_percentage",
            "increase_speed",
            "decrease_speed",
            "set_preset_mode",
            "oscillate",
            "set_direction",
        ]
    )
    data: dict[str, Any] = {}
    if service == "turn_on":
        data = rng.choice(
            [{}, {"percentage": percentage}, {"preset_mode": preset}, {"percentage": 10}]
        )
    elif service == "set_percentage":
        data = {"percentage": percentage}
    elif service in ("increase_speed", "decrease_speed"):
        data = rng.choice([{}, {}, {"percentage_step": rng.choice([5, 25, 60, 120])}])
    elif service == "set_preset_mode":
        data = {"preset_mode": preset}
    elif service == "oscillate":
        data = {"oscillating": rng.choice([True, False, "on", "off", "maybe"])}
    elif service == "set_direction":
        data = {"direction": rng.choice(["forward", "reverse", "up"])}
    elif rng.random() < 0.1:
        data = {"percentage": 50}  # no such field for turn_off and toggle
    return service, data


async def test_random_calls_keep_home_assistant_and_the_twins_equal(fans: Fans) -> None:
    rng = random.Random(20261129)
    refused = 0
    for _ in range(400):
        service, data = random_call(rng)
        refused += await fans.call(service, rng.choice(FANS), **data) is not None
    assert 40 < refused < 300  # both accepted and refused calls were tried

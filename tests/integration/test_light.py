"""Lights: Home Assistant's light service layer in front of the twin ends where the twin alone does.

Home Assistant validates and normalises a call (brightness_pct, steps, profiles, colour names,
colours converted into a mode the light supports) and hands the result to the entity, which
passes it to the twin, which normalises it once more. Every call also goes, unchanged, to an
independent twin; both must accept it or refuse it alike, and then Home Assistant's state, the
integration's twin and the independent twin agree, down to what each light remembers.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.catalog import load_catalog
from twin.domains.light import TURN_OFF_SCHEMA, TURN_ON_SCHEMA
from twin.errors import ServiceValidationError
from twin.home import Home, ServiceResult

from .conftest import every_device_home, set_up_home
from .parity import assert_same, call_both, independent_twin

LIGHTS = sorted(e for e in every_device_home().entities if e.startswith("light."))
# Home Assistant's own colour maths fails on these before the entity is reached; the twin refuses
# the same calls with a validation error.
HA_MATHS_ERRORS = (ZeroDivisionError, OverflowError, ValueError)


class Lights:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.twin: Home = entry.runtime_data.home
        self.other: Home = independent_twin(entry)

    async def call(
        self, service: str, entity_id: str, data: dict[str, Any] | None = None
    ) -> str | None:
        """A light service both ways; None if accepted, else the (agreed) error code."""
        data = data or {}
        target = {"entity_id": entity_id}
        try:
            return await call_both(
                self.hass, self.entry, self.other, "light", service, target, data
            )
        except HA_MATHS_ERRORS:
            with pytest.raises(ServiceValidationError):
                self.other.call_service("light", service, data, target)
            assert_same(self.hass, self.entry, self.other, "light")
            return ServiceValidationError.code

    def shown(self, entity_id: str) -> dict[str, Any]:
        """The attributes Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return dict(state.attributes)

    def state(self, entity_id: str) -> str:
        """The state Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return state.state


@pytest.fixture
async def lights(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Lights:
    """The loaded home's lights and their independent twin."""
    return Lights(hass, loaded_home)


# --- every light type ---------------------------------------------------------------------------


async def test_the_home_has_a_light_of_every_catalog_type(lights: Lights) -> None:
    light_specs = [
        spec for t in load_catalog().values() for spec in t.entities if spec.domain == "light"
    ]
    assert len(LIGHTS) == len(light_specs) == 11
    for entity_id in LIGHTS:
        assert lights.state(entity_id) == "off"
    assert_same(lights.hass, lights.entry, lights.other, "light")


async def test_capabilities_come_from_the_twin(lights: Lights) -> None:
    shown = lights.shown("light.color_bulb")
    assert shown["supported_color_modes"] == ["color_temp", "hs"]
    assert (shown["min_color_temp_kelvin"], shown["max_color_temp_kelvin"]) == (1500, 9000)
    assert shown["effect_list"] == ["off", "colorloop", "pulse", "candle", "flame"]
    assert shown["supported_features"] == 36  # effect | transition
    shown = lights.shown("light.rgbcct_led_controller")
    assert "min_color_temp_kelvin" not in shown
    assert shown["supported_color_modes"] == ["rgbww"]
    assert lights.shown("light.onoff_light")["supported_features"] == 0


@pytest.mark.parametrize("entity_id", LIGHTS)
async def test_every_light_turns_on_toggles_and_off(lights: Lights, entity_id: str) -> None:
    assert await lights.call("turn_on", entity_id) is None
    assert lights.state(entity_id) == "on"
    assert await lights.call("toggle", entity_id) is None
    assert lights.state(entity_id) == "off"
    assert await lights.call("toggle", entity_id, {"brightness": 60}) is None
    assert lights.state(entity_id) == "on"
    assert await lights.call("turn_off", entity_id, {"transition": 2}) is None
    assert lights.state(entity_id) == "off"


VALID: list[dict[str, Any]] = [
    {"brightness": 77},
    {"brightness": "128"},
    {"brightness": 300},
    {"brightness": 0},
    {"brightness_pct": 33.3},
    {"brightness_pct": 0.1},
    {"brightness_step": 40},
    {"brightness_step": -300},
    {"brightness_step_pct": -25},
    {"brightness_step_pct": 150},
    {"brightness_step": -10, "color_name": "red"},
    {"color_temp_kelvin": 1000},
    {"color_temp_kelvin": 3000},
    {"color_temp_kelvin": 20000},
    {"color_temp_kelvin": 4000, "brightness": 40},
    {"hs_color": [200, 60]},
    {"hs_color": (359.99, 100)},
    # Colours whose rgb differs when made from the rounded colour Home Assistant shows.
    {"hs_color": (135.53797716992517, 32.545598008014075)},
    {"xy_color": (0.8006977780689224, 0.1942789603079873)},
    {"rgb_color": [255, 60, 0]},
    {"rgbw_color": [10, 20, 30, 200]},
    {"rgbww_color": [0, 0, 0, 255, 10]},
    {"rgbww_color": [255, 0, 40, 0, 0]},
    {"xy_color": [0.7, 0.29]},
    {"xy_color": [0.5, 0.19]},  # about -22 million K by McCamy's formula
    {"xy_color": [0.3, 0.0]},
    {"color_name": "dark orange"},
    {"color_name": "no such colour"},
    {"profile": "relax"},
    {"profile": "concentrate", "brightness": 12},
    {"profile": "no such profile"},
    {"white": True},
    {"white": 180},
    {"white": 0},
    {"white": 90, "brightness": 30},
    {"effect": "colorloop"},
    {"effect": "off"},
    {"flash": "short"},
    {"flash": "long", "brightness": 5},
    {"transition": 10000, "hs_color": [10, 10]},
]


@pytest.mark.parametrize("entity_id", LIGHTS)
async def test_valid_calls_from_off_and_from_on(lights: Lights, entity_id: str) -> None:
    for data in VALID:
        await lights.call("turn_on", entity_id, data)
        await lights.call("turn_on", entity_id, {"brightness": 100, "effect": "off"})
        await lights.call("turn_on", entity_id, data)
        await lights.call("toggle", entity_id, data)
        await lights.call("toggle", entity_id, data)
        assert await lights.call("turn_off", entity_id, {"flash": "long"}) is None


INVALID: list[dict[str, Any]] = [
    {"brightness_pct": 140},
    {"brightness_pct": -1},
    {"brightness": "bright"},
    {"brightness": 10, "brightness_pct": 10},
    {"color_temp_kelvin": -5},
    {"hs_color": [400, 10]},
    {"hs_color": [10]},
    {"rgb_color": [256, 0, 0]},
    {"rgb_color": [1, 2]},
    {"rgbw_color": [1, 2, 3]},
    {"rgbww_color": [1, 2, 3, 4, 300]},
    {"xy_color": [1.2, 0.3]},
    {"hs_color": [10, 10], "rgb_color": [1, 2, 3]},
    {"white": 300, "hs_color": [1, 1]},
    {"flash": "medium"},
    {"effect": None},
    {"colour": "red"},
]


@pytest.mark.parametrize("entity_id", LIGHTS)
async def test_invalid_calls_are_refused_and_change_nothing(lights: Lights, entity_id: str) -> None:
    assert await lights.call("turn_on", entity_id, {"brightness": 99}) is None
    before = lights.hass.states.get(entity_id)
    for data in INVALID:
        assert await lights.call("turn_on", entity_id, data) == "invalid_data", data
        assert await lights.call("toggle", entity_id, data) == "invalid_data", data
    for data in [{"flash": "medium"}, {"transition": "slow"}, {"brightness": 10}]:
        assert await lights.call("turn_off", entity_id, data) == "invalid_data", data
    assert lights.hass.states.get(entity_id) == before


@pytest.mark.parametrize(
    ("entity_id", "data"),
    [
        ("light.color_bulb", {"effect": "disco"}),
        ("light.rgbcct_led_controller", {"color_temp_kelvin": 0}),
        ("light.color_ambiance_bulb", {"xy_color": [1.0, 5e-324]}),
        ("light.color_bulb", {"xy_color": [1.0, 5e-324]}),
        ("light.tunable_white_bulb", {"xy_color": [0.5, 0.1858]}),
    ],
)
async def test_calls_the_light_cannot_take_are_refused(
    lights: Lights, entity_id: str, data: dict[str, Any]
) -> None:
    assert await lights.call("turn_on", entity_id, data) == "validation_error"
    assert lights.state(entity_id) == "off"


async def test_normalised_values_reach_the_twin(lights: Lights) -> None:
    await lights.call("turn_on", "light.dimmable_bulb", {"brightness_pct": 50})
    assert lights.twin.states["light.dimmable_bulb"].attributes["brightness"] == 128
    await lights.call("turn_on", "light.rgb_light_bars", {"color_name": "red"})
    assert lights.shown("light.rgb_light_bars")["rgb_color"] == (255, 0, 0)
    # Beyond the warmest white Home Assistant makes a warm channel past 255: it stays at full.
    await lights.call("turn_on", "light.rgbcct_led_controller", {"color_temp_kelvin": 1000})
    assert lights.shown("light.rgbcct_led_controller")["rgbww_color"] == (0, 0, 0, 0, 255)
    await lights.call("turn_on", "light.ceiling_panel", {"xy_color": [0.5, 0.19]})
    assert lights.shown("light.ceiling_panel")["color_temp_kelvin"] == 2700
    await lights.call("turn_on", "light.color_white_bulb", {"white": True})
    assert lights.shown("light.color_white_bulb")["brightness"] == 255
    await lights.call("turn_on", "light.color_bulb", {"effect": "candle"})
    assert lights.shown("light.color_bulb")["effect"] == "candle"


async def test_a_light_that_starts_on_steps_from_what_it_shows(hass: HomeAssistant) -> None:
    home = every_device_home()
    bulb = "light.color_bulb"
    home.call_service(
        "light", "turn_on", {"hs_color": [30.5, 40.25], "brightness": 120}, {"entity_id": bulb}
    )
    home.states[bulb] = replace(home.states[bulb], hidden={})  # as an imported home has it
    entry = await set_up_home(hass, home)
    lights = Lights(hass, entry)
    assert_same(hass, entry, lights.other, "light")
    assert await lights.call("turn_on", bulb, {"brightness_step": 10}) is None
    assert lights.shown(bulb)["brightness"] == 130
    assert lights.shown(bulb)["hs_color"] == (30.5, 40.25)


# --- random calls -------------------------------------------------------------------------------


def random_call(rng: random.Random, effects: list[str]) -> tuple[str, dict[str, Any]]:
    """A random light call, valid or not, mixing every kind of parameter."""
    service = rng.choices(["turn_on", "toggle", "turn_off"], [70, 15, 15])[0]
    data: dict[str, Any] = {}
    if rng.random() < 0.25:
        data["transition"] = rng.choice([0, 1.5, 10000])
    if rng.random() < 0.1:
        data["flash"] = rng.choice(["short", "long", "medium"])
    if service == "turn_off":
        return service, data
    brightness = rng.choice(
        [
            None,
            ("brightness", rng.choice([-5, 0, 1, 77, 255, 300])),
            ("brightness_pct", rng.choice([0, 0.1, 33.3, 50, 100, 140])),
            ("brightness_step", rng.choice([-300, -60, -1, 1, 40, 300])),
            ("brightness_step_pct", rng.choice([-100, -25, -0.4, 10, 60, 150])),
        ]
    )
    if brightness is not None:
        data[brightness[0]] = brightness[1]
    color = rng.choice(
        [
            None,
            None,
            ("color_temp_kelvin", rng.choice([0, 1000, 1500, 2202, 2700, 4000, 6535, 9000])),
            ("color_temp_kelvin", rng.randint(1000, 12000)),
            ("hs_color", (rng.uniform(0, 360), rng.uniform(0, 100))),
            ("rgb_color", tuple(rng.randint(0, 255) for _ in range(3))),
            ("rgbw_color", tuple(rng.randint(0, 255) for _ in range(4))),
            ("rgbww_color", tuple(rng.randint(0, 255) for _ in range(5))),
            ("xy_color", (rng.uniform(0, 1), rng.uniform(0, 1))),
            ("xy_color", rng.choice([(0.3, 0.0), (1.0, 5e-324), (0.5, 0.1858), (0.5, 0.19)])),
            ("xy_color", (1.2, 0.3)),
            ("color_name", rng.choice(["red", "Dark Orange", "nope", "white", "navy"])),
            ("profile", rng.choice(["relax", "concentrate", "energize", "reading", "none"])),
            ("white", rng.choice([True, 0, 1, 180, 255])),
        ]
    )
    if color is not None:
        data[color[0]] = color[1]
    if rng.random() < 0.2:
        data["effect"] = rng.choice([*effects, "off", "nonsense"])
    return service, data


@pytest.mark.parametrize("seed", range(4))
async def test_random_calls_agree(lights: Lights, seed: int) -> None:
    """200 random calls over every light; what reaches the twin is already in its normal form."""
    reached: list[tuple[str, dict[str, Any]]] = []
    call_service = lights.twin.call_service

    def recording(
        domain: str, service: str, data: dict[str, Any], target: dict[str, Any]
    ) -> ServiceResult:
        reached.append((service, dict(data)))
        return call_service(domain, service, data, target)

    lights.twin.call_service = recording  # type: ignore[method-assign]
    rng = random.Random(seed)
    effects = {
        entity_id: lights.twin.entities[entity_id].capabilities.get("effect_list") or ["off"]
        for entity_id in LIGHTS
    }
    outcomes: dict[str | None, int] = {}
    for _ in range(200):
        entity_id = rng.choice(LIGHTS)
        service, data = random_call(rng, effects[entity_id])
        outcome = await lights.call(service, entity_id, data)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes[None] > 100  # most calls are valid, so the lights go through many states
    assert outcomes["invalid_data"] > 5
    assert {service for service, _ in reached} == {"turn_on", "turn_off"}
    for service, data in reached:
        normal_form = TURN_ON_SCHEMA if service == "turn_on" else TURN_OFF_SCHEMA
        assert normal_form(dict(data)) == data

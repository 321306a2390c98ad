"""The light domain against Home Assistant's light platform: schema, normalisation, colour modes,
state attributes, and the bulb's memory. Expected colours were computed with Home Assistant's own
homeassistant.util.color."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin import color
from twin.catalog import load_catalog
from twin.errors import (
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceValidationError,
)
from twin.home import Home, ServiceResult
from twin.homefile import import_ha_snapshot
from twin.registry import EntityEntry

LIGHT_TYPES = sorted(
    type_id
    for type_id, device_type in load_catalog().items()
    if any(spec.domain == "light" for spec in device_type.entities)
)
COLOR_MODES = {"onoff", "brightness", "color_temp", "hs", "xy", "rgb", "rgbw", "rgbww", "white"}
STATE_KEYS = (
    "effect",
    "color_mode",
    "brightness",
    "color_temp_kelvin",
    "hs_color",
    "rgb_color",
    "xy_color",
    "rgbw_color",
    "rgbww_color",
)


def light_entity_ids(home: Home, type_id: str) -> list[str]:
    """The light entities of the device of type `type_id`."""
    return [
        entity_id
        for entity_id, entry in home.entities.items()
        if entry.device_id == type_id and entry.domain == "light"
    ]


@pytest.fixture
def home() -> Home:
    """One device of every catalog type with a light; its light is `light.<type id>[_light]`."""
    home = Home()
    for type_id in LIGHT_TYPES:
        load_catalog()[type_id].install(home, type_id, type_id)
    return home


def on(home: Home, entity_id: str | list[str], **data: Any) -> ServiceResult:
    """light.turn_on."""
    return home.call_service("light", "turn_on", data, {"entity_id": entity_id})


def off(home: Home, entity_id: str, **data: Any) -> ServiceResult:
    """light.turn_off."""
    return home.call_service("light", "turn_off", data, {"entity_id": entity_id})


def toggle(home: Home, entity_id: str, **data: Any) -> ServiceResult:
    """light.toggle."""
    return home.call_service("light", "toggle", data, {"entity_id": entity_id})


def shown(home: Home, entity_id: str) -> dict[str, Any]:
    """The state attributes Home Assistant's LightEntity computes (no capabilities)."""
    attributes = home.state(entity_id).attributes
    return {key: attributes[key] for key in STATE_KEYS if key in attributes}


# --- the catalog ------------------------------------------------------------------------------


def test_lights_yaml_offers_realistic_variety() -> None:
    lights = [t for t in load_catalog().values() if t.category == "light"]
    assert len(lights) >= 6
    modes = {m for t in lights for m in t.entities[0].capabilities["supported_color_modes"]}
    assert modes == COLOR_MODES
    for device_type in lights:
        assert device_type.models
        assert all(maker and model for maker, model in device_type.models)


@pytest.mark.parametrize("type_id", LIGHT_TYPES)
def test_catalog_lights_have_valid_capabilities(home: Home, type_id: str) -> None:
    """Home Assistant's rules: valid_supported_color_modes, capability_attributes."""
    for entity_id in light_entity_ids(home, type_id):
        entry = home.entities[entity_id]
        capabilities = entry.capabilities
        modes = capabilities["supported_color_modes"]
        assert modes == sorted(set(modes))
        assert set(modes) <= COLOR_MODES
        for alone in ("onoff", "brightness"):
            assert alone not in modes or modes == [alone]
        if "white" in modes:
            assert set(modes) & {"hs", "xy", "rgb", "rgbw", "rgbww"}
        has_kelvin = "color_temp" in modes
        assert ("min_color_temp_kelvin" in capabilities) is has_kelvin
        assert ("max_color_temp_kelvin" in capabilities) is has_kelvin
        if has_kelvin:
            assert (
                1000
                <= capabilities["min_color_temp_kelvin"]
                < capabilities["max_color_temp_kelvin"]
            )
        has_effect = bool(entry.supported_features & 4)
        assert ("effect_list" in capabilities) is has_effect
        if has_effect:
            assert "off" in capabilities["effect_list"]


@pytest.mark.parametrize("type_id", LIGHT_TYPES)
def test_catalog_lights_start_as_home_assistant_shows_an_off_light(
    home: Home, type_id: str
) -> None:
    for entity_id in light_entity_ids(home, type_id):
        before = home.state(entity_id)
        assert before.state == "off"
        assert off(home, entity_id).changed == ()
        assert home.state(entity_id).attributes == before.attributes
        assert set(shown(home, entity_id).values()) == {None}


# --- turning on and off -----------------------------------------------------------------------


def test_a_never_set_bulb_turns_on_warm_white_at_full_brightness(home: Home) -> None:
    on(home, "light.color_bulb")
    assert home.state("light.color_bulb").state == "on"
    assert shown(home, "light.color_bulb") == {
        "effect": "off",
        "color_mode": "color_temp",
        "brightness": 255,
        "color_temp_kelvin": 2700,
        "hs_color": (28.395, 65.723),
        "rgb_color": (255, 167, 87),
        "xy_color": (0.525, 0.388),
    }


@pytest.mark.parametrize(
    ("entity_id", "expected"),
    [
        ("light.onoff_light", {"color_mode": "onoff"}),
        ("light.dimmable_bulb", {"color_mode": "brightness", "brightness": 255}),
        (
            "light.rgbw_led_strip",
            {
                "effect": "off",
                "color_mode": "rgbw",
                "brightness": 255,
                "hs_color": (0.0, 0.0),
                "rgb_color": (255, 255, 255),
                "xy_color": (0.323, 0.329),
                "rgbw_color": (0, 0, 0, 255),
            },
        ),
        (
            "light.color_white_bulb",
            {
                "color_mode": "white",
                "brightness": 255,
                "hs_color": None,
                "rgb_color": None,
                "xy_color": None,
            },
        ),
    ],
)
def test_power_on_state_per_kind(home: Home, entity_id: str, expected: dict[str, Any]) -> None:
    on(home, entity_id)
    assert shown(home, entity_id) == expected


def test_turn_off_hides_state_attributes_and_keeps_capabilities(home: Home) -> None:
    on(home, "light.color_bulb", hs_color=[30, 50], brightness=100, effect="pulse")
    result = off(home, "light.color_bulb")
    state = home.state("light.color_bulb")
    assert result.changed == (state,)
    assert state.state == "off"
    assert set(shown(home, "light.color_bulb").values()) == {None}
    assert state.attributes["supported_color_modes"] == ["color_temp", "hs"]
    assert state.attributes["min_color_temp_kelvin"] == 1500
    assert state.attributes["effect_list"][0] == "off"
    assert state.attributes["friendly_name"] == "color_bulb"


def test_turn_on_restores_last_brightness_colour_and_effect(home: Home) -> None:
    on(home, "light.color_bulb", hs_color=[30, 50], brightness=100)
    on(home, "light.color_bulb", effect="candle")
    lit = shown(home, "light.color_bulb")
    off(home, "light.color_bulb")
    on(home, "light.color_bulb")
    assert shown(home, "light.color_bulb") == lit
    assert lit["brightness"] == 100
    assert lit["effect"] == "candle"


def test_colour_alone_keeps_brightness_and_brightness_alone_keeps_colour(home: Home) -> None:
    on(home, "light.color_bulb", brightness=40)
    off(home, "light.color_bulb")
    on(home, "light.color_bulb", hs_color=[240, 50])
    assert shown(home, "light.color_bulb")["brightness"] == 40
    on(home, "light.color_bulb", brightness=200)
    assert shown(home, "light.color_bulb")["hs_color"] == (240.0, 50.0)


def test_color_mode_follows_the_last_colour_set(home: Home) -> None:
    on(home, "light.color_bulb", hs_color=[30, 50])
    assert shown(home, "light.color_bulb") == {
        "effect": "off",
        "color_mode": "hs",
        "brightness": 255,
        "color_temp_kelvin": None,
        "hs_color": (30.0, 50.0),
        "rgb_color": (255, 191, 128),
        "xy_color": (0.466, 0.384),
    }
    on(home, "light.color_bulb", color_temp_kelvin=3000)
    attributes = shown(home, "light.color_bulb")
    assert attributes["color_mode"] == "color_temp"
    assert attributes["color_temp_kelvin"] == 3000
    assert attributes["hs_color"] == (27.825, 56.895)
    on(home, "light.color_bulb", brightness=10)
    assert shown(home, "light.color_bulb")["color_mode"] == "color_temp"


def test_turn_on_again_with_nothing_changes_nothing(home: Home) -> None:
    on(home, "light.dimmable_bulb", brightness=10)
    stamp = home.state("light.dimmable_bulb")
    home.now += 60
    assert on(home, "light.dimmable_bulb").changed == ()
    assert home.state("light.dimmable_bulb").last_updated == stamp.last_updated


def test_state_change_moves_last_changed(home: Home) -> None:
    home.now += 10
    on(home, "light.dimmable_bulb")
    state = home.state("light.dimmable_bulb")
    assert state.last_changed == state.last_updated == home.now
    home.now += 10
    on(home, "light.dimmable_bulb", brightness=3)
    state = home.state("light.dimmable_bulb")
    assert state.last_changed == home.now - 10
    assert state.last_updated == home.now


# --- brightness -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), (128, 128), ("77", 77), (127.9, 127), (255, 255), (256, 255), (10_000, 255)],
)
def test_brightness_is_coerced_and_clamped(home: Home, value: Any, expected: int) -> None:
    on(home, "light.dimmable_bulb", brightness=value)
    assert shown(home, "light.dimmable_bulb")["brightness"] == expected


@pytest.mark.parametrize("value", [0, -5, "0", 0.9])
def test_brightness_zero_or_below_turns_the_light_off(home: Home, value: Any) -> None:
    on(home, "light.dimmable_bulb", brightness=90)
    on(home, "light.dimmable_bulb", brightness=value)
    assert home.state("light.dimmable_bulb").state == "off"
    on(home, "light.dimmable_bulb")
    assert shown(home, "light.dimmable_bulb")["brightness"] == 90


@pytest.mark.parametrize(
    ("pct", "expected"), [(100, 255), (50, 128), (1, 3), ("20", 51), (0.3, 1), (99.9, 255)]
)
def test_brightness_pct_scales_to_255(home: Home, pct: Any, expected: int) -> None:
    on(home, "light.dimmable_bulb", brightness_pct=pct)
    assert shown(home, "light.dimmable_bulb")["brightness"] == expected


def test_brightness_pct_that_rounds_to_zero_turns_off(home: Home) -> None:
    on(home, "light.dimmable_bulb")
    on(home, "light.dimmable_bulb", brightness_pct=0.1)
    assert home.state("light.dimmable_bulb").state == "off"


@pytest.mark.parametrize("pct", [100.1, -1, 140])
def test_brightness_pct_out_of_range_is_an_error_not_a_clamp(home: Home, pct: float) -> None:
    with pytest.raises(InvalidServiceDataError, match=f"brightness_pct must be 0-100, got {pct}"):
        on(home, "light.dimmable_bulb", brightness_pct=pct)
    assert home.state("light.dimmable_bulb").state == "off"


@pytest.mark.parametrize(
    ("start", "step", "expected"),
    [(100, 10, 110), (100, -10, 90), (250, 10, 255), (100, 300, 255), (3, -2, 1)],
)
def test_brightness_step_from_on(home: Home, start: int, step: int, expected: int) -> None:
    on(home, "light.dimmable_bulb", brightness=start)
    on(home, "light.dimmable_bulb", brightness_step=step)
    assert shown(home, "light.dimmable_bulb")["brightness"] == expected


@pytest.mark.parametrize("step", [-3, -300])
def test_brightness_step_to_zero_turns_off(home: Home, step: int) -> None:
    on(home, "light.dimmable_bulb", brightness=3)
    on(home, "light.dimmable_bulb", brightness_step=step)
    assert home.state("light.dimmable_bulb").state == "off"


def test_brightness_step_from_off_starts_at_zero(home: Home) -> None:
    on(home, "light.dimmable_bulb", brightness=200)
    off(home, "light.dimmable_bulb")
    on(home, "light.dimmable_bulb", brightness_step=10)
    assert shown(home, "light.dimmable_bulb")["brightness"] == 10
    off(home, "light.dimmable_bulb")
    on(home, "light.dimmable_bulb", brightness_step=-10)
    assert home.state("light.dimmable_bulb").state == "off"


@pytest.mark.parametrize(
    ("start", "step", "expected"),
    # 128 is 50 %; 60 % is round(153.0); 10 % from off is round(25.5) = 26; steps clamp to 100 %
    [(128, 10, 153), (128, -10, 102), (128, 150, 255), (None, 10, 26), (None, -10, None)],
)
def test_brightness_step_pct(home: Home, start: int | None, step: float, expected: int) -> None:
    if start is not None:
        on(home, "light.dimmable_bulb", brightness=start)
    on(home, "light.dimmable_bulb", brightness_step_pct=step)
    assert shown(home, "light.dimmable_bulb")["brightness"] == expected


def test_brightness_step_keeps_the_colour_and_converts_color_name(home: Home) -> None:
    on(home, "light.color_bulb", brightness=100)
    on(home, "light.color_bulb", brightness_step=20, color_name="red")
    assert shown(home, "light.color_bulb")["brightness"] == 120
    assert shown(home, "light.color_bulb")["hs_color"] == (0.0, 100.0)


def test_onoff_light_ignores_brightness_but_zero_still_turns_it_off(home: Home) -> None:
    on(home, "light.onoff_light", brightness=100, hs_color=[30, 50])
    assert home.state("light.onoff_light").state == "on"
    assert shown(home, "light.onoff_light") == {"color_mode": "onoff"}
    on(home, "light.onoff_light", brightness=0)
    assert home.state("light.onoff_light").state == "off"


def test_onoff_light_step_down_turns_it_off_as_in_home_assistant(home: Home) -> None:
    """An on/off light has no brightness, so Home Assistant steps from 0."""
    on(home, "light.onoff_light", brightness=100)
    on(home, "light.onoff_light", brightness_step=-10)
    assert home.state("light.onoff_light").state == "off"
    on(home, "light.onoff_light", brightness_step=10)
    assert home.state("light.onoff_light").state == "on"


# --- colour -----------------------------------------------------------------------------------


def test_color_name_becomes_rgb_ignoring_case_and_spaces(home: Home) -> None:
    on(home, "light.rgb_light_bars", color_name="Dark Sea Green")
    assert shown(home, "light.rgb_light_bars")["rgb_color"] == (143, 188, 143)
    assert shown(home, "light.rgb_light_bars")["color_mode"] == "rgb"


def test_unknown_color_name_falls_back_to_white(home: Home) -> None:
    on(home, "light.rgb_light_bars", color_name="octarine")
    assert shown(home, "light.rgb_light_bars")["rgb_color"] == (255, 255, 255)


def test_color_name_on_hs_light_is_converted(home: Home) -> None:
    on(home, "light.color_bulb", color_name="red")
    assert shown(home, "light.color_bulb")["hs_color"] == (0.0, 100.0)
    assert shown(home, "light.color_bulb")["xy_color"] == (0.701, 0.299)


@pytest.mark.parametrize(
    ("profile", "hs_color", "brightness"),
    [("relax", (35.932, 69.412), 144), ("reading", None, 240), ("energize", None, 203)],
)
def test_builtin_profiles(home: Home, profile: str, hs_color: Any, brightness: int) -> None:
    on(home, "light.color_bulb", profile=profile)
    attributes = shown(home, "light.color_bulb")
    assert attributes["brightness"] == brightness
    assert attributes["color_mode"] == "hs"
    if hs_color:
        assert attributes["hs_color"] == hs_color


@pytest.mark.parametrize(
    ("data", "expected"), [({"brightness_pct": 10}, 26), ({"brightness": 30}, 30)]
)
def test_profile_brightness_yields_to_the_given_brightness(
    home: Home, data: dict[str, Any], expected: int
) -> None:
    on(home, "light.color_bulb", profile="relax", **data)
    assert shown(home, "light.color_bulb")["brightness"] == expected


def test_unknown_profile_is_ignored(home: Home) -> None:
    on(home, "light.color_bulb", profile="party")
    assert shown(home, "light.color_bulb")["color_mode"] == "color_temp"


@pytest.mark.parametrize(
    ("kelvin", "expected"), [(2202, 2202), (4000, 4000), (1000, 2202), (0, 2202), (12000, 6535)]
)
def test_color_temp_is_clamped_to_the_bulb_range(home: Home, kelvin: int, expected: int) -> None:
    on(home, "light.tunable_white_bulb", color_temp_kelvin=kelvin)
    assert shown(home, "light.tunable_white_bulb")["color_temp_kelvin"] == expected


def test_color_temp_kelvin_is_coerced_to_int(home: Home) -> None:
    on(home, "light.tunable_white_bulb", color_temp_kelvin="3000")
    assert shown(home, "light.tunable_white_bulb")["color_temp_kelvin"] == 3000
    on(home, "light.tunable_white_bulb", color_temp_kelvin=3500.9)
    assert shown(home, "light.tunable_white_bulb")["color_temp_kelvin"] == 3500


def test_color_temp_on_a_colour_light_without_it_becomes_hs(home: Home) -> None:
    on(home, "light.color_white_bulb", color_temp_kelvin=2700)
    attributes = shown(home, "light.color_white_bulb")
    assert attributes["color_mode"] == "hs"
    assert attributes["hs_color"] == (28.395, 65.723)


def test_color_temp_on_rgbww_light_is_made_from_its_whites(home: Home) -> None:
    on(home, "light.rgbcct_led_controller", color_temp_kelvin=3000)
    attributes = shown(home, "light.rgbcct_led_controller")
    assert attributes["color_mode"] == "rgbww"
    assert attributes["rgbww_color"] == (0, 0, 0, 123, 132)
    assert attributes["rgb_color"] == (132, 92, 57)


def test_color_temp_zero_on_rgbww_light_is_refused(home: Home) -> None:
    """Home Assistant divides by zero here; the twin refuses the call instead."""
    with pytest.raises(ServiceValidationError, match="color_temp_kelvin 0"):
        on(home, "light.rgbcct_led_controller", color_temp_kelvin=0)
    assert home.state("light.rgbcct_led_controller").state == "off"


@pytest.mark.parametrize("entity_id", ["light.dimmable_bulb", "light.onoff_light"])
def test_colour_a_light_cannot_show_is_dropped(home: Home, entity_id: str) -> None:
    for data in ({"color_temp_kelvin": 3000}, {"hs_color": [1, 2]}, {"xy_color": [0.2, 0.3]}):
        on(home, entity_id, **data)
        off(home, entity_id)
    on(home, entity_id, rgbww_color=[1, 2, 3, 4, 5])
    assert home.state(entity_id).state == "on"
    assert "hs_color" not in home.state(entity_id).attributes


@pytest.mark.parametrize(
    ("entity_id", "data", "mode", "expected"),
    [
        ("light.rgb_light_bars", {"hs_color": [240, 50]}, "rgb", {"rgb_color": (128, 128, 255)}),
        (
            "light.rgbw_led_strip",
            {"hs_color": [120, 100]},
            "rgbw",
            {"rgbw_color": (0, 255, 0, 0), "rgb_color": (0, 255, 0)},
        ),
        (
            "light.rgbcct_led_controller",
            {"rgb_color": [255, 128, 0]},
            "rgbww",
            {"rgbww_color": (255, 128, 0, 0, 0)},
        ),
        (
            "light.color_ambiance_bulb",
            {"hs_color": [30, 50]},
            "xy",
            {
                "xy_color": (0.466, 0.384),
                "hs_color": (29.524, 49.412),
                "rgb_color": (255, 191, 129),
            },
        ),
        (
            "light.tunable_white_bulb",
            {"hs_color": [30, 50]},
            "color_temp",
            {"color_temp_kelvin": 2389},
        ),
        ("light.color_bulb", {"xy_color": [0.5, 0.4]}, "hs", {"hs_color": (32.484, 61.569)}),
        ("light.rgb_light_bars", {"xy_color": [0.5, 0.4]}, "rgb", {"rgb_color": (255, 183, 98)}),
        ("light.color_bulb", {"rgbww_color": [255, 0, 0, 0, 0]}, "hs", {"hs_color": (0.0, 100.0)}),
        ("light.rgb_light_bars", {"rgbw_color": [0, 0, 255, 0]}, "rgb", {"rgb_color": (0, 0, 255)}),
        (
            "light.color_ambiance_bulb",
            {"rgb_color": [255, 0, 0]},
            "xy",
            {"xy_color": (0.701, 0.299)},
        ),
        (
            "light.color_ambiance_bulb",
            {"color_name": "darkseagreen"},
            "xy",
            {"xy_color": (0.293, 0.411), "hs_color": (120.0, 23.529), "rgb_color": (195, 255, 195)},
        ),
    ],
)
def test_colour_is_converted_into_a_mode_the_light_supports(
    home: Home, entity_id: str, data: dict[str, Any], mode: str, expected: dict[str, Any]
) -> None:
    on(home, entity_id, **data)
    attributes = shown(home, entity_id)
    assert attributes["color_mode"] == mode
    assert attributes | expected == attributes


def test_xy_with_no_colour_temperature_is_refused_on_a_white_only_light(home: Home) -> None:
    with pytest.raises(ServiceValidationError, match=r"0\.1858"):
        on(home, "light.tunable_white_bulb", xy_color=[0.3, 0.1858])


@pytest.mark.parametrize("entity_id", ["light.color_ambiance_bulb", "light.color_bulb"])
def test_xy_where_home_assistant_maths_breaks_down_is_refused(home: Home, entity_id: str) -> None:
    with pytest.raises(ServiceValidationError, match="is no colour a light can show"):
        on(home, entity_id, xy_color=[1.0, 5e-324])
    assert home.state(entity_id).state == "off"


def test_xy_near_zero_y_is_fine_for_a_white_only_light(home: Home) -> None:
    on(home, "light.tunable_white_bulb", xy_color=[1.0, 5e-324])
    assert shown(home, "light.tunable_white_bulb")["color_temp_kelvin"] == 6535


def test_xy_shows_six_places_and_derived_hs_and_rgb(home: Home) -> None:
    on(home, "light.color_ambiance_bulb", xy_color=[0.12345678, 0.4])
    attributes = shown(home, "light.color_ambiance_bulb")
    assert attributes["xy_color"] == (0.123457, 0.4)
    assert attributes["hs_color"] == (172.471, 100.0)
    assert attributes["rgb_color"] == (0, 255, 223)


def test_hs_shows_three_places(home: Home) -> None:
    on(home, "light.color_bulb", hs_color=[10.123456, 20.98765])
    assert shown(home, "light.color_bulb")["hs_color"] == (10.123, 20.988)


def test_colour_values_are_tuples(home: Home) -> None:
    on(home, "light.rgbw_led_strip", rgbw_color=[1, 2, 3, 4])
    for key in ("hs_color", "rgb_color", "xy_color", "rgbw_color"):
        assert isinstance(shown(home, "light.rgbw_led_strip")[key], tuple)


# --- white ------------------------------------------------------------------------------------


def test_white_sets_white_mode_at_that_brightness(home: Home) -> None:
    on(home, "light.color_white_bulb", hs_color=[200, 80])
    on(home, "light.color_white_bulb", white=100)
    assert shown(home, "light.color_white_bulb") == {
        "color_mode": "white",
        "brightness": 100,
        "hs_color": None,
        "rgb_color": None,
        "xy_color": None,
    }


def test_white_true_keeps_the_brightness(home: Home) -> None:
    on(home, "light.color_white_bulb", hs_color=[200, 80], brightness=60)
    on(home, "light.color_white_bulb", white=True)
    assert shown(home, "light.color_white_bulb")["color_mode"] == "white"
    assert shown(home, "light.color_white_bulb")["brightness"] == 60


def test_brightness_overrides_white(home: Home) -> None:
    on(home, "light.color_white_bulb", white=True, brightness=30)
    assert shown(home, "light.color_white_bulb")["brightness"] == 30


@pytest.mark.parametrize("entity_id", ["light.color_white_bulb", "light.color_bulb"])
def test_white_zero_turns_off(home: Home, entity_id: str) -> None:
    on(home, entity_id)
    on(home, entity_id, white=0)
    assert home.state(entity_id).state == "off"


def test_white_on_a_light_without_white_mode_just_turns_it_on(home: Home) -> None:
    on(home, "light.color_bulb", white=50)
    assert shown(home, "light.color_bulb")["color_mode"] == "color_temp"
    assert shown(home, "light.color_bulb")["brightness"] == 255


# --- effect, flash, transition ----------------------------------------------------------------


def test_effect_is_set_shown_while_on_and_kept(home: Home) -> None:
    on(home, "light.rgbw_led_strip", effect="rainbow")
    assert shown(home, "light.rgbw_led_strip")["effect"] == "rainbow"
    off(home, "light.rgbw_led_strip")
    assert shown(home, "light.rgbw_led_strip")["effect"] is None
    on(home, "light.rgbw_led_strip", rgbw_color=[255, 0, 0, 0])
    assert shown(home, "light.rgbw_led_strip")["effect"] == "rainbow"
    on(home, "light.rgbw_led_strip", effect="off")
    assert shown(home, "light.rgbw_led_strip")["effect"] == "off"


def test_unknown_effect_is_refused_and_nothing_changes(home: Home) -> None:
    before = home.state("light.color_bulb")
    with pytest.raises(ServiceValidationError, match="has no effect 'rainbow'; effects: off"):
        on(home, "light.color_bulb", effect="rainbow", brightness=5)
    assert home.state("light.color_bulb") == before


def test_effect_on_a_light_without_the_feature_is_dropped(home: Home) -> None:
    on(home, "light.dimmable_bulb", effect="rainbow")
    assert home.state("light.dimmable_bulb").state == "on"
    assert "effect" not in home.state("light.dimmable_bulb").attributes


def test_unknown_effect_with_brightness_zero_just_turns_off(home: Home) -> None:
    on(home, "light.color_bulb")
    on(home, "light.color_bulb", effect="nope", brightness=0)
    assert home.state("light.color_bulb").state == "off"


@pytest.mark.parametrize("entity_id", ["light.color_ambiance_bulb", "light.onoff_light"])
def test_flash_and_transition_leave_no_lasting_change(home: Home, entity_id: str) -> None:
    on(home, entity_id, flash="short", transition=2)
    lit = home.state(entity_id)
    assert lit.state == "on"
    on(home, entity_id, flash="long", transition=-3)
    assert home.state(entity_id) == lit
    off(home, entity_id, flash="short", transition=7000)
    assert home.state(entity_id).state == "off"


@pytest.mark.parametrize(
    "data",
    [{"flash": "medium"}, {"transition": "slow"}, {"flash": None}, {"transition": [1]}],
)
@pytest.mark.parametrize("service", ["turn_on", "turn_off", "toggle"])
def test_bad_flash_or_transition_is_an_error(
    home: Home, service: str, data: dict[str, Any]
) -> None:
    with pytest.raises(InvalidServiceDataError):
        home.call_service("light", service, data, {"entity_id": "light.dimmable_bulb"})


# --- schema errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"brightness": 10, "brightness_pct": 10}, "give one brightness only"),
        ({"brightness_step": 10, "brightness_step_pct": 10}, "give one brightness only"),
        ({"hs_color": [1, 2], "rgb_color": [1, 2, 3]}, "give one colour only"),
        ({"profile": "relax", "color_name": "red"}, "give one colour only"),
        ({"white": True, "color_temp_kelvin": 3000}, "give one colour only"),
        ({"xy_color": [0.1, 0.2], "rgbww_color": [1, 2, 3, 4, 5]}, "give one colour only"),
    ],
)
def test_exclusive_parameters(home: Home, data: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidServiceDataError, match=message):
        on(home, "light.color_bulb", **data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"hs_color": [400, 50]}, "hue must be 0-360, got 400"),
        ({"hs_color": [30, 101]}, "saturation must be 0-100, got 101"),
        ({"hs_color": [30]}, "hs_color needs 2 values, got 1"),
        ({"hs_color": "30,50"}, "hs_color needs 2 values"),
        ({"hs_color": ["a", 5]}, "expected float"),
        ({"rgb_color": [256, 0, 0]}, "rgb_color values must be 0-255, got 256"),
        ({"rgb_color": [1, 2, 3, 4]}, "rgb_color needs 3 values, got 4"),
        ({"rgbw_color": [-1, 0, 0, 0]}, "rgbw_color values must be 0-255"),
        ({"rgbww_color": [0, 0, 0, 0]}, "rgbww_color needs 5 values"),
        ({"xy_color": [1.1, 0.3]}, "x and y must be 0-1, got 1.1"),
        ({"color_temp_kelvin": -1}, "color_temp_kelvin must be at least 0, got -1"),
        ({"color_temp_kelvin": "warm"}, "expected int"),
        ({"brightness": "bright"}, "expected int"),
        ({"white": "yes"}, "white"),
        ({"color_name": None}, "color_name"),
        ({"colour": "red"}, "extra keys not allowed"),
    ],
)
def test_invalid_data_is_an_error(home: Home, data: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidServiceDataError, match=message):
        on(home, "light.color_bulb", **data)
    assert home.state("light.color_bulb").state == "off"


def test_turn_off_takes_only_transition_and_flash(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys not allowed"):
        off(home, "light.dimmable_bulb", brightness=10)


def test_step_pct_and_transition_clamp(home: Home) -> None:
    on(home, "light.dimmable_bulb", brightness=100)
    on(home, "light.dimmable_bulb", brightness_step_pct=-1000, transition=-1)
    assert home.state("light.dimmable_bulb").state == "off"


# --- toggle -----------------------------------------------------------------------------------


def test_toggle_turns_on_with_turn_on_parameters(home: Home) -> None:
    toggle(home, "light.color_bulb", color_name="blue", brightness_pct=50)
    attributes = shown(home, "light.color_bulb")
    assert home.state("light.color_bulb").state == "on"
    assert attributes["hs_color"] == (240.0, 100.0)
    assert attributes["brightness"] == 128


def test_toggle_turns_off_and_ignores_turn_on_parameters(home: Home) -> None:
    on(home, "light.color_bulb", brightness=20)
    toggle(home, "light.color_bulb", brightness=200, hs_color=[10, 10])
    assert home.state("light.color_bulb").state == "off"
    on(home, "light.color_bulb")
    assert shown(home, "light.color_bulb")["brightness"] == 20
    assert shown(home, "light.color_bulb")["color_mode"] == "color_temp"


def test_toggle_off_light_with_brightness_zero_stays_off(home: Home) -> None:
    assert toggle(home, "light.dimmable_bulb", brightness=0).changed == ()
    assert toggle(home, "light.dimmable_bulb", brightness_step=-5).changed == ()
    assert home.state("light.dimmable_bulb").state == "off"


def test_toggle_twice_is_back_where_it_was(home: Home) -> None:
    toggle(home, "light.dimmable_bulb", brightness_step=30)
    assert shown(home, "light.dimmable_bulb")["brightness"] == 30
    toggle(home, "light.dimmable_bulb")
    assert home.state("light.dimmable_bulb").state == "off"
    toggle(home, "light.dimmable_bulb")
    assert shown(home, "light.dimmable_bulb")["brightness"] == 30


# --- several lights ---------------------------------------------------------------------------


def test_one_call_on_several_lights_converts_for_each(home: Home) -> None:
    lights = ["light.color_bulb", "light.rgbw_led_strip", "light.tunable_white_bulb"]
    result = on(home, lights, hs_color=[120, 100])
    assert result.entity_ids == tuple(lights)
    assert [shown(home, light)["color_mode"] for light in lights] == ["hs", "rgbw", "color_temp"]


def test_several_lights_change_all_or_nothing(home: Home) -> None:
    before = home.snapshot()
    with pytest.raises(ServiceValidationError, match=r"light\.color_bulb has no effect 'rainbow'"):
        on(home, ["light.rgbw_led_strip", "light.color_bulb"], effect="rainbow")
    assert home.states == before.states
    on(home, ["light.rgbw_led_strip", "light.dimmable_bulb"], effect="rainbow")
    assert shown(home, "light.rgbw_led_strip")["effect"] == "rainbow"
    assert home.state("light.dimmable_bulb").state == "on"


def test_turn_on_through_homeassistant_domain(home: Home) -> None:
    home.call_service(
        "homeassistant", "turn_on", {"brightness": 40}, {"entity_id": "light.dimmable_bulb"}
    )
    assert shown(home, "light.dimmable_bulb")["brightness"] == 40


def test_a_light_without_supported_color_modes_is_a_definition_error() -> None:
    home = Home()
    home.add_entity(EntityEntry("light.bare", "Bare"), "off")
    with pytest.raises(HomeDefinitionError, match="supported_color_modes"):
        on(home, "light.bare")


def test_domain_features_are_home_assistants() -> None:
    from twin.domains import DOMAINS

    assert DOMAINS["light"].features == {"effect": 4, "flash": 8, "transition": 32}
    assert set(DOMAINS["light"].services) == {"turn_on", "turn_off", "toggle"}


def test_a_light_given_on_in_its_attributes_remembers_them() -> None:
    home = Home()
    entry = EntityEntry("light.desk", "Desk", capabilities={"supported_color_modes": ["hs"]})
    home.add_entity(entry, "on", {"color_mode": "hs", "brightness": 80, "hs_color": [10, 20]})
    on(home, "light.desk", brightness_step=20)
    assert shown(home, "light.desk")["brightness"] == 100
    assert shown(home, "light.desk")["hs_color"] == (10, 20)


# --- colour module ----------------------------------------------------------------------------


def test_color_conversions_match_home_assistant() -> None:
    assert color.hs_to_rgb(30, 50) == (255, 191, 128)
    assert color.rgb_to_xy(0, 0, 0) == (0.0, 0.0)
    assert color.kelvin_to_hs(0) == (15.981, 100.0)
    assert color.xy_to_rgb(0.323, 0.329) == (255, 254, 254)
    assert color.rgbw_to_rgb(0, 0, 0, 255) == (255, 255, 255)
    assert color.kelvin_to_mired(6535) == 153
    assert color.mired_to_kelvin(153) == 6535
    with pytest.raises(ValueError, match="Unknown color"):
        color.name_to_rgb("octarine")


# --- properties -------------------------------------------------------------------------------

_BYTE = st.integers(0, 255)
_COLOURS = st.one_of(
    st.fixed_dictionaries({"color_temp_kelvin": st.integers(0, 20_000)}),
    st.fixed_dictionaries({"hs_color": st.tuples(st.floats(0, 360), st.floats(0, 100)).map(list)}),
    st.fixed_dictionaries({"xy_color": st.tuples(st.floats(0, 1), st.floats(0, 1)).map(list)}),
    st.fixed_dictionaries({"rgb_color": st.tuples(_BYTE, _BYTE, _BYTE)}),
    st.fixed_dictionaries({"rgbw_color": st.tuples(_BYTE, _BYTE, _BYTE, _BYTE)}),
    st.fixed_dictionaries({"rgbww_color": st.tuples(_BYTE, _BYTE, _BYTE, _BYTE, _BYTE)}),
    st.fixed_dictionaries({"white": st.one_of(st.just(True), st.integers(-10, 300))}),
    st.fixed_dictionaries({"color_name": st.sampled_from(["red", "navy", "black", "nope"])}),
    st.fixed_dictionaries({"profile": st.sampled_from(["relax", "reading", "nope"])}),
    st.just({}),
)
_BRIGHTNESSES = st.one_of(
    st.fixed_dictionaries({"brightness": st.integers(-10, 400)}),
    st.fixed_dictionaries({"brightness_pct": st.floats(0, 100)}),
    st.fixed_dictionaries({"brightness_step": st.integers(-300, 300)}),
    st.fixed_dictionaries({"brightness_step_pct": st.floats(-150, 150)}),
    st.just({}),
)
_EXTRAS = st.fixed_dictionaries(
    {},
    optional={
        "effect": st.sampled_from(["off", "rainbow", "candle", "colorloop"]),
        "flash": st.sampled_from(["short", "long"]),
        "transition": st.floats(-10, 10_000),
    },
)
_CALLS = st.lists(
    st.tuples(
        st.sampled_from(["turn_on", "turn_on", "toggle", "turn_off"]),
        st.builds(
            lambda *parts: {k: v for p in parts for k, v in p.items()},
            _COLOURS,
            _BRIGHTNESSES,
            _EXTRAS,
        ),
    ),
    min_size=1,
    max_size=6,
)


def assert_within_capabilities(home: Home, entity_id: str, keys: set[str]) -> None:
    """A light shows only what Home Assistant shows for its modes, and within its limits."""
    state = home.state(entity_id)
    capabilities = home.entities[entity_id].capabilities
    attributes = state.attributes
    assert set(attributes) == keys
    assert state.state in ("on", "off")
    if state.state == "off":
        assert set(shown(home, entity_id).values()) == {None}
        return
    modes = capabilities["supported_color_modes"]
    mode = attributes["color_mode"]
    assert mode in modes
    if "brightness" in attributes:
        assert isinstance(attributes["brightness"], int)
        assert 1 <= attributes["brightness"] <= 255
    if mode == "color_temp":
        kelvin = attributes["color_temp_kelvin"]
        low = capabilities["min_color_temp_kelvin"]
        assert low <= kelvin <= capabilities["max_color_temp_kelvin"]
    if "effect" in attributes:
        assert attributes["effect"] in capabilities["effect_list"]
    if attributes.get("hs_color") is not None:
        hue, saturation = attributes["hs_color"]
        assert 0 <= hue <= 360
        assert 0 <= saturation <= 100
        assert all(0 <= channel <= 255 for channel in attributes["rgb_color"])
        assert all(0 <= value <= 1 for value in attributes["xy_color"])
    for key in ("hs_color", "rgb_color", "xy_color", "rgbw_color", "rgbww_color"):
        assert attributes.get(key) is None or isinstance(attributes[key], tuple)
    for key in ("rgbw_color", "rgbww_color"):
        if attributes.get(key) is not None:
            assert all(0 <= channel <= 255 for channel in attributes[key])


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(type_id=st.sampled_from(LIGHT_TYPES), calls=_CALLS)
def test_any_valid_call_leaves_the_light_within_its_capabilities(
    home: Home, type_id: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    entity_id = light_entity_ids(home, type_id)[0]
    home = home.copy()
    keys = set(home.state(entity_id).attributes)
    for service, data in calls:
        if service == "turn_off":
            data = {key: data[key] for key in ("flash", "transition") if key in data}
        before = home.state(entity_id)
        try:
            home.call_service("light", service, data, {"entity_id": entity_id})
        except ServiceValidationError:
            # The bulb's own refusals (an effect it lacks, an impossible colour temperature)
            # change nothing; any other error fails the test.
            assert home.state(entity_id) == before
        assert_within_capabilities(home, entity_id, keys)


# --- imported lights: the state Home Assistant writes from an inventory's arguments -------------

HS_LIGHT_OFF = {
    "id": "light.lamp",
    "state": "off",
    "attributes": {
        "supported_color_modes": ["hs"],
        "color_mode": "hs",
        "hs_color": [30, 50],
        "brightness": 0,
    },
}


def test_an_imported_light_that_is_off_shows_no_colour_mode() -> None:
    """LightEntity.state_attributes: color_mode and the colours are None while the light is off."""
    home, _ = import_ha_snapshot({"entities": [HS_LIGHT_OFF]})
    shown = home.state("light.lamp").attributes
    assert {key: shown[key] for key in ("color_mode", "brightness", "hs_color", "rgb_color")} == {
        "color_mode": None,
        "brightness": None,
        "hs_color": None,
        "rgb_color": None,
    }


def test_turn_on_without_brightness_keeps_an_imported_brightness_of_0() -> None:
    """Home Assistant passes no brightness (no default profile): the entity keeps its own 0."""
    home, _ = import_ha_snapshot({"entities": [HS_LIGHT_OFF]})
    home.call_service("light", "turn_on", target={"entity_id": "light.lamp"})
    lit = home.state("light.lamp")
    shown = lit.attributes
    assert (lit.state, shown["color_mode"], shown["brightness"], shown["hs_color"]) == (
        "on",
        "hs",
        0,
        (30, 50),
    )


# --- effects: "off" is Home Assistant's no effect ------------------------------------------------

EFFECT_LIGHT = {
    "entity_id": "light.strip",
    "state": "on",
    "attributes": {
        "supported_color_modes": ["onoff"],
        "color_mode": "onoff",
        "supported_features": 4,
        "effect_list": ["colorloop", "rainbow"],
        "effect": None,
    },
}


def test_effect_off_stops_an_effect_the_light_does_not_list() -> None:
    """LightEntity treats EFFECT_OFF ("off") as no effect, whatever the effect_list; a light
    whose list lacks it takes it as Home Assistant passes it on, and shows it."""
    home, _ = import_ha_snapshot({"states": [EFFECT_LIGHT]})
    home.call_service("light", "turn_on", {"effect": "colorloop"}, {"entity_id": "light.strip"})
    home.call_service("light", "turn_on", {"effect": "off"}, {"entity_id": "light.strip"})
    assert home.state("light.strip").attributes["effect"] == "off"
    with pytest.raises(ServiceValidationError, match="no effect 'sparkle'"):
        home.call_service("light", "turn_on", {"effect": "sparkle"}, {"entity_id": "light.strip"})


def test_an_imported_light_showing_no_effect_keeps_none_after_off_and_on() -> None:
    """An imported light that is on with effect None has none: turned off and on, it shows None
    again, as the entity does, not an invented "off"."""
    home, _ = import_ha_snapshot({"states": [EFFECT_LIGHT]})
    for service in ("turn_off", "turn_on"):
        home.call_service("light", service, target={"entity_id": "light.strip"})
    assert home.state("light.strip").attributes["effect"] is None

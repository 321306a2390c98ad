"""fan: Home Assistant's fan services, speed arithmetic and errors, on the catalog's fans."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains.fan import (
    DIRECTION,
    OSCILLATE,
    PRESET_MODE,
    SET_SPEED,
    TURN_OFF,
    TURN_ON,
    NotValidPresetModeError,
    adjusted_percentage,
)
from twin.errors import (
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TwinError,
)
from twin.home import Home
from twin.homefile import import_ha_snapshot
from twin.registry import Area, EntityEntry

CEILING = "fan.living_ceiling_fan"
CEILING_LIGHT = "light.living_ceiling_fan_light"
TOWER = "fan.bedroom_tower_fan"
PEDESTAL = "fan.study_pedestal_fan"
EXHAUST = "fan.bathroom_fan"
PURIFIER = "fan.living_purifier"
PRESET_ONLY = "fan.aroma_diffuser"
NO_TURN_ON = "fan.attic_fan"


@pytest.fixture
def home() -> Home:
    """A fan of each catalog type, one fan with presets only and one without turn_on/turn_off."""
    home = Home()
    for area in ("living", "bedroom", "study", "bathroom", "attic"):
        home.add_area(Area(area, area.title()))
    catalog = load_catalog()
    catalog["ceiling_fan_with_light"].install(home, "ceiling", "Living ceiling fan", "living")
    catalog["tower_fan"].install(home, "tower", "Bedroom tower fan", "bedroom")
    catalog["pedestal_fan"].install(home, "pedestal", "Study pedestal fan", "study")
    catalog["bathroom_exhaust_fan"].install(home, "exhaust", "Bathroom fan", "bathroom")
    catalog["air_purifier"].install(home, "purifier", "Living purifier", "living")
    home.add_entity(
        EntityEntry(
            PRESET_ONLY,
            "Aroma diffuser",
            area_id="bedroom",
            supported_features=PRESET_MODE | TURN_ON | TURN_OFF,
            capabilities={"preset_modes": ["calm", "fresh"]},
        ),
        "off",
        {"preset_mode": None},
    )
    home.add_entity(
        EntityEntry(
            NO_TURN_ON,
            "Attic fan",
            area_id="attic",
            supported_features=SET_SPEED,
            capabilities={"preset_modes": None, "percentage_step": 50.0},
        ),
        "off",
        {"percentage": 0, "preset_mode": None},
    )
    return home


def call(home: Home, service: str, entity_id: Any, **data: Any) -> None:
    home.call_service("fan", service, data, {"entity_id": entity_id})


def attr(home: Home, entity_id: str, name: str) -> Any:
    return home.state(entity_id).attributes[name]


def ha_attribute_names(features: int) -> set[str]:
    """The attributes FanEntity shows for a feature mask: capability and state attributes."""
    names = {"friendly_name"}
    if features:
        names.add("supported_features")
    if features & DIRECTION:
        names.add("direction")
    if features & OSCILLATE:
        names.add("oscillating")
    if features & SET_SPEED:
        names |= {"percentage", "percentage_step"}
    if features & (SET_SPEED | PRESET_MODE):
        names |= {"preset_mode", "preset_modes"}
    return names


# --- the catalog's fans ------------------------------------------------------------------------


def test_catalog_fans_show_home_assistants_attributes(home: Home) -> None:
    for entity_id, entry in home.entities.items():
        if entry.domain != "fan":
            continue
        attributes = home.state(entity_id).attributes
        assert set(attributes) == ha_attribute_names(entry.supported_features), entity_id
        if "percentage_step" in attributes:
            count = round(100 / attributes["percentage_step"])
            assert attributes["percentage_step"] == 100 / count
        assert home.state(entity_id).state == "off"


def test_ceiling_fan_carries_a_dimmable_light(home: Home) -> None:
    light = home.state(CEILING_LIGHT)
    assert light.state == "off"
    assert light.attributes["supported_color_modes"] == ["brightness"]
    assert home.entities[CEILING_LIGHT].device_id == home.entities[CEILING].device_id


def test_air_purifier_has_presets_and_air_sensors(home: Home) -> None:
    assert attr(home, PURIFIER, "preset_modes") == ["auto", "sleep"]
    assert (
        attr(home, PURIFIER, "supported_features") == SET_SPEED | PRESET_MODE | TURN_ON | TURN_OFF
    )
    pm25 = home.state("sensor.living_purifier_pm25")
    assert pm25.attributes["device_class"] == "pm25"
    assert pm25.attributes["unit_of_measurement"] == "μg/m³"
    filter_life = home.entities["sensor.living_purifier_filter_life"]
    assert (filter_life.unit_of_measurement, filter_life.entity_category) == ("%", "diagnostic")


# --- turn_on / turn_off / toggle ---------------------------------------------------------------


def test_turn_on_without_a_speed_runs_at_the_demo_default(home: Home) -> None:
    call(home, "turn_on", PURIFIER)
    state = home.state(PURIFIER)
    assert state.state == "on"
    assert state.attributes["percentage"] == 67
    assert state.attributes["preset_mode"] is None
    assert "hidden" not in state.attributes


@pytest.mark.parametrize(("given", "stored"), [(50, 50), ("40", 40), (40.9, 40), (True, 1)])
def test_turn_on_at_a_percentage_coerces_like_home_assistant(
    home: Home, given: Any, stored: int
) -> None:
    call(home, "turn_on", TOWER, percentage=given)
    assert attr(home, TOWER, "percentage") == stored
    assert home.state(TOWER).state == "on"


def test_turn_on_at_zero_percent_leaves_the_fan_off(home: Home) -> None:
    call(home, "turn_on", TOWER, percentage=0)
    assert home.state(TOWER).state == "off"
    assert attr(home, TOWER, "percentage") == 0


@pytest.mark.parametrize("bad", [101, -1, "fast", None, [50]])
def test_turn_on_rejects_bad_percentages(home: Home, bad: Any) -> None:
    before = home.state(TOWER)
    with pytest.raises(InvalidServiceDataError, match="percentage"):
        call(home, "turn_on", TOWER, percentage=bad)
    assert home.state(TOWER) is before


def test_turn_on_in_a_preset_clears_the_percentage(home: Home) -> None:
    call(home, "turn_on", PURIFIER, percentage=100, preset_mode="sleep")
    state = home.state(PURIFIER)
    assert state.state == "on"
    assert state.attributes["preset_mode"] == "sleep"
    assert state.attributes["percentage"] is None


def test_turn_on_rejects_an_unknown_preset(home: Home) -> None:
    before = home.state(PURIFIER)
    with pytest.raises(NotValidPresetModeError, match=r"valid preset modes are: auto, sleep\."):
        call(home, "turn_on", PURIFIER, preset_mode="turbo")
    assert home.state(PURIFIER) is before


def test_turn_on_with_a_preset_on_a_fan_without_presets_says_so(home: Home) -> None:
    with pytest.raises(ServiceValidationError, match="has no preset modes"):
        call(home, "turn_on", CEILING, preset_mode="breeze")
    assert home.state(CEILING).state == "off"


def test_turn_on_keeps_a_running_fan_as_it_is(home: Home) -> None:
    call(home, "turn_on", TOWER, percentage=25)
    call(home, "turn_on", TOWER)
    assert attr(home, TOWER, "percentage") == 25


def test_turn_off_stops_the_fan_and_keeps_oscillation_and_direction(home: Home) -> None:
    call(home, "turn_on", TOWER, percentage=75)
    call(home, "oscillate", TOWER, oscillating=True)
    call(home, "turn_off", TOWER)
    state = home.state(TOWER)
    assert state.state == "off"
    assert state.attributes["percentage"] == 0
    assert state.attributes["preset_mode"] is None
    assert state.attributes["oscillating"] is True


def test_turn_on_resumes_the_last_speed(home: Home) -> None:
    call(home, "set_percentage", CEILING, percentage=50)
    call(home, "turn_off", CEILING)
    call(home, "turn_on", CEILING)
    assert attr(home, CEILING, "percentage") == 50


def test_turn_on_resumes_the_last_preset(home: Home) -> None:
    call(home, "set_preset_mode", PURIFIER, preset_mode="auto")
    call(home, "turn_off", PURIFIER)
    call(home, "toggle", PURIFIER)
    assert attr(home, PURIFIER, "preset_mode") == "auto"
    assert attr(home, PURIFIER, "percentage") is None


def test_a_fan_turned_off_twice_remembers_its_speed(home: Home) -> None:
    call(home, "set_percentage", PEDESTAL, percentage=25)
    call(home, "turn_off", PEDESTAL)
    call(home, "turn_off", PEDESTAL)
    call(home, "turn_on", PEDESTAL)
    assert attr(home, PEDESTAL, "percentage") == 25


def test_toggle_turns_off_then_on_again(home: Home) -> None:
    call(home, "set_percentage", PEDESTAL, percentage=75)
    call(home, "toggle", PEDESTAL)
    assert home.state(PEDESTAL).state == "off"
    call(home, "toggle", PEDESTAL)
    assert home.state(PEDESTAL).state == "on"
    assert attr(home, PEDESTAL, "percentage") == 75


@pytest.mark.parametrize("service", ["turn_on", "turn_off", "toggle"])
def test_on_off_services_take_only_their_fields(home: Home, service: str) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys"):
        call(home, service, TOWER, speed="high")


def test_on_off_services_need_turn_on_or_turn_off(home: Home) -> None:
    for service in ("turn_on", "turn_off", "toggle"):
        with pytest.raises(ServiceNotSupportedError, match=f"fan.{service}"):
            call(home, service, NO_TURN_ON)
    call(home, "set_percentage", NO_TURN_ON, percentage=50)
    assert home.state(NO_TURN_ON).state == "on"


# --- on/off and preset-only fans ---------------------------------------------------------------


def test_exhaust_fan_is_only_on_or_off(home: Home) -> None:
    call(home, "turn_on", EXHAUST, percentage=30)
    state = home.state(EXHAUST)
    assert state.state == "on"
    assert set(state.attributes) == {"friendly_name", "supported_features"}
    call(home, "toggle", EXHAUST)
    assert home.state(EXHAUST).state == "off"
    for service, data in [
        ("set_percentage", {"percentage": 50}),
        ("increase_speed", {}),
        ("set_preset_mode", {"preset_mode": "auto"}),
        ("oscillate", {"oscillating": True}),
        ("set_direction", {"direction": "reverse"}),
    ]:
        with pytest.raises(ServiceNotSupportedError):
            call(home, service, EXHAUST, **data)


def test_preset_only_fan_runs_without_a_preset_or_in_one(home: Home) -> None:
    call(home, "turn_on", PRESET_ONLY)
    assert home.state(PRESET_ONLY).state == "on"
    assert attr(home, PRESET_ONLY, "preset_mode") is None
    call(home, "set_preset_mode", PRESET_ONLY, preset_mode="calm")
    assert attr(home, PRESET_ONLY, "preset_mode") == "calm"
    assert "percentage" not in home.state(PRESET_ONLY).attributes
    call(home, "turn_off", PRESET_ONLY)
    assert home.state(PRESET_ONLY).state == "off"
    assert attr(home, PRESET_ONLY, "preset_mode") is None


# --- set_percentage / increase_speed / decrease_speed ------------------------------------------


def test_set_percentage_leaves_a_preset(home: Home) -> None:
    call(home, "turn_on", PURIFIER, preset_mode="sleep")
    call(home, "set_percentage", PURIFIER, percentage="33")
    assert (attr(home, PURIFIER, "percentage"), attr(home, PURIFIER, "preset_mode")) == (33, None)


def test_set_percentage_zero_turns_the_fan_off(home: Home) -> None:
    call(home, "set_percentage", CEILING, percentage=80)
    call(home, "set_percentage", CEILING, percentage=0)
    assert home.state(CEILING).state == "off"
    assert attr(home, CEILING, "percentage") == 0


@pytest.mark.parametrize("data", [{}, {"percentage": 100.5e1}, {"percentage": "x"}])
def test_set_percentage_needs_a_percentage(home: Home, data: dict[str, Any]) -> None:
    with pytest.raises(InvalidServiceDataError):
        call(home, "set_percentage", CEILING, **data)


@pytest.mark.parametrize(
    ("entity_id", "up"),
    [
        (PURIFIER, [33, 66, 100, 100]),
        (PEDESTAL, [25, 50, 75, 100, 100]),
        (CEILING, [16, 33, 50, 66, 83, 100]),
        (TOWER, [8, 16, 25, 33, 41, 50, 58, 66, 75, 83, 91, 100]),
    ],
)
def test_speed_steps_through_the_fans_speeds(home: Home, entity_id: str, up: list[int]) -> None:
    seen = []
    for _ in up:
        call(home, "increase_speed", entity_id)
        seen.append(attr(home, entity_id, "percentage"))
    assert seen == up
    down = []
    while home.state(entity_id).state == "on":
        call(home, "decrease_speed", entity_id)
        down.append(attr(home, entity_id, "percentage"))
    assert down == [*sorted(set(up) - {100}, reverse=True), 0]


def test_an_off_step_speed_goes_to_the_next_speed_after_it(home: Home) -> None:
    """Home Assistant rounds the current speed up first: 34 % on a 3-speed fan jumps to 100 %."""
    call(home, "set_percentage", PURIFIER, percentage=34)
    call(home, "increase_speed", PURIFIER)
    assert attr(home, PURIFIER, "percentage") == 100
    call(home, "set_percentage", PURIFIER, percentage=34)
    call(home, "decrease_speed", PURIFIER)
    assert attr(home, PURIFIER, "percentage") == 33


def test_percentage_step_moves_by_that_much_and_clamps(home: Home) -> None:
    call(home, "set_percentage", CEILING, percentage=50)
    call(home, "increase_speed", CEILING, percentage_step=15)
    assert attr(home, CEILING, "percentage") == 65
    call(home, "increase_speed", CEILING, percentage_step="90")
    assert attr(home, CEILING, "percentage") == 100
    call(home, "decrease_speed", CEILING, percentage_step=99)
    assert attr(home, CEILING, "percentage") == 1
    call(home, "decrease_speed", CEILING, percentage_step=60)
    assert home.state(CEILING).state == "off"
    assert attr(home, CEILING, "percentage") == 0


def test_increase_speed_from_a_preset_starts_at_the_first_speed(home: Home) -> None:
    call(home, "set_preset_mode", PURIFIER, preset_mode="auto")
    call(home, "increase_speed", PURIFIER)
    assert (attr(home, PURIFIER, "percentage"), attr(home, PURIFIER, "preset_mode")) == (33, None)


@pytest.mark.parametrize("service", ["increase_speed", "decrease_speed"])
@pytest.mark.parametrize("bad", [101, -5, "lots"])
def test_speed_steps_reject_bad_steps(home: Home, service: str, bad: Any) -> None:
    with pytest.raises(InvalidServiceDataError, match="percentage_step"):
        call(home, service, CEILING, percentage_step=bad)


@given(
    count=st.integers(1, 100),
    current=st.integers(0, 100),
    step=st.none() | st.integers(0, 100),
    modifier=st.sampled_from([1, -1]),
)
def test_adjusted_percentage_stays_in_range_and_moves_the_right_way(
    count: int, current: int, step: int | None, modifier: int
) -> None:
    new = adjusted_percentage(current, modifier, step, count)
    assert 0 <= new <= 100
    if step is not None:
        assert new == max(0, min(100, current + modifier * step))
    elif modifier == 1:
        assert new > current or new == 100
    else:
        assert new < current or new == 0


@given(count=st.integers(1, 100), data=st.data())
def test_adjusted_percentage_walks_speed_by_speed(count: int, data: st.DataObject) -> None:
    speeds = [0, *(k * 100 // count for k in range(1, count + 1))]
    k = data.draw(st.integers(0, count))
    assert adjusted_percentage(speeds[k], 1, None, count) == speeds[min(k + 1, count)]
    assert adjusted_percentage(speeds[k], -1, None, count) == speeds[max(k - 1, 0)]


# --- set_preset_mode / oscillate / set_direction -----------------------------------------------


def test_set_preset_mode_validates_against_preset_modes(home: Home) -> None:
    call(home, "set_preset_mode", TOWER, preset_mode="natural")
    assert home.state(TOWER).state == "on"
    with pytest.raises(NotValidPresetModeError, match="natural, sleep, auto"):
        call(home, "set_preset_mode", TOWER, preset_mode="Natural")
    assert attr(home, TOWER, "preset_mode") == "natural"
    with pytest.raises(InvalidServiceDataError, match="preset_mode"):
        call(home, "set_preset_mode", TOWER)
    with pytest.raises(NotValidPresetModeError, match="no preset modes"):
        call(home, "set_preset_mode", CEILING, preset_mode="auto")


@pytest.mark.parametrize(
    ("given", "stored"), [(True, True), ("on", True), ("no", False), (0, False)]
)
def test_oscillate_coerces_booleans(home: Home, given: Any, stored: bool) -> None:
    call(home, "oscillate", PEDESTAL, oscillating=not stored)
    call(home, "oscillate", PEDESTAL, oscillating=given)
    assert attr(home, PEDESTAL, "oscillating") is stored
    assert home.state(PEDESTAL).state == "off"


def test_oscillate_needs_a_boolean_and_the_feature(home: Home) -> None:
    for data in ({}, {"oscillating": "maybe"}):
        with pytest.raises(InvalidServiceDataError, match="oscillating"):
            call(home, "oscillate", PEDESTAL, **data)
    with pytest.raises(ServiceNotSupportedError):
        call(home, "oscillate", CEILING, oscillating=True)


def test_set_direction(home: Home) -> None:
    call(home, "set_direction", CEILING, direction="reverse")
    assert attr(home, CEILING, "direction") == "reverse"
    with pytest.raises(ServiceValidationError, match="forward or reverse, got 'sideways'"):
        call(home, "set_direction", CEILING, direction="sideways")
    assert attr(home, CEILING, "direction") == "reverse"
    with pytest.raises(InvalidServiceDataError, match="direction"):
        call(home, "set_direction", CEILING)
    with pytest.raises(ServiceNotSupportedError):
        call(home, "set_direction", TOWER, direction="forward")


# --- several fans at once ----------------------------------------------------------------------


def test_a_call_on_several_fans_changes_all_or_none(home: Home) -> None:
    call(home, "set_percentage", [TOWER, PURIFIER], percentage=50)
    before = dict(home.states)
    with pytest.raises(NotValidPresetModeError):
        call(home, "set_preset_mode", [TOWER, PURIFIER], preset_mode="natural")
    assert home.states == before
    with pytest.raises(ServiceNotSupportedError):
        call(home, "oscillate", [TOWER, CEILING], oscillating=True)
    assert home.states == before


def test_an_area_call_skips_fans_without_the_feature(home: Home) -> None:
    home.call_service("fan", "increase_speed", target={"area_id": ["living", "bathroom"]})
    assert attr(home, CEILING, "percentage") == 16
    assert attr(home, PURIFIER, "percentage") == 33
    assert home.state(EXHAUST).state == "off"


def test_homeassistant_turn_on_reaches_fans(home: Home) -> None:
    home.call_service("homeassistant", "turn_on", target={"area_id": "bathroom"})
    assert home.state(EXHAUST).state == "on"


# --- any sequence of calls ---------------------------------------------------------------------

CALLS = st.one_of(
    st.tuples(
        st.just("turn_on"),
        st.fixed_dictionaries(
            {},
            optional={
                "percentage": st.integers(-5, 105),
                "preset_mode": st.sampled_from(["auto", "sleep", "turbo"]),
            },
        ),
    ),
    st.tuples(st.sampled_from(["turn_off", "toggle"]), st.just({})),
    st.tuples(
        st.just("set_percentage"), st.fixed_dictionaries({"percentage": st.integers(-5, 105)})
    ),
    st.tuples(
        st.sampled_from(["increase_speed", "decrease_speed"]),
        st.fixed_dictionaries({}, optional={"percentage_step": st.integers(0, 100)}),
    ),
    st.tuples(
        st.just("set_preset_mode"),
        st.fixed_dictionaries({"preset_mode": st.sampled_from(["auto", "sleep", "natural"])}),
    ),
)


@given(calls=st.lists(CALLS, max_size=25))
def test_any_calls_keep_the_state_consistent(calls: list[tuple[str, dict[str, Any]]]) -> None:
    home = Home()
    load_catalog()["air_purifier"].install(home, "purifier", "Purifier")
    for service, data in calls:
        before = home.state("fan.purifier")
        try:
            call(home, service, "fan.purifier", **data)
        except TwinError:
            assert home.state("fan.purifier") is before
        state = home.state("fan.purifier")
        percentage = state.attributes["percentage"]
        preset_mode = state.attributes["preset_mode"]
        assert percentage is None or 0 <= percentage <= 100
        assert (percentage is None) == (preset_mode is not None)
        assert (state.state == "on") == (bool(percentage) or preset_mode is not None)


# --- imported fans keep their number of speeds -------------------------------------------------

DESK = "fan.desk"


def imported_desk_fan(registry: bool) -> Home:
    """A 3-speed fan imported from a Home Assistant snapshot, with or without its registry entry
    (whose capabilities hold no percentage_step: HA writes it only in the state)."""
    attributes = {"supported_features": SET_SPEED, "percentage": 33, "percentage_step": 100 / 3}
    snapshot: dict[str, Any] = {
        "states": [{"entity_id": DESK, "state": "on", "attributes": attributes}]
    }
    if registry:
        snapshot["entities"] = [{"entity_id": DESK, "capabilities": {"preset_modes": None}}]
    home, _ = import_ha_snapshot(snapshot)
    return home


@pytest.mark.parametrize("registry", [False, True])
def test_an_imported_fan_steps_through_its_own_speeds(registry: bool) -> None:
    """FanEntity.percentage_step is 100 / speed_count: the import carries it, so the fan steps
    33 -> 66 -> 100 as Home Assistant's 3-speed fan does, not by 1 %."""
    home = imported_desk_fan(registry)
    assert home.entities[DESK].capabilities["percentage_step"] == pytest.approx(33.33, abs=0.01)
    steps = []
    for _ in range(2):
        call(home, "increase_speed", DESK)
        steps.append(home.state(DESK).attributes["percentage"])
    assert steps == [66, 100]


def test_an_inventory_fans_speed_count_is_its_percentage_step() -> None:
    """synthetic-home's fan arguments: speed_count and current_direction, as HA shows them."""
    attributes = {
        "supported_features": ["fan.FanEntityFeature.SET_SPEED", "fan.FanEntityFeature.DIRECTION"],
        "percentage": 25,
        "speed_count": 4,
        "current_direction": "reverse",
    }
    home, _ = import_ha_snapshot({"entities": [{"id": DESK, "attributes": attributes}]})
    shown = home.state(DESK).attributes
    assert (shown["percentage_step"], shown["direction"]) == (25.0, "reverse")
    assert not {"speed_count", "current_direction"} & set(shown)
    call(home, "decrease_speed", DESK)
    assert home.state(DESK).attributes["percentage"] == 0


@pytest.mark.parametrize("count", [0, -1, 2.5, "four", True])
def test_an_inventory_fan_with_a_bad_speed_count_is_refused(count: Any) -> None:
    attributes = {"supported_features": SET_SPEED, "speed_count": count}
    with pytest.raises(HomeDefinitionError, match="speed_count"):
        import_ha_snapshot({"entities": [{"id": DESK, "attributes": attributes}]})

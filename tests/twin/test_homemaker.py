"""HomeMaker: seeded homes that are valid, varied, sized as asked and in a state that fits the
weather, the time of day and the household."""

from __future__ import annotations

import ast
import io
import statistics
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

import twin
from twin.catalog import load_catalog
from twin.domains import weather
from twin.domains.climate import derive_hvac_action
from twin.errors import HomeDefinitionError
from twin.home import Home
from twin.homemaker import (
    HomePlan,
    build_home,
    load_priors,
    make_home,
    plan_home,
    summary,
)
from twin.physics import OUTDOOR_CO2, OUTDOOR_PM25
from twin.weather import Weather, city

SAMPLE = 1000
TYPES = ("studio", "apartment", "house", "duplex", "villa")


@pytest.fixture(scope="module")
def sample() -> list[tuple[HomePlan, Home]]:
    """A thousand homes of every type, size, city and time of year and day."""
    plans = [plan_home(seed) for seed in range(SAMPLE)]
    return [(plan, build_home(plan)) for plan in plans]


def fingerprint(home: Home) -> dict[str, Any]:
    """Everything a home is: registries, states (hidden memory included), rooms and time."""
    return {
        "name": home.name,
        "now": home.now,
        "floors": home.floors,
        "areas": home.areas,
        "devices": home.devices,
        "entities": home.entities,
        "states": {
            entity_id: (s.state, s.attributes, s.hidden, s.last_changed, s.last_updated)
            for entity_id, s in home.states.items()
        },
        "rooms": home.rooms,
    }


# --- determinism ------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, 2**40])
def test_the_same_seed_makes_the_same_home(seed: int) -> None:
    assert fingerprint(make_home(seed)) == fingerprint(make_home(seed))
    assert plan_home(seed, "villa", "large") == plan_home(seed, "villa", "large")


def test_different_seeds_make_different_homes() -> None:
    plans = [plan_home(seed) for seed in range(50)]
    layouts = {tuple(device.name for device in plan.devices) for plan in plans}
    assert len(layouts) == len(plans)
    assert len({plan.home_type for plan in plans}) == len(TYPES)
    assert len({plan.city for plan in plans}) > 20


def test_naming_the_city_or_time_keeps_the_layout() -> None:
    plan = plan_home(7, "house", "medium")
    moved = plan_home(7, "house", "medium", city="Oslo", when=datetime(2026, 1, 5, 8, 0))
    assert moved.city == "Oslo"
    assert (moved.rooms, moved.devices, moved.household) == (
        plan.rooms,
        plan.devices,
        plan.household,
    )


def test_start_times() -> None:
    offset = timedelta(hours=city("Tokyo").utc_offset)
    local = datetime(2026, 7, 1, 21, 30)
    assert (
        plan_home(3, city="Tokyo", when=local).when
        == (local - offset).replace(tzinfo=UTC).timestamp()
    )
    aware = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)
    assert plan_home(3, city="Tokyo", when=aware).when == aware.timestamp()
    assert plan_home(3, when=1_780_000_000).when == 1_780_000_000.0
    drawn = [plan_home(seed).when for seed in range(200)]
    assert len(set(drawn)) == len(drawn)
    year = datetime(2026, 1, 1, tzinfo=UTC).timestamp()
    assert all(year - 86400 <= when <= year + 366 * 86400 for when in drawn)
    home = make_home(3, city="tokyo", when=local)
    assert home.now == plan_home(3, city="Tokyo", when=local).when
    assert home.weather == Weather("Tokyo", 3)


# --- validity ---------------------------------------------------------------------------------


def check_light(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    assert state.state in ("on", "off")
    brightness = attributes.get("brightness")
    assert brightness is None or 0 <= brightness <= 255
    modes = caps["supported_color_modes"]
    if state.state == "on":
        assert attributes["color_mode"] in modes
        assert (brightness is None) == (modes == ["onoff"])
    kelvin = attributes.get("color_temp_kelvin")
    if kelvin is not None:
        assert caps["min_color_temp_kelvin"] <= kelvin <= caps["max_color_temp_kelvin"]
    for key in ("rgb_color", "rgbw_color", "rgbww_color"):
        assert all(0 <= channel <= 255 for channel in attributes.get(key) or ())


def check_climate(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    assert state.state in caps["hvac_modes"]
    for key in ("temperature", "target_temp_low", "target_temp_high"):
        value = attributes.get(key)
        assert value is None or caps["min_temp"] <= value <= caps["max_temp"]
        if state.state in ("heat", "cool", "heat_cool"):
            assert value is None or 19 <= value <= 24
    if "hvac_action" in attributes:
        assert attributes["hvac_action"] == derive_hvac_action(state.state, attributes)
    for key, options in (("fan_mode", "fan_modes"), ("swing_mode", "swing_modes")):
        if key in attributes:
            assert attributes[key] in caps[options]


def check_cover(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    position = attributes.get("current_position", state.hidden.get("current_position"))
    assert state.state in ("open", "closed")
    assert attributes["is_closed"] == (state.state == "closed")
    if position is not None:
        assert 0 <= position <= 100
        assert (position == 0) == (state.state == "closed")
    tilt = attributes.get("current_tilt_position")
    assert tilt is None or 0 <= tilt <= 100


def check_fan(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    assert state.state in ("on", "off")
    percentage = attributes.get("percentage")
    assert percentage is None or 0 <= percentage <= 100
    preset = attributes.get("preset_mode")
    assert preset is None or preset in caps["preset_modes"]


def check_media_player(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    assert state.state in ("off", "on", "idle", "playing", "paused")
    volume = attributes.get("volume_level")
    assert volume is None or 0 <= volume <= 1
    source = attributes.get("source")
    assert source is None or source in caps["source_list"]
    mode = attributes.get("sound_mode")
    assert mode is None or mode in caps["sound_mode_list"]


def check_humidifier(state: Any, caps: dict[str, Any]) -> None:
    assert state.state in ("on", "off")
    assert caps["min_humidity"] <= state.attributes["humidity"] <= caps["max_humidity"]
    assert state.attributes["mode"] in caps["available_modes"]


def check_water_heater(state: Any, caps: dict[str, Any]) -> None:
    attributes = state.attributes
    assert state.state in caps["operation_list"]
    assert caps["min_temp"] <= attributes["temperature"] <= caps["max_temp"]
    assert attributes["away_mode"] in ("on", "off")


def check_vacuum(state: Any, caps: dict[str, Any]) -> None:
    assert state.state in ("docked", "cleaning")
    speed = state.attributes.get("fan_speed")
    assert speed is None or speed in caps["fan_speed_list"]


def check_number(state: Any, caps: dict[str, Any]) -> None:
    float(state.state)


def check_select(state: Any, caps: dict[str, Any]) -> None:
    assert state.state in caps["options"]


def one_of(*states: str) -> Callable[[Any, dict[str, Any]], None]:
    def check(state: Any, caps: dict[str, Any]) -> None:
        assert state.state in states

    return check


CHECKS: dict[str, Callable[[Any, dict[str, Any]], None]] = {
    "light": check_light,
    "climate": check_climate,
    "cover": check_cover,
    "fan": check_fan,
    "media_player": check_media_player,
    "humidifier": check_humidifier,
    "water_heater": check_water_heater,
    "vacuum": check_vacuum,
    "sensor": check_number,
    "lock": one_of("locked", "unlocked"),
    "valve": one_of("open", "closed"),
    "switch": one_of("on", "off"),
    "binary_sensor": one_of("on", "off"),
    "alarm_control_panel": one_of("disarmed", "armed_home", "armed_away", "armed_night"),
    "siren": one_of("off"),
    "lawn_mower": one_of("docked", "mowing"),
    "number": check_number,
    "select": check_select,
    "weather": one_of("sunny", "clear-night", "partlycloudy", "cloudy"),
}


def check_home(plan: HomePlan, home: Home) -> None:
    """Every device is a catalog type in an existing area with all its entities; every nested
    area's parent exists; names are unique; every state is within its entity's capabilities."""
    catalog = load_catalog()
    assert len(home.devices) == len(plan.devices)
    assert set(home.rooms) == set(home.areas)
    assert len({area.name for area in home.areas.values()}) == len(home.areas)
    assert len({device.name for device in home.devices.values()}) == len(home.devices)
    for area in home.areas.values():
        assert area.floor_id in home.floors
        if area.parent_id is not None:
            parent = home.areas[area.parent_id]
            assert parent.floor_id == area.floor_id
            assert area.parent_id != area.area_id
    entities_of: dict[str, list[str]] = {}
    for entity_id, entry in home.entities.items():
        # Every entity is a device's but the home's weather forecast, a service's.
        assert entry.device_id in home.devices or entity_id == weather.FORECAST
        entities_of.setdefault(entry.device_id or "", []).append(entity_id)
    for device_id, device in home.devices.items():
        assert device.device_type in catalog
        assert device.area_id in home.areas
        device_type = catalog[device.device_type]
        assert (device.manufacturer, device.model) in device_type.models
        domains = sorted(entity_id.partition(".")[0] for entity_id in entities_of[device_id])
        assert domains == sorted(spec.domain for spec in device_type.entities)
    for entity_id, state in home.states.items():
        caps = dict(home.entities[entity_id].capabilities)
        try:
            CHECKS[state.domain](state, caps)
        except (AssertionError, KeyError) as err:
            raise AssertionError(f"{plan.seed}: {entity_id} {state}") from err
    for room in home.rooms.values():
        assert -60 < room.temperature < 60
        assert 0 <= room.humidity <= 100
        assert room.illuminance >= 0
        assert room.co2 >= 400
        assert room.pm25 >= 0


def test_a_thousand_homes_are_valid(sample: list[tuple[HomePlan, Home]]) -> None:
    for plan, home in sample:
        check_home(plan, home)


def test_nested_rooms_sit_in_their_bedroom(sample: list[tuple[HomePlan, Home]]) -> None:
    nested = 0
    for plan, _ in sample:
        kinds = {room.area.area_id: room.kind for room in plan.rooms}
        for room in plan.rooms:
            if room.kind == "walk_in_closet":
                assert kinds[room.area.parent_id or ""] == "master_bedroom"
            if room.kind == "ensuite":
                assert kinds[room.area.parent_id or ""] in ("master_bedroom", "bedroom")
                nested += 1
            if room.kind not in ("walk_in_closet", "ensuite"):
                assert room.area.parent_id is None
    assert nested > SAMPLE / 4


def test_gardens_balconies_and_terraces_are_outdoors(
    sample: list[tuple[HomePlan, Home]],
) -> None:
    outdoors = {"garden", "balcony", "terrace"}
    seen = set()
    for plan, home in sample:
        for room in plan.rooms:
            area = home.areas[room.area.area_id]
            assert area == room.area
            assert area.outdoor == room.outdoor == (room.kind in outdoors)
            if area.outdoor:
                seen.add(room.kind)
    assert seen == outdoors


def test_outdoor_rooms_start_and_stay_in_the_weather() -> None:
    home = make_home(2, "house", city="Berlin", when=datetime(2026, 1, 20, 17, 0))
    outdoor_ids = [area_id for area_id, area in home.areas.items() if area.outdoor]
    assert outdoor_ids
    for hour in range(3):
        now = home.weather.at(home.now)
        for area_id in outdoor_ids:
            room = home.rooms[area_id]
            # HomeMaker writes the rooms as a home file shows them: to a hundredth of a degree.
            exact = 1e-9 if hour else 0.05
            assert room.temperature == pytest.approx(now.temperature, abs=exact)
            assert room.humidity == pytest.approx(now.humidity, abs=exact)
            assert (room.co2, room.pm25) == (OUTDOOR_CO2, OUTDOOR_PM25)
        home.advance(3600)


# Catalog types no room of the priors offers yet: a slot for them changes the draws of every
# seeded home that tests and benchmarks pin, so they come with a priors update that re-pins them.
UNPLACED = {
    "video_doorbell",
    "smart_button",
    "alarm_panel",
    "smart_alarm_system",
    "alarm_siren",
    "outdoor_siren",
    "robot_lawn_mower",
}


def test_every_catalog_type_is_placed(sample: list[tuple[HomePlan, Home]]) -> None:
    used = {device.device_type for plan, _ in sample for device in plan.devices}
    assert used == set(load_catalog()) - UNPLACED
    models = {(d.manufacturer, d.model) for _, home in sample for d in home.devices.values()}
    placed = [t for t in load_catalog().values() if t.type_id not in UNPLACED]
    assert len(models) == sum(len(t.models) for t in placed)


def test_the_priors_name_only_catalog_types() -> None:
    priors = load_priors()
    assert set(priors.labels) == set(load_catalog())
    for kind in priors.rooms.values():
        for slot in kind.slots:
            assert set(slot.types) <= set(priors.labels)


def test_rooms_and_devices_are_named_for_people() -> None:
    plan = next(
        plan_home(seed, "house")
        for seed in range(100)
        if plan_home(seed, "house").household.children
    )
    child = plan.household.children[0]
    assert f"{child}'s Room" in {room.area.name for room in plan.rooms}
    assert f"{child.lower()}_s_room" in {room.area.area_id for room in plan.rooms}
    home = build_home(plan)
    names = {device.name for device in home.devices.values()}
    assert any(name.startswith("Living Room ") for name in names)
    assert plan.name == f"{plan.household.surname} House"


# --- sizes ------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(TYPES), st.floats(0, 1))
def test_any_seed_type_and_count_makes_a_valid_home(
    seed: int, home_type: str, share: float
) -> None:
    low, high = load_priors().home_types[home_type].devices
    size = round(low + share * (high - low))
    plan = plan_home(seed, home_type, size)
    assert len(plan.devices) == size
    check_home(plan, build_home(plan))


@pytest.mark.parametrize(("home_type", "low", "high"), [("studio", 5, 15), ("villa", 50, 150)])
def test_size_bounds(home_type: str, low: int, high: int) -> None:
    for seed in range(20):
        assert len(plan_home(seed, home_type, low).devices) == low
        assert len(plan_home(seed, home_type, high).devices) == high
    counts = {size: [len(plan_home(s, home_type, size).devices) for s in range(30)] for size in
              ("small", "medium", "large")}  # fmt: skip
    assert all(low <= n <= high for ns in counts.values() for n in ns)
    assert max(counts["small"]) <= min(counts["large"])
    assert statistics.mean(counts["small"]) < statistics.mean(counts["medium"])
    assert statistics.mean(counts["medium"]) < statistics.mean(counts["large"])


def test_a_villa_of_150_devices_is_a_real_home() -> None:
    home = make_home(9, "villa", 150)
    assert len(home.devices) == 150
    assert 2 <= len(home.floors) <= 4
    assert len(home.areas) >= 20
    assert len(home.entities) > 200


def test_a_device_count_picks_a_type_that_fits() -> None:
    assert plan_home(1, size=130).home_type == "villa"
    assert plan_home(1, size=6).home_type == "studio"
    assert {plan_home(seed, size=30).home_type for seed in range(40)} == {
        "apartment",
        "house",
        "duplex",
    }


def test_floors_by_home_type(sample: list[tuple[HomePlan, Home]]) -> None:
    floors: dict[str, set[int]] = {}
    for plan, _ in sample:
        above = [floor for floor in plan.floors if floor.level >= 0]
        floors.setdefault(plan.home_type, set()).add(len(above))
        if any(floor.level < 0 for floor in plan.floors):
            assert plan.home_type == "villa"
    assert floors == {
        "studio": {1},
        "apartment": {1},
        "house": {1, 2},
        "duplex": {2},
        "villa": {2, 3},
    }


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"home_type": "castle"}, "Unknown home type 'castle'; choose one of: studio"),
        ({"home_type": "studio", "size": 40}, "A studio has 5-15 devices, got size 40"),
        ({"size": 400}, "No home type has 400 devices"),
        ({"size": "huge"}, "size must be a device count or one of"),
        ({"size": True}, "size must be a device count"),
        ({"size": 2.5}, "size must be a device count"),
        ({"city": "Atlantis"}, "no built-in weather for city 'Atlantis'"),
    ],
)
def test_bad_arguments_say_what_to_ask_for(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(HomeDefinitionError, match=message):
        make_home(1, **arguments)


# --- the initial state ------------------------------------------------------------------------


def at(hour: int, month: int = 3) -> Callable[[int], Home]:
    """A home of `seed` at `hour` local time on the 10th of `month`, in a mid-latitude city."""
    return lambda seed: make_home(seed, city="Paris", when=datetime(2026, month, 10, hour, 30))


def count(home: Home, domain: str, state: str) -> int:
    return sum(s.state == state for s in home.states.values() if s.domain == domain)


def test_lights_are_on_more_at_night_than_at_noon() -> None:
    night = [count(at(22)(seed), "light", "on") for seed in range(120)]
    noon = [count(at(12)(seed), "light", "on") for seed in range(120)]
    assert statistics.mean(noon) < 0.4
    assert statistics.mean(night) > 2 + 5 * statistics.mean(noon)


def test_air_conditioners_cool_on_hot_afternoons_and_heat_on_cold_days() -> None:
    hot = [make_home(s, city="Phoenix", when=datetime(2026, 7, 20, 15, 0)) for s in range(120)]
    cold = [make_home(s, city="Harbin", when=datetime(2026, 1, 20, 15, 0)) for s in range(120)]
    assert all(home.weather.at(home.now).temperature > 30 for home in hot)
    assert all(home.weather.at(home.now).temperature < 5 for home in cold)
    assert sum(count(h, "climate", "cool") for h in hot) > 20
    assert sum(count(h, "climate", "cool") for h in cold) == 0
    assert sum(count(h, "climate", "heat") for h in cold) > 3 * sum(
        count(h, "climate", "heat") for h in hot
    )
    indoor_hot = [r.temperature for h in hot for a, r in h.rooms.items() if a != "garden"]
    indoor_cold = [r.temperature for h in cold for a, r in h.rooms.items()]
    assert statistics.mean(indoor_hot) > statistics.mean(indoor_cold) + 5


def test_heating_warms_rooms_towards_their_setpoints() -> None:
    heated, unheated = [], []
    for seed in range(60):
        plan = plan_home(seed, city="Harbin", when=datetime(2026, 1, 20, 20, 0))
        home = build_home(plan)
        indoors = {room.area.area_id for room in plan.rooms if not room.outdoor}
        any_heat = any(s.domain == "climate" and s.state == "heat" for s in home.states.values())
        heating = {
            home.area_of(entity_id)
            for entity_id, state in home.states.items()
            if state.domain == "climate" and state.attributes.get("hvac_action") == "heating"
        }
        for area_id in indoors:
            if area_id in heating:
                heated.append(home.rooms[area_id].temperature)
            elif not any_heat:
                unheated.append(home.rooms[area_id].temperature)
    assert heated
    assert unheated
    assert max(heated) < 24
    assert statistics.mean(heated) > statistics.mean(unheated) + 3


def test_doors_are_locked_and_shades_closed_at_night() -> None:
    homes = [at(3)(seed) for seed in range(80)]
    locks = [s.state for h in homes for s in h.states.values() if s.domain == "lock"]
    assert locks
    assert set(locks) == {"locked"}
    shades = [
        s.state
        for h in homes
        for s in h.states.values()
        if s.domain == "cover" and s.attributes.get("device_class") in ("blind", "curtain", "shade")
    ]
    assert shades.count("closed") > 0.75 * len(shades)


def test_hot_sunny_afternoons_close_shades_part_way() -> None:
    homes = [make_home(s, city="Phoenix", when=datetime(2026, 7, 20, 14, 0)) for s in range(60)]
    positions = [
        s.attributes["current_position"]
        for h in homes
        for s in h.states.values()
        if s.domain == "cover" and s.attributes.get("device_class") in ("blind", "curtain", "shade")
    ]
    assert sum(0 < p < 100 for p in positions) > 0.4 * len(positions)


def test_windows_stay_shut_in_the_cold() -> None:
    for seed in range(60):
        home = make_home(seed, "villa", city="Moscow", when=datetime(2026, 1, 20, 13, 0))
        for state in home.states.values():
            if state.attributes.get("device_class") == "window" and state.domain == "cover":
                assert state.state == "closed"


def test_vacuums_are_docked_most_of_the_time(sample: list[tuple[HomePlan, Home]]) -> None:
    vacuums = [s.state for _, h in sample for s in h.states.values() if s.domain == "vacuum"]
    assert vacuums.count("docked") > 0.8 * len(vacuums)
    assert "cleaning" in vacuums


def test_tvs_are_on_some_evenings() -> None:
    tvs = [
        s.state
        for seed in range(80)
        for s in at(21)(seed).states.values()
        if s.domain == "media_player" and s.attributes.get("device_class") == "tv"
    ]
    assert 0.1 * len(tvs) < sum(state != "off" for state in tvs) < 0.6 * len(tvs)


def test_sensors_read_the_rooms() -> None:
    home = make_home(5, "house", 70)
    for entity_id, state in home.states.items():
        if state.domain != "sensor" or state.attributes.get("device_class") != "temperature":
            continue
        area = home.area_of(entity_id)
        assert area is not None
        assert float(state.state) == pytest.approx(home.rooms[area].temperature, abs=0.06)


# --- the summary ------------------------------------------------------------------------------


def test_summary_counts_add_up(sample: list[tuple[HomePlan, Home]]) -> None:
    plans = [plan for plan, _ in sample]
    result = summary(plans)
    assert result.homes == SAMPLE
    assert sum(result.home_types.values()) == SAMPLE
    assert set(result.home_types) == set(TYPES)
    assert sum(result.sizes.values()) == SAMPLE
    assert sum(result.floors.values()) == SAMPLE
    assert sum(result.cities.values()) == SAMPLE
    assert sum(result.rooms.values()) == sum(len(plan.rooms) for plan in plans)
    devices = sum(len(home.devices) for _, home in sample)
    assert result.devices == devices
    assert sum(sum(counts) for counts in result.devices_per_home.values()) == devices
    assert sum(result.domains.values()) == sum(len(home.entities) for _, home in sample)
    assert min(result.devices_per_home["studio"]) >= 5
    assert max(result.devices_per_home["villa"]) <= 150


def test_summary_renders_as_a_table() -> None:
    result = summary(plan_home(seed) for seed in range(30))
    console = Console(file=io.StringIO(), width=120)
    console.print(result)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "30 homes" in text
    for row in ("home types", "devices per home", "rooms", "device types", "cities"):
        assert row in text


# --- the package ------------------------------------------------------------------------------


def imported_modules(path: Path, package: str) -> set[str]:
    """The absolute names of the modules (and `from x import y` names) a source file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(part for part in (base, node.module or "") if part)
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
    return names


def test_the_home_generator_is_a_folder_of_its_own() -> None:
    """Only the twin's CLI imports HomeMaker: the twin itself needs none of its parts."""
    root = Path(twin.__file__).parent
    importers = set()
    for path in sorted(root.rglob("*.py")):
        if root / "homemaker" in path.parents:
            continue
        parts = path.relative_to(root.parent).with_suffix("").parts
        package = ".".join(parts if path.name == "__init__.py" else parts[:-1])
        if any(name.startswith("twin.homemaker") for name in imported_modules(path, package)):
            importers.add(path.relative_to(root).as_posix())
    assert importers == {"cli.py"}
    assert (root / "homemaker" / "homemaker.yaml").is_file()

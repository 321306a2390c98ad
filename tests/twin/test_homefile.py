"""Home files and Home Assistant snapshots: exact round trips, imports, and every bad input."""

from __future__ import annotations

import copy
import json
import os
import time
from collections.abc import Callable
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains import DOMAINS, RULES, feature_mask
from twin.domains.rules import ANY_ENTITY_STATES, MAX_TEMPERATURE, MIN_TEMPERATURE
from twin.errors import HomeDefinitionError
from twin.home import Home
from twin.homefile import (
    dump_home,
    export_ha_snapshot,
    import_ha_snapshot,
    load_home,
    save_home,
)
from twin.outdoor import ConstantWeather, Outdoor
from twin.registry import Area, Device, EntityEntry, Floor
from twin.room import RoomClimate
from twin.state import State
from twin.weather import Weather, cities

DEMO = files("twin.examples").joinpath("demo_home.yaml")
ENTITY_ATTRIBUTES = ("friendly_name", "device_class", "unit_of_measurement", "supported_features")
READ_KEYS = frozenset(key for rules in RULES.values() for key in rules.values)


# --- comparing homes -----------------------------------------------------------------------------


def typed(value: Any) -> Any:
    """A form of `value` that is equal only for values of the same types (True is not 1)."""
    if isinstance(value, dict):
        return ("dict", sorted((repr(key), typed(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(item) for item in value])
    return (type(value).__name__, value)


def assert_same_home(loaded: Home, home: Home) -> None:
    assert (loaded.name, loaded.now) == (home.name, home.now)
    assert loaded.floors == home.floors
    assert loaded.areas == home.areas
    assert loaded.devices == home.devices
    assert loaded.entities == home.entities
    assert {key: typed(entry.capabilities) for key, entry in loaded.entities.items()} == {
        key: typed(entry.capabilities) for key, entry in home.entities.items()
    }
    assert states_of(loaded) == states_of(home)
    assert loaded.rooms == home.rooms
    assert loaded.weather == home.weather


def states_of(home: Home) -> dict[str, Any]:
    return {
        entity_id: (
            state.state,
            typed(state.attributes),
            typed(state.hidden),
            state.last_changed,
            state.last_updated,
        )
        for entity_id, state in home.states.items()
    }


# --- generated homes -----------------------------------------------------------------------------

SLUGS = st.from_regex(r"[a-z][a-z0-9]{0,4}", fullmatch=True)
NAMES = st.text(min_size=1, max_size=10)
# Whole microseconds: Home Assistant's resolution, and what an ISO time keeps.
TIMES = st.integers(0, 4_000_000_000 * 10**6).map(lambda microseconds: microseconds / 1e6)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
CATALOG_NAMES = ["Desk Plug", "Kettle", "Hall Switch", "TV Socket"]
# Air temperatures within what a home may hold (twin.domains.rules).
TEMPERATURES = st.floats(MIN_TEMPERATURE, MAX_TEMPERATURE)
AMOUNTS = st.floats(min_value=0, allow_infinity=False)
ROOMS = st.builds(RoomClimate, TEMPERATURES, st.floats(0, 100), AMOUNTS, AMOUNTS, AMOUNTS)
WEATHERS = (
    st.just(ConstantWeather())
    | st.builds(
        ConstantWeather,
        st.builds(Outdoor, TEMPERATURES, st.floats(0, 100), st.floats(-90, 90), st.floats(0, 1)),
    )
    | st.builds(Weather, st.sampled_from(sorted(cities())), st.integers(-(2**40), 2**40))
)


def values(tuples: bool) -> st.SearchStrategy[Any]:
    def nest(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        nested = st.lists(children, max_size=3) | st.dictionaries(
            st.text(max_size=4), children, max_size=3
        )
        return (nested | st.lists(children, max_size=3).map(tuple)) if tuples else nested

    return st.recursive(SCALARS, nest, max_leaves=5)


def maybe(known: dict[str, Any]) -> st.SearchStrategy[str | None]:
    return st.none() | st.sampled_from(sorted(known)) if known else st.none()


def states(domain: str) -> st.SearchStrategy[str]:
    """A state the domain's Home Assistant entity can write; any text where it has no list nor
    form (a time's, a count's); only Home Assistant's own states where it has a form, or where the
    state is tied to the entity's other keys (a number's, a select's)."""
    allowed = RULES[domain].states
    if RULES[domain].state is not None or (
        allowed is None and RULES[domain].consistent is not None
    ):
        return st.sampled_from(sorted(ANY_ENTITY_STATES))
    if allowed is None:
        return st.text(max_size=8)
    return st.sampled_from(sorted(allowed | ANY_ENTITY_STATES))


@st.composite
def homes(draw: st.DrawFn, tuples: bool = True) -> Home:
    """Small homes of every kind of part; `tuples=False` keeps to what JSON can carry."""
    # Keys that no domain reads (twin.domains.rules), as what they hold is not what it reads.
    keys = st.text(max_size=6).filter(lambda key: key not in READ_KEYS)
    mappings = st.dictionaries(keys, values(tuples), max_size=3)
    home = Home(draw(NAMES), draw(TIMES))
    for floor_id in draw(st.lists(SLUGS, max_size=3, unique=True)):
        home.add_floor(Floor(floor_id, draw(NAMES), draw(st.integers(-3, 9))))
    for area_id in draw(st.lists(SLUGS, max_size=4, unique=True)):
        home.add_area(
            Area(
                area_id,
                draw(NAMES),
                draw(maybe(home.floors)),
                draw(maybe(home.areas)),
                draw(st.booleans()),
            )
        )
    for device_id in draw(st.lists(SLUGS, max_size=3, unique=True)):
        device_type = draw(st.sampled_from([None, "smart_plug", "retired_type"]))
        optional_names = st.none() | NAMES
        home.add_device(
            Device(
                f"d{device_id}",
                draw(NAMES),
                draw(optional_names),
                draw(optional_names),
                draw(maybe(home.areas)),
                device_type,
            )
        )
    catalog = load_catalog()
    installs = st.lists(
        st.tuples(st.sampled_from(sorted(catalog)), st.sampled_from(CATALOG_NAMES)),
        max_size=3,
        unique_by=lambda install: install[1],
    )
    for index, (type_id, device_name) in enumerate(draw(installs)):
        place = draw(maybe(home.areas))
        catalog[type_id].install(home, f"c{index}", device_name, place, draw(st.integers(0, 5)))
    for object_id in draw(st.lists(SLUGS, max_size=4, unique=True)):
        domain = draw(st.sampled_from(sorted(DOMAINS)))
        entry = EntityEntry(
            entity_id=f"{domain}.x{object_id}",
            name=draw(NAMES),
            device_id=draw(maybe(home.devices)),
            area_id=draw(maybe(home.areas)),
            device_class=draw(st.none() | NAMES),
            unit_of_measurement=draw(st.none() | NAMES),
            supported_features=draw(st.integers(0, 2**20)) & (feature_mask(domain) or 0),
            entity_category=draw(st.none() | st.sampled_from(["config", "diagnostic"])),
            capabilities=draw(mappings),
        )
        home.add_entity(entry, draw(states(domain)), draw(mappings))
    changed = (
        draw(st.lists(st.sampled_from(sorted(home.states)), unique=True)) if home.states else []
    )
    for entity_id in changed:
        old = home.states[entity_id]
        # Home Assistant snapshots carry what Home Assistant shows: capabilities and the
        # registry's attributes stay as the entity's registry entry says.
        kept = set() if tuples else {*ENTITY_ATTRIBUTES, *home.entities[entity_id].capabilities}
        attributes = {
            key: value
            for key, value in old.attributes.items()
            if key in kept or draw(st.booleans())
        }
        attributes |= {key: value for key, value in draw(mappings).items() if key not in kept}
        if draw(st.booleans()):
            attributes["hs_color"] = (draw(st.floats(0, 360)), draw(st.floats(0, 100)))
        home.states[entity_id] = State(
            entity_id,
            draw(states(home.entities[entity_id].domain)),
            attributes,
            draw(TIMES),
            draw(TIMES),
            draw(mappings),
        )
    for area_id in home.areas:
        if draw(st.booleans()):
            home.rooms[area_id] = draw(ROOMS)
    home.weather = draw(WEATHERS)
    home.now = draw(TIMES)
    return home


# --- home files: round trips ---------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes())
def test_a_dumped_home_loads_back_equal(home: Home) -> None:
    assert_same_home(load_home(dump_home(home)), home)


@settings(max_examples=75, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes())
def test_dumping_is_deterministic(home: Home) -> None:
    text = dump_home(home)
    assert dump_home(home.copy()) == text
    assert dump_home(load_home(text)) == text


def test_the_demo_home_loads() -> None:
    home = load_home(DEMO)
    assert home.name == "Demo Home"
    assert home.areas["ensuite"] == Area("ensuite", "Ensuite", "upstairs", "bedroom")
    assert home.devices["bedside_plug"] == Device(
        "bedside_plug", "Bedside Plug", "Eve", "Energy", "bedroom", "smart_plug"
    )
    assert home.devices["kettle_plug"].manufacturer == "TP-Link"
    assert home.state("switch.kettle_plug").state == "on"
    assert home.state("switch.kettle_plug").last_changed == home.now - 300
    assert home.state("switch.bedside_plug").state == "off"
    assert home.state("sensor.outdoor_temperature").attributes == {
        "state_class": "measurement",
        "device_class": "temperature",
        "unit_of_measurement": "°C",
        "friendly_name": "Outdoor Temperature",
    }
    assert_same_home(load_home(dump_home(home)), home)


def test_a_loaded_home_runs_services() -> None:
    home = load_home(DEMO)
    home.call_service("switch", "turn_off", target={"area_id": "kitchen"})
    assert home.state("switch.kettle_plug").state == "off"
    assert home.state("switch.floor_lamp").state == "off"


def test_a_catalog_home_is_written_by_device_type_only() -> None:
    home = Home()
    home.add_area(Area("study", "Study"))
    load_catalog()["smart_plug"].install(home, "plug", "Desk Plug", "study")
    text = dump_home(home)
    assert "entities: []" in text
    assert "states" not in text
    assert "type: smart_plug" in text


def test_only_what_changed_in_a_state_is_written() -> None:
    home = Home()
    load_catalog()["smart_plug"].install(home, "plug", "Desk Plug")
    old = home.state("switch.desk_plug")
    home.states[old.entity_id] = State(
        old.entity_id, "on", {"friendly_name": "Desk Plug", "rgb_color": (1, 2, 3)}, 5.0, 5.0
    )
    text = dump_home(home)
    assert "rgb_color: !tuple [1, 2, 3]" in text
    assert "removed_attributes:\n    - device_class" in text
    assert "friendly_name" not in text
    assert load_home(text).state("switch.desk_plug") == home.state("switch.desk_plug")


def test_a_value_of_another_type_is_a_change() -> None:
    home = Home()
    entry = EntityEntry("sensor.count", "Count", capabilities={"limit": 1, "levels": [0, 1]})
    home.add_entity(entry, "3")
    old = home.state("sensor.count")
    changed = {**old.attributes, "limit": True, "levels": (0, 1)}
    home.states[old.entity_id] = State(old.entity_id, "3", changed, old.last_changed, 7.0)
    assert_same_home(load_home(dump_home(home)), home)


def test_a_device_whose_entities_left_the_catalog_keeps_its_own() -> None:
    home = Home()
    load_catalog()["smart_plug"].install(home, "plug", "Desk Plug", model=1)
    entry = home.entities["sensor.desk_plug_power"]
    home.entities[entry.entity_id] = EntityEntry(
        entry.entity_id, "Renamed", entry.device_id, unit_of_measurement="kW"
    )
    text = dump_home(home)
    assert "install: false" in text
    assert "manufacturer: Shelly" in text
    assert_same_home(load_home(text), home)


def test_times_without_an_offset_are_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        unquoted = load_home("name: A\ntime: 2026-01-01T00:00:00Z\n")
        naive = load_home("name: A\ntime: '2026-01-01T00:00:00'\n")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert unquoted.now == naive.now == 1767225600.0


def test_weather_and_rooms_are_written_where_they_differ_from_the_defaults() -> None:
    home = Home()
    home.add_area(Area("study", "Study"))
    home.add_area(Area("hall", "Hall"))
    assert "weather" not in dump_home(home)
    assert "rooms" not in dump_home(home)
    home.weather = Weather("berlin", 7)
    home.rooms["study"] = RoomClimate(temperature=19.25, co2=812.5)
    text = dump_home(home)
    assert "weather:\n  city: Berlin\n  seed: 7\n" in text
    assert text.endswith("rooms:\n  study:\n    temperature: 19.25\n    co2: 812.5\n")
    loaded = load_home(text)
    assert_same_home(loaded, home)
    assert loaded.rooms["hall"] == RoomClimate()
    home.weather = ConstantWeather(Outdoor(-3.5, 90.0, -12.0, 1.0))
    assert "weather:\n  temperature: -3.5\n  humidity: 90.0\n" in dump_home(home)
    assert_same_home(load_home(dump_home(home)), home)


def test_outdoor_areas_are_written_as_such_and_load_back_outdoors() -> None:
    home = Home()
    home.add_area(Area("garden", "Garden", outdoor=True))
    home.add_area(Area("hall", "Hall"))
    text = dump_home(home)
    assert "- id: garden\n  name: Garden\n  outdoor: true\n- id: hall\n  name: Hall\n" in text
    loaded = load_home(text)
    assert loaded.areas["garden"].outdoor
    assert not loaded.areas["hall"].outdoor
    assert_same_home(loaded, home)
    exported = json.loads(json.dumps(export_ha_snapshot(home)))
    assert [area["outdoor"] for area in exported["areas"]] == [True, False]
    again, _ = import_ha_snapshot(exported)
    assert_same_home(again, home)
    # Home Assistant's own snapshots have no such key: their areas are indoors.
    for area in exported["areas"]:
        del area["outdoor"]
    assert not any(area.outdoor for area in import_ha_snapshot(exported)[0].areas.values())


def test_a_home_the_physics_moved_loads_back_and_runs_on_the_same() -> None:
    home = load_home(DEMO)
    home.weather = Weather("Oslo", 3)
    catalog = load_catalog()
    catalog["radiator_thermostat"].install(home, "trv", "Radiator", "bedroom")
    catalog["electric_water_heater"].install(home, "tank", "Tank", "kitchen")
    catalog["robot_vacuum"].install(home, "robot", "Robot", "living_room")
    catalog["co2_sensor"].install(home, "co2", "Air", "living_room")
    home.call_service("vacuum", "start", target={"entity_id": "vacuum.robot"})
    home.advance(5400)
    loaded = load_home(dump_home(home))
    assert_same_home(loaded, home)
    assert "tank_temperature" in loaded.state("water_heater.tank").hidden
    for twin in (home, loaded):
        twin.advance(3 * 3600)
    assert_same_home(loaded, home)
    assert home.state("vacuum.robot").state == "docked"


def test_a_weather_a_home_file_cannot_keep_is_refused() -> None:
    class Breeze:
        def at(self, timestamp: float) -> Outdoor:
            return Outdoor(10.0, 50.0, 0.0, 0.0)

    home = Home(weather=Breeze())
    with pytest.raises(HomeDefinitionError, match="Cannot write weather of type Breeze"):
        dump_home(home)


def test_a_home_loads_from_a_path_or_a_string_path(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    assert_same_home(load_home(str(path)), load_home(path))


# --- home files: bad input -----------------------------------------------------------------------

PLUG = "devices:\n  - {id: p, name: Plug, type: smart_plug}\n"
AREA = "areas:\n  - {id: a, name: A}\n"
BAD_HOMES = [
    ("name: [unclosed\n", "malformed YAML"),
    ("name: a\nname: b\n", "key 'name' twice"),
    ("- a\n- b\n", "expected a home file (a mapping), got list"),
    ("nmae: typo\n", "nmae: extra keys not allowed"),
    ("time: yesterday\n", "time: expected an ISO 8601 time"),
    ("floors:\n  - {id: g}\n", "floors[0].name: required key not provided"),
    ("floors:\n  - {id: g, name: G, level: high}\n", "floors[0].level: expected int"),
    (
        "floors:\n  - {id: g, name: A}\n  - {id: g, name: B}\n",
        "floors[1]: There is already a floor",
    ),
    ("areas:\n  - {id: a, name: A}\n  - {id: a, name: B}\n", "areas[1]: there is already an area"),
    ("areas:\n  - {id: a, name: A, floor: attic}\n", "areas[0]: No floor with id 'attic'"),
    ("areas:\n  - {id: a, name: A, parent: b}\n", "areas[0]: No area with id 'b'"),
    ("areas:\n  - {id: a, name: A, parent: a}\n", "areas[0]: parent 'a' is itself inside 'a'"),
    ("areas:\n  - {id: a, name: A, outdoor: maybe}\n", "areas[0].outdoor"),
    (
        "areas:\n  - {id: a, name: A, parent: b}\n  - {id: b, name: B, parent: a}\n",
        "areas[1]: parent 'a' is itself inside 'b'",
    ),
    ("devices:\n  - {id: d, name: D, area: attic}\n", "devices[0]: No area with id 'attic'"),
    (
        "devices:\n  - {id: d, name: D, type: toaster}\n",
        "devices[0]: type: no device type 'toaster'",
    ),
    (
        "devices:\n  - {id: d, name: D, tpye: smart_plug}\n",
        "devices[0].tpye: extra keys not allowed",
    ),
    (
        "devices:\n  - {id: d, name: D}\n  - {id: d, name: E}\n",
        "devices[1]: There is already a device",
    ),
    (
        PLUG + "  - {id: q, name: Plug, type: wall_switch}\n",
        "devices[1]: There is already a entity with id 'switch.plug'",
    ),
    ("devices:\n  - {id: d, name: D, install: maybe}\n", "devices[0].install: expected bool"),
    ("entities:\n  - {entity_id: switch.a, name: A}\n", "entities[0].state: required key"),
    ("entities:\n  - {entity_id: switch.a, name: A, state: on}\n", "a state is a string, got True"),
    ("entities:\n  - {entity_id: Switch.A, name: A, state: 'on'}\n", "'Switch.A' is not a valid"),
    ("entities:\n  - {entity_id: sun.sun, name: Sun, state: up}\n", "Domain 'sun' is not modelled"),
    (
        "entities:\n  - {entity_id: switch.a, name: A, state: 'on', device: hub}\n",
        "entities[0]: No device with id 'hub'",
    ),
    (
        "entities:\n  - {entity_id: switch.a, name: A, state: 'on', area: attic}\n",
        "entities[0]: No area with id 'attic'",
    ),
    (
        "entities:\n  - {entity_id: switch.a, name: A, state: 'on'}\n"
        "  - {entity_id: switch.a, name: B, state: 'on'}\n",
        "entities[1]: There is already a entity with id 'switch.a'",
    ),
    (
        PLUG + "entities:\n  - {entity_id: switch.plug, name: A, state: 'on'}\n",
        "entities[0]: There is already a entity with id 'switch.plug'",
    ),
    (
        "entities:\n  - {entity_id: switch.a, name: A, state: 'on', supported_features: all}\n",
        "entities[0].supported_features: expected int",
    ),
    ("states:\n  switch.ghost: {state: 'on'}\n", "states['switch.ghost']: the home has no entity"),
    (PLUG + "states:\n  switch.plug: {state: off}\n", "states['switch.plug'].state: a state is"),
    (PLUG + "states:\n  switch.plug: {attributes: [1]}\n", "states['switch.plug'].attributes"),
    (PLUG + "states:\n  switch.plug: {removed_attributes: x}\n", "removed_attributes: expected"),
    (PLUG + "states:\n  switch.plug: {last_changed: soon}\n", "last_changed: expected an ISO"),
    (PLUG + "states:\n  switch.plug: {state: 'on', colour: red}\n", "colour: extra keys not"),
    ("states: [switch.plug]\n", "states: expected a dictionary"),
    ("weather: {city: Atlantis, seed: 1}\n", "weather: no built-in weather for city 'Atlantis'"),
    ("weather: {city: Oslo}\n", "weather.seed: required key not provided"),
    (
        "weather: {temperature: 1, humidity: 50, sun_elevation: 0}\n",
        "weather.cloud_cover: required key not provided",
    ),
    (
        "weather: {temperature: 1, humidity: 120, sun_elevation: 0, cloud_cover: 0}\n",
        "weather.humidity: expected 0-100, got 120",
    ),
    (
        "weather: {temperature: .inf, humidity: 50, sun_elevation: 0, cloud_cover: 0}\n",
        "weather.temperature: expected a finite number, got inf",
    ),
    ("weather: sunny\n", "weather: expected a dictionary"),
    ("rooms:\n  attic: {co2: 500}\n", "rooms['attic']: the home has no area 'attic'"),
    (AREA + "rooms:\n  a: {co2: -1}\n", "rooms.a.co2: expected 0 or more, got -1"),
    (AREA + "rooms:\n  a: {temperature: .nan}\n", "rooms.a.temperature: expected a finite"),
    (AREA + "rooms:\n  a: {humidity: true}\n", "rooms.a.humidity: expected a finite number"),
    (AREA + "rooms:\n  a: {noise: 3}\n", "rooms.a.noise: extra keys not allowed"),
    ("attributes: !tuple 5\n", "!tuple needs a sequence"),
]


@pytest.mark.parametrize(("text", "message"), BAD_HOMES)
def test_bad_home_files_are_refused_by_key(text: str, message: str) -> None:
    with pytest.raises(HomeDefinitionError) as caught:
        load_home(text)
    assert str(caught.value).startswith("home text: ")
    assert message in str(caught.value)
    assert caught.value.code == "invalid_home"


def test_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("devices:\n  - {id: d, name: D, type: toaster}\n", encoding="utf-8")
    with pytest.raises(HomeDefinitionError, match=r"broken\.yaml: devices\[0\]: type: no device"):
        load_home(path)


def test_a_missing_file_is_a_home_definition_error(tmp_path: Path) -> None:
    with pytest.raises(HomeDefinitionError, match=r"Cannot read .*missing\.yaml"):
        load_home(tmp_path / "missing.yaml")


def test_an_attribute_yaml_cannot_write_is_a_home_definition_error() -> None:
    home = Home()
    home.add_entity(EntityEntry("switch.a", "A"), "on", {"thing": object()})
    with pytest.raises(HomeDefinitionError, match="Cannot write home 'Home' as YAML"):
        dump_home(home)


# --- saving --------------------------------------------------------------------------------------


def test_save_home_writes_a_file_that_loads_back(tmp_path: Path) -> None:
    home = load_home(DEMO)
    path = tmp_path / "home.yaml"
    save_home(home, path)
    save_home(home, str(path))
    assert_same_home(load_home(path), home)
    assert list(tmp_path.iterdir()) == [path]


def _half_writing(path: Path, text: str, **kwargs: Any) -> int:
    """Path.write_text that writes half of the text, then fails as a full disk does."""
    with path.open("w", **kwargs) as file:
        file.write(text[: len(text) // 2])
    raise OSError(28, "No space left on device")


def _fails(*args: Any, **kwargs: Any) -> None:
    raise OSError(5, "Input/output error")


@pytest.mark.parametrize("failure", ["write", "fsync", "replace"])
def test_a_failed_save_leaves_the_old_file_intact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    path = tmp_path / "home.yaml"
    home = load_home(DEMO)
    save_home(home, path)
    before = path.read_text(encoding="utf-8")
    home.call_service("switch", "turn_on", target={"entity_id": "switch.bedside_plug"})
    if failure == "write":
        monkeypatch.setattr(Path, "write_text", _half_writing)
    else:
        monkeypatch.setattr(os, failure, _fails)
    with pytest.raises(OSError, match=r"No space left|Input/output"):
        save_home(home, path)
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == before
    assert list(tmp_path.iterdir()) == [path]
    save_home(home, path)
    assert load_home(path).state("switch.bedside_plug").state == "on"


# --- Home Assistant snapshots --------------------------------------------------------------------

CREATED = "2025-11-02T09:14:03.512345+00:00"
LIGHT_ATTRIBUTES: dict[str, Any] = {
    "min_color_temp_kelvin": 2202,
    "max_color_temp_kelvin": 6535,
    "effect_list": ["None", "candle", "fire"],
    "supported_color_modes": ["color_temp", "xy"],
    "effect": "None",
    "color_mode": "xy",
    "brightness": 180,
    "color_temp_kelvin": None,
    "hs_color": [30.0, 60.0],
    "rgb_color": [255, 191, 102],
    "xy_color": [0.5, 0.41],
    "friendly_name": "Sofa Lamp",
    "supported_features": 44,
}
CLIMATE_ATTRIBUTES: dict[str, Any] = {
    "hvac_modes": ["off", "heat", "cool", "heat_cool"],
    "min_temp": 7.0,
    "max_temp": 35.0,
    "fan_modes": ["auto", "on"],
    "preset_modes": ["home", "away", "sleep"],
    "current_temperature": 19.5,
    "temperature": 21.0,
    "target_temp_high": None,
    "target_temp_low": None,
    "fan_mode": "auto",
    "hvac_action": "heating",
    "preset_mode": "home",
    "friendly_name": "Bedroom Thermostat",
    "supported_features": 409,
}


def _device(
    device_id: str, name: str, maker: str | None, model: str | None, area: str | None
) -> dict[str, Any]:
    return {
        "id": device_id,
        "name": name,
        "name_by_user": None,
        "manufacturer": maker,
        "model": model,
        "area_id": area,
        "config_entries": ["01JBX0Q5AKR0W1Q4S2V8F3M7TN"],
        "identifiers": [["zha", device_id]],
        "sw_version": "1.104.2",
        "via_device_id": None,
        "entry_type": None,
        "disabled_by": None,
    }


def _entity(entity_id: str, device_id: str | None, **fields: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "entity_id": entity_id,
        "device_id": device_id,
        "area_id": None,
        "name": None,
        "original_name": None,
        "device_class": None,
        "original_device_class": None,
        "unit_of_measurement": None,
        "supported_features": 0,
        "entity_category": None,
        "capabilities": None,
        "disabled_by": None,
        "hidden_by": None,
        "platform": "zha",
        "unique_id": f"{entity_id}-unique",
        "icon": None,
        "options": {},
    }
    return entry | fields


def _state(entity_id: str, state: str, attributes: dict[str, Any], when: str) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "state": state,
        "attributes": attributes,
        "last_changed": when,
        "last_reported": when,
        "last_updated": when,
        "context": {"id": "01JC2Y6Q0M3V9J8S5T4R2W1X0Z", "parent_id": None, "user_id": None},
    }


HA_SNAPSHOT: dict[str, Any] = {
    "floors": [
        {
            "floor_id": "ground_floor",
            "name": "Ground floor",
            "level": 0,
            "aliases": [],
            "icon": None,
        },
        {"floor_id": "first_floor", "name": "First floor", "level": 1, "aliases": [], "icon": None},
        {"floor_id": "loft", "name": "Loft", "level": None, "aliases": [], "icon": None},
    ],
    "areas": [
        {
            "area_id": "living_room",
            "name": "Living Room",
            "floor_id": "ground_floor",
            "aliases": [],
            "icon": "mdi:sofa",
            "picture": None,
            "labels": [],
            "humidity_entity_id": None,
            "temperature_entity_id": None,
        },
        {"area_id": "kitchen", "name": "Kitchen", "floor_id": "ground_floor", "icon": None},
        {"area_id": "bedroom", "name": "Bedroom", "floor_id": "first_floor", "icon": None},
    ],
    "devices": [
        _device("0f3ca1", "Hue color lamp 1", "Signify Netherlands B.V.", "LCA001", "living_room")
        | {"name_by_user": "Sofa Lamp"},
        _device("7a1e22", "Bedroom Thermostat", "ecobee Inc.", "ecobee3 lite", "bedroom"),
        _device("c2d433", "Kitchen Multisensor", "Aeotec", "ZW100", "kitchen"),
        _device("9b8c44", "Coffee Machine Plug", "IKEA of Sweden", "TRETAKT", "kitchen"),
        _device("5e9f55", "Sun", None, None, None) | {"entry_type": "service"},
    ],
    "entities": [
        _entity(
            "light.sofa_lamp",
            "0f3ca1",
            supported_features=44,
            capabilities={
                "min_color_temp_kelvin": 2202,
                "max_color_temp_kelvin": 6535,
                "effect_list": ["None", "candle", "fire"],
                "supported_color_modes": ["color_temp", "xy"],
            },
        ),
        _entity(
            "climate.bedroom_thermostat",
            "7a1e22",
            supported_features=409,
            capabilities={
                "hvac_modes": ["off", "heat", "cool", "heat_cool"],
                "min_temp": 7.0,
                "max_temp": 35.0,
                "fan_modes": ["auto", "on"],
                "preset_modes": ["home", "away", "sleep"],
            },
        ),
        _entity(
            "sensor.kitchen_multisensor_temperature",
            "c2d433",
            original_name="Temperature",
            original_device_class="temperature",
            unit_of_measurement="°C",
            capabilities={"state_class": "measurement"},
        ),
        _entity(
            "sensor.kitchen_multisensor_humidity",
            "c2d433",
            original_name="Humidity",
            original_device_class="humidity",
            unit_of_measurement="%",
        ),
        _entity(
            "sensor.kitchen_multisensor_power_factor",
            "c2d433",
            original_name="Power factor",
            disabled_by="integration",
            entity_category="diagnostic",
        ),
        _entity("switch.coffee_machine", "9b8c44", original_device_class="outlet"),
        _entity("sun.sun", "5e9f55", platform="sun"),
        _entity("automation.morning_lights", None, platform="automation"),
        _entity("update.sofa_lamp_firmware", "0f3ca1", entity_category="config"),
    ],
    "states": [
        _state("light.sofa_lamp", "on", LIGHT_ATTRIBUTES, "2026-03-14T18:02:11.204518+00:00"),
        _state(
            "climate.bedroom_thermostat",
            "heat",
            CLIMATE_ATTRIBUTES,
            "2026-03-14T06:30:00.001122+00:00",
        ),
        _state(
            "sensor.kitchen_multisensor_temperature",
            "21.4",
            {
                "state_class": "measurement",
                "unit_of_measurement": "°C",
                "device_class": "temperature",
                "friendly_name": "Kitchen Multisensor Temperature",
            },
            "2026-03-14T19:40:27.000004+00:00",
        ),
        _state(
            "sensor.kitchen_multisensor_humidity",
            "48",
            {
                "state_class": "measurement",
                "unit_of_measurement": "%",
                "device_class": "humidity",
                "friendly_name": "Kitchen Multisensor Humidity",
            },
            "2026-03-14T19:38:02.000000+00:00",
        ),
        _state(
            "switch.coffee_machine",
            "off",
            {"device_class": "outlet", "friendly_name": "Coffee Machine Plug"},
            "2026-03-14T07:05:43.918273+00:00",
        ),
        # A template sensor from configuration.yaml: a state but no registry entry.
        _state(
            "sensor.house_power",
            "350",
            {"unit_of_measurement": "W", "device_class": "power", "friendly_name": "House power"},
            "2026-03-14T19:41:00.000000+00:00",
        ),
        _state(
            "sun.sun",
            "below_horizon",
            {
                "next_rising": "2026-03-15T06:11:32+00:00",
                "elevation": -12.4,
                "friendly_name": "Sun",
            },
            "2026-03-14T17:58:40.000000+00:00",
        ),
        _state(
            "automation.morning_lights",
            "on",
            {"id": "1700000000000", "last_triggered": None, "friendly_name": "Morning lights"},
            "2026-03-10T08:00:00.000000+00:00",
        ),
        _state(
            "update.sofa_lamp_firmware",
            "off",
            {"installed_version": "1.104.2", "friendly_name": "Sofa Lamp Firmware"},
            "2026-03-01T00:00:00.000000+00:00",
        ),
    ],
}
SKIPPED = [
    "automation.morning_lights",
    "sensor.kitchen_multisensor_power_factor",
    "sun.sun",
    "update.sofa_lamp_firmware",
]


def with_tuples(attributes: dict[str, Any]) -> dict[str, Any]:
    colours = ("hs_color", "rgb_color", "xy_color")
    return {key: tuple(value) if key in colours else value for key, value in attributes.items()}


def test_a_home_assistant_snapshot_is_twinned() -> None:
    home, skipped = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    assert skipped == SKIPPED
    assert home.floors["loft"] == Floor("loft", "Loft", 0)
    assert home.areas["bedroom"] == Area("bedroom", "Bedroom", "first_floor")
    assert home.devices["0f3ca1"] == Device(
        "0f3ca1", "Sofa Lamp", "Signify Netherlands B.V.", "LCA001", "living_room"
    )
    assert "5e9f55" in home.devices
    assert set(home.states) == {
        "light.sofa_lamp",
        "climate.bedroom_thermostat",
        "sensor.kitchen_multisensor_temperature",
        "sensor.kitchen_multisensor_humidity",
        "sensor.house_power",
        "switch.coffee_machine",
    }
    assert home.now == 1773517260.0  # the newest last_updated: 2026-03-14T19:41:00Z


def test_snapshot_states_keep_home_assistants_attributes() -> None:
    home, _ = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    for raw in HA_SNAPSHOT["states"]:
        if raw["entity_id"] in home.states:
            state = home.state(raw["entity_id"])
            assert typed(state.attributes) == typed(with_tuples(raw["attributes"]))
            assert state.state == raw["state"]
    light = home.state("light.sofa_lamp")
    assert light.attributes["hs_color"] == (30.0, 60.0)
    assert light.last_changed == light.last_updated == 1773511331.204518


def test_snapshot_registry_fields_and_capabilities() -> None:
    home, _ = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    assert home.entities["light.sofa_lamp"] == EntityEntry(
        "light.sofa_lamp",
        "Sofa Lamp",
        "0f3ca1",
        supported_features=44,
        capabilities={
            "min_color_temp_kelvin": 2202,
            "max_color_temp_kelvin": 6535,
            "effect_list": ["None", "candle", "fire"],
            "supported_color_modes": ["color_temp", "xy"],
        },
    )
    climate = home.entities["climate.bedroom_thermostat"]
    assert climate.capabilities["min_temp"] == 7.0
    assert "current_temperature" not in climate.capabilities
    # Without the registry's capabilities, Home Assistant's capability attributes are used.
    humidity = home.entities["sensor.kitchen_multisensor_humidity"]
    assert humidity.capabilities == {"state_class": "measurement"}
    assert (humidity.device_class, humidity.unit_of_measurement) == ("humidity", "%")
    power = home.entities["sensor.house_power"]
    assert power == EntityEntry(
        "sensor.house_power", "House power", device_class="power", unit_of_measurement="W"
    )


def test_a_twinned_home_runs_services_by_area() -> None:
    home, _ = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    result = home.call_service("switch", "turn_on", target={"area_id": "kitchen"})
    assert result.entity_ids == ("switch.coffee_machine",)
    assert home.state("switch.coffee_machine").state == "on"


def test_an_exported_snapshot_imports_back_equal() -> None:
    home, _ = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    exported = json.loads(json.dumps(export_ha_snapshot(home)))
    assert exported == export_ha_snapshot(home)
    again, skipped = import_ha_snapshot(exported)
    assert skipped == []
    assert_same_home(again, home)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes(tuples=False))
def test_any_exported_home_imports_back_equal(home: Home) -> None:
    again, skipped = import_ha_snapshot(json.loads(json.dumps(export_ha_snapshot(home))))
    assert skipped == []
    assert_same_home(again, home)


def test_snapshots_load_from_json_and_yaml_files_and_text(tmp_path: Path) -> None:
    expected, _ = import_ha_snapshot(copy.deepcopy(HA_SNAPSHOT))
    as_json = tmp_path / "snapshot.json"
    as_json.write_text(json.dumps(HA_SNAPSHOT, indent=2), encoding="utf-8")
    as_yaml = tmp_path / "snapshot.yaml"
    as_yaml.write_text(yaml.safe_dump(HA_SNAPSHOT, allow_unicode=True), encoding="utf-8")
    texts = [path.read_text(encoding="utf-8") for path in (as_json, as_yaml)]
    sources: list[Path | str] = [as_json, str(as_json), as_yaml, *texts]
    for source in sources:
        home, skipped = import_ha_snapshot(source)
        assert skipped == SKIPPED
        assert_same_home(home, expected)


def _broken(change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    snapshot = copy.deepcopy(HA_SNAPSHOT)
    change(snapshot)
    return snapshot


BAD_SNAPSHOTS: list[tuple[Any, str]] = [
    ('["not", "a", "mapping"]\n', "expected a snapshot or an inventory (a mapping), got list"),
    (_broken(lambda s: s.update(states={})), "states: expected a list"),
    (_broken(lambda s: s["states"][0].pop("state")), "states[0].state: required key not provided"),
    (_broken(lambda s: s["states"][1].update(state=True)), "states[1].state: a state is a string"),
    (
        _broken(lambda s: s["states"][2].update(last_updated="later")),
        "states[2].last_updated: expected an ISO 8601 time",
    ),
    (
        _broken(lambda s: s["states"].append(s["states"][0])),
        "states[9]: entity_id 'light.sofa_lamp' is listed twice",
    ),
    (
        _broken(lambda s: s["entities"].append(s["entities"][0])),
        "entities[9]: entity_id 'light.sofa_lamp' is listed twice",
    ),
    (
        _broken(lambda s: s["entities"][0].update(device_id="ghost")),
        "states[0] (light.sofa_lamp): No device with id 'ghost'",
    ),
    (
        _broken(lambda s: s["entities"][1].update(area_id="attic")),
        "states[1] (climate.bedroom_thermostat): No area with id 'attic'",
    ),
    (
        _broken(lambda s: s["states"][4].update(entity_id="switch.Coffee")),
        "'switch.Coffee' is not a valid entity id",
    ),
    (_broken(lambda s: s["areas"][1].update(floor_id="cellar")), "areas[1]: No floor with id"),
    (_broken(lambda s: s["devices"][0].update(area_id="attic")), "devices[0]: No area with id"),
    (_broken(lambda s: s["floors"][0].update(level="low")), "floors[0].level"),
    (_broken(lambda s: s["areas"][0].update(outdoor="yes")), "areas[0].outdoor"),
    (
        _broken(lambda s: s["floors"].append(s["floors"][0])),
        "floors[3]: There is already a floor",
    ),
    (_broken(lambda s: s["devices"].append(s["devices"][0])), "devices[5]: There is already"),
    (_broken(lambda s: s.update(weather={"city": "Oslo"})), "weather.seed: required key"),
    (_broken(lambda s: s.update(rooms={"attic": {}})), "rooms['attic']: the home has no area"),
]


@pytest.mark.parametrize(("snapshot", "message"), BAD_SNAPSHOTS)
def test_bad_snapshots_are_refused_by_key(snapshot: Any, message: str) -> None:
    with pytest.raises(HomeDefinitionError) as caught:
        import_ha_snapshot(snapshot)
    assert message in str(caught.value)


def test_a_snapshot_that_is_not_json_or_yaml_is_refused() -> None:
    with pytest.raises(HomeDefinitionError, match="home text: malformed YAML"):
        import_ha_snapshot('{"states": [\n')


# --- synthetic-home inventories ------------------------------------------------------------------

INVENTORY = """\
---
language: en
areas:
- name: Living Room
  id: living_room
  floor: Ground
- name: Bedroom 1
  id: bedroom_1
  floor: Upstairs
- name: Kitchen
  floor: Ground
devices:
- name: Fireplace Light
  id: fireplace_light
  area: living_room
  info:
    model: Smart LED Bulb
    manufacturer: Philips
    sw_version: 1.2.3
- name: Thermostat
  id: thermostat
  area: living_room
  info:
    model: Ecobee4 Smart Thermostat
    manufacturer: Ecobee
- name: Coffee Maker
  area: kitchen
- name: Outdoor Camera
  id: outdoor_camera
entities:
- name: Fireplace Light
  id: light.fireplace_light
  area: living_room
  device: fireplace_light
  attributes:
    supported_color_modes:
    - brightness
    color_mode: brightness
    brightness: 100
- name: Thermostat
  id: climate.thermostat
  area: living_room
  device: thermostat
  attributes:
    unit_of_measurement: °C
    supported_features:
    - climate.ClimateEntityFeature.FAN_MODE
    - climate.ClimateEntityFeature.TURN_ON
    - climate.ClimateEntityFeature.TURN_OFF
    hvac_modes:
    - 'off'
    - heat
    hvac_mode: 'off'
    hvac_action: 'off'
    current_temperature: 22
    target_temperature: 22
- name: Thermostat Temperature
  id: sensor.thermostat_temperature
  area: bedroom_1
  device: thermostat
  attributes:
    native_unit_of_measurement: °C
    device_class: sensor.SensorDeviceClass.TEMPERATURE
    state_class: sensor.SensorStateClass.MEASUREMENT
    native_value: 22
- name: Coffee Maker
  id: switch.coffee_maker
  device: coffee_maker
  state: true
  attributes:
    device_class: switch.SwitchDeviceClass.OUTLET
- name: Outdoor Camera Motion
  id: binary_sensor.outdoor_camera_motion
  device: outdoor_camera
  state: false
  attributes:
    device_class: binary_sensor.BinarySensorDeviceClass.MOTION
- name: Garage Door
  id: cover.garage_door
  state: false
- name: Outdoor Camera
  id: camera.outdoor_camera
  device: outdoor_camera
"""


@pytest.fixture
def climate_features(monkeypatch: pytest.MonkeyPatch) -> None:
    """Climate's feature names with Home Assistant's values, whatever climate.py defines now."""
    features = {"fan_mode": 8, "turn_off": 128, "turn_on": 256}
    monkeypatch.setitem(DOMAINS, "climate", replace(DOMAINS["climate"], features=features))


@pytest.mark.usefixtures("climate_features")
def test_a_synthetic_home_inventory_is_twinned() -> None:
    home, skipped = import_ha_snapshot(INVENTORY)
    assert skipped == ["camera.outdoor_camera"]
    assert home.floors == {
        "ground": Floor("ground", "Ground"),
        "upstairs": Floor("upstairs", "Upstairs"),
    }
    assert home.areas["kitchen"] == Area("kitchen", "Kitchen", "ground")
    assert home.devices["coffee_maker"] == Device("coffee_maker", "Coffee Maker", area_id="kitchen")
    assert home.devices["thermostat"].manufacturer == "Ecobee"
    light = home.state("light.fireplace_light")
    assert light.state == "on"
    assert home.entities[light.entity_id].capabilities == {"supported_color_modes": ["brightness"]}
    assert home.entities[light.entity_id].area_id is None
    climate = home.entities["climate.thermostat"]
    assert (climate.supported_features, climate.unit_of_measurement) == (392, None)
    # Home Assistant shows the default temperature range of a thermostat that gives none.
    assert climate.capabilities == {"hvac_modes": ["off", "heat"], "min_temp": 7, "max_temp": 35}
    thermostat = home.state("climate.thermostat")
    assert thermostat.state == "off"
    assert "hvac_mode" not in thermostat.attributes
    # synthetic-home's target_temperature is Home Assistant's temperature.
    assert thermostat.attributes["temperature"] == 22
    assert "target_temperature" not in thermostat.attributes
    sensor = home.entities["sensor.thermostat_temperature"]
    assert (sensor.device_class, sensor.unit_of_measurement) == ("temperature", "°C")
    assert sensor.capabilities == {"state_class": "measurement"}
    assert sensor.area_id == "bedroom_1"
    assert home.state("sensor.thermostat_temperature").state == "22"
    assert home.state("switch.coffee_maker").state == "on"
    assert home.entities["switch.coffee_maker"].device_class == "outlet"
    assert home.state("binary_sensor.outdoor_camera_motion").state == "off"
    assert home.state("cover.garage_door").state == "closed"


# synthetic-home entity arguments (the `_attr_*` of Home Assistant's entity classes), and the
# state and attributes Home Assistant writes from them (tests/integration/test_generated_shapes.py
# checks the same against Home Assistant itself): (entity, arguments, state, shown, not shown).
ARGUMENT_CASES = [
    ("switch.plug", {"is_on": True}, "on", {}, {"is_on"}),
    (
        "lock.door",
        {"is_locked": True, "code_format": None},
        "locked",
        {},
        {"is_locked", "code_format"},
    ),
    ("lock.door", {"is_locked": True, "is_jammed": True}, "jammed", {}, {"is_jammed"}),
    (
        "cover.blind",
        {"is_closed": False, "current_cover_position": 40, "current_cover_tilt_position": None},
        "open",
        {"current_position": 40, "is_closed": False},
        {"current_cover_position", "current_tilt_position", "current_cover_tilt_position"},
    ),
    ("cover.blind", {"is_closed": True, "is_opening": True}, "opening", {}, {"is_opening"}),
    (
        "valve.main",
        {"reports_position": True, "current_valve_position": 0, "is_closed": False},
        "closed",
        {"current_position": 0, "is_closed": True},
        {"reports_position", "current_valve_position"},
    ),
    (
        "valve.main",
        {"is_closed": False, "current_valve_position": 30},
        "open",
        {},
        {"current_position"},
    ),
    ("vacuum.robot", {"activity": "docked"}, "docked", {}, {"activity"}),
    (
        "media_player.tv",
        {"state": "playing", "media_title": "Blue in Green", "media_artist": None},
        "playing",
        {"media_title": "Blue in Green"},
        {"state", "media_artist"},
    ),
    (
        "humidifier.room",
        {"is_on": False, "target_humidity": 45, "current_humidity": None, "action": "humidifying"},
        "off",
        {"humidity": 45, "action": "off", "min_humidity": 0, "max_humidity": 100},
        {"target_humidity", "current_humidity"},
    ),
    (
        "climate.hall",
        {
            "supported_features": 1,
            "hvac_modes": ["off", "heat"],
            "hvac_mode": "heat",
            "target_temperature": 21,
            "target_temperature_step": 0.5,
            "temperature_unit": "°C",
        },
        "heat",
        {"temperature": 21, "target_temp_step": 0.5, "min_temp": 7, "max_temp": 35},
        {"target_temperature", "target_temperature_step", "temperature_unit"},
    ),
    (
        "water_heater.tank",
        {
            "supported_features": 7,
            "operation_list": ["off", "eco"],
            "current_operation": "eco",
            "target_temperature": 50,
            "is_away_mode_on": True,
            "temperature_unit": "°C",
        },
        "eco",
        {
            "operation_mode": "eco",
            "away_mode": "on",
            "temperature": 50,
            "target_temp_high": None,
            "min_temp": 43.3,
            "max_temp": 60.0,
        },
        {"current_operation", "is_away_mode_on", "target_temperature", "temperature_unit"},
    ),
    (
        "water_heater.tank",
        {"supported_features": 1, "operation_list": None, "current_operation": "eco"},
        "eco",
        {},
        {"operation_list", "operation_mode", "away_mode"},
    ),
    (
        "fan.desk",
        {"supported_features": 2, "is_on": True, "percentage": 67, "oscillating": True},
        "on",
        {"oscillating": True},
        {"percentage", "percentage_step", "is_on"},
    ),
    (
        "light.lamp",
        {"supported_color_modes": ["hs", "color_temp"], "is_on": False, "color_mode": "hs"},
        "off",
        {
            "supported_color_modes": ["color_temp", "hs"],
            "min_color_temp_kelvin": 2000,
            "max_color_temp_kelvin": 6535,
        },
        {"is_on"},
    ),
]


@pytest.mark.parametrize(("entity_id", "arguments", "state", "shown", "unshown"), ARGUMENT_CASES)
def test_synthetic_home_arguments_show_as_home_assistant_writes_them(
    entity_id: str, arguments: dict[str, Any], state: str, shown: dict[str, Any], unshown: set[str]
) -> None:
    """An inventory's arguments are the entity's `_attr_*`: the state comes from is_on,
    is_closed, is_locked, activity...; attributes have Home Assistant's names; what HA always
    shows has its defaults, and what it omits (unknown values, other features') is not shown."""
    home, _ = import_ha_snapshot({"entities": [{"id": entity_id, "attributes": arguments}]})
    imported = home.state(entity_id)
    assert imported.state == state
    assert {key: imported.attributes.get(key) for key in shown} == shown
    assert not unshown & set(imported.attributes)


def test_an_inventory_cover_or_valve_shows_whether_it_is_closed() -> None:
    """As synthetic-home's entities do from their state: the integration reads `is_closed`."""
    text = (
        "entities:\n- {id: cover.a, name: A, state: open}\n- {id: cover.b, name: B, state: false}\n"
        "- {id: valve.c, name: C, state: closed}\n"
    )
    home, _ = import_ha_snapshot(text)
    assert [home.state(e).attributes["is_closed"] for e in ("cover.a", "cover.b", "valve.c")] == [
        False,
        True,
        True,
    ]


def test_an_inventory_feature_the_twin_does_not_know_is_refused() -> None:
    text = (
        "entities:\n- id: light.a\n  name: A\n  attributes:\n"
        "    supported_features: [light.LightEntityFeature.NOT_A_FEATURE]\n"
    )
    with pytest.raises(HomeDefinitionError, match=r"entities\[0\]: attributes.supported_features"):
        import_ha_snapshot(text)


def test_an_inventory_entity_needs_an_id() -> None:
    with pytest.raises(HomeDefinitionError, match=r"entities\[0\]\.id: required key"):
        import_ha_snapshot("entities:\n- name: A\n")

"""Home files, snapshots and inventories at their limits: what is malformed or hostile is a
HomeDefinitionError that says what is wrong, never another exception, in bounded memory and time;
and whatever loads is a home whose every entity can be read, described and called."""

from __future__ import annotations

import ast
import copy
import json
import math
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache, partial
from pathlib import Path
from typing import Any, Protocol

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.cli import main
from tests.twin.bounded import run_bounded
from twin import tools
from twin.catalog import load_catalog
from twin.domains import RULES
from twin.domains.climate import HVAC_MODES
from twin.domains.light import COLOR_MODES
from twin.errors import HomeDefinitionError
from twin.home import Home
from twin.homefile import (
    MAX_AREA_DEPTH,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_VALUES,
    dump_home,
    export_ha_snapshot,
    import_ha_snapshot,
    load_home,
)
from twin.homemaker import make_home

Loader = Callable[[Any], Any]
LOADERS: list[Loader] = [load_home, import_ha_snapshot]
PLUG = "devices:\n  - {id: p, name: Plug, type: smart_plug}\n"  # switch.plug
BULB = "devices:\n  - {id: b, name: Bulb, type: color_bulb}\n"  # light.bulb: color_temp, hs


def refused(source: Any, load: Loader = load_home) -> str:
    """The message of the HomeDefinitionError that loading `source` raises."""
    with pytest.raises(HomeDefinitionError) as caught:
        load(source)
    return str(caught.value)


def nested(depth: int) -> str:
    """A home file whose switch holds an attribute of lists `depth` deep in all."""
    inner = depth - 4  # the file, states, the switch and its attributes are 4
    return PLUG + "states:\n  switch.plug:\n    attributes:\n      x: " + "[" * inner + "]" * inner


def billion_laughs(slot: str) -> str:
    """A switch whose attributes define a nine-level alias bomb (9**9 items, if expanded) and
    whose `slot` (state, or an attribute) names it."""
    lines = [
        PLUG + "states:\n  switch.plug:\n    attributes:",
        "      l0: &l0 [x, x, x, x, x, x, x, x, x]",
    ]
    for level in range(1, 9):
        aliases = ", ".join([f"*l{level - 1}"] * 9)
        lines.append(f"      l{level}: &l{level} [{aliases}]")
    lines.append("      bomb: *l8" if slot == "attributes" else "    state: *l8")
    return "\n".join(lines) + "\n"


# --- reading: encodings, dates, nesting, aliases, sizes ------------------------------------------


def test_a_file_that_is_not_utf8_is_refused_with_the_byte_position(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    for load in LOADERS:
        assert "not UTF-8: byte 0xe9 at position 9" in refused(path, load)


def test_text_with_a_lone_surrogate_is_refused() -> None:
    assert "lone surrogate" in refused("name: \udc80\n")
    assert "lone surrogate" in refused('{"states": [], "name": "\\ud800"}\n', import_ha_snapshot)


@pytest.mark.parametrize(
    "text",
    [
        "name: 2026-02-30\n",
        "name: Home\ntime: 2026-13-01T00:00:00Z\n",
        "time: 2026-01-01T00:00:00+25:00\n",
        PLUG + "states:\n  switch.plug: {last_changed: 2026-02-30 10:00:00}\n",
    ],
)
def test_an_impossible_date_is_refused_where_it_is(text: str) -> None:
    message = refused(text)
    assert "malformed YAML" in message
    assert "(line " in message


@pytest.mark.parametrize(
    "time_text", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "1969-12-31"]
)
def test_the_clock_starts_between_1970_and_9000(time_text: str) -> None:
    assert "expected a time from 1970-01-01" in refused(f"time: '{time_text}'\n")


def test_a_clock_near_its_end_still_runs_for_years() -> None:
    home = load_home(PLUG + "time: '8999-12-31T00:00:00+00:00'\n")
    home.advance(3600 * 24 * 365 * 50, step=3600 * 24 * 365)
    assert tools.get_state(home, "switch.plug")["last_updated"].startswith("8999")


@pytest.mark.parametrize(
    "text",
    [
        "[" * 50_000,
        "[" * 50_000 + "]" * 50_000,
        '{"a": ' * 50_000 + "1" + "}" * 50_000,
        "".join(" " * depth + "a:\n" for depth in range(200)),
        nested(MAX_DEPTH + 1),
    ],
    ids=["flow", "json", "objects", "block", "just-past"],
)
def test_deep_nesting_is_refused(text: str) -> None:
    for load in LOADERS:
        assert "nest" in refused(text + "\n", load)


def test_nesting_up_to_the_limit_loads_in_every_format() -> None:
    home = load_home(nested(MAX_DEPTH))
    snapshot = export_ha_snapshot(home)
    assert import_ha_snapshot(snapshot)[0].states == home.states
    assert import_ha_snapshot(json.dumps(snapshot) + "\n")[0].states == home.states
    switch = next(state for state in snapshot["states"] if state["entity_id"] == "switch.plug")
    switch["attributes"]["x"] = [switch["attributes"]["x"]]
    assert "nested more than 64 deep" in refused(snapshot, import_ha_snapshot)


@pytest.mark.parametrize("slot", ["state", "attributes"])
def test_an_alias_bomb_is_refused_unexpanded(slot: str) -> None:
    """It once went into an error message's repr (1.5 GB), or loaded and hung get_state."""
    done = run_bounded(
        f"load(text, {slot!r})",
        setup="""
            from tests.twin.test_homefile_limits import billion_laughs
            from twin.errors import HomeDefinitionError
            from twin.homefile import load_home
            text = None
            def load(_, slot):
                try:
                    load_home(billion_laughs(slot))
                except HomeDefinitionError as err:
                    return str(err)
        """,
        memory_mb=100,
    )
    assert done.error is None
    assert "an alias (*name) is not allowed" in (done.result or "")
    assert done.cpu_s < 10


def test_any_alias_is_refused() -> None:
    assert "alias" in refused("name: &n Home\nfloors: [{id: g, name: *n}]\n")


def test_a_key_twice_is_refused_in_yaml_and_json() -> None:
    assert "key 'name' twice (line 2, column 1)" in refused("name: a\nname: b\n")
    message = refused('{"states": [],\n "states": []}\n', import_ha_snapshot)
    assert "key 'states' twice (line 2" in message


def test_many_keys_are_checked_in_linear_time() -> None:
    """The duplicate-key check compared each key with every earlier one (30,000: 6.8 s)."""
    done = run_bounded(
        "cpu()",
        setup="""
            import time
            from tests.twin.test_homefile_limits import PLUG
            from twin.homefile import load_home
            keys = "".join(f"        k{index}: {index}\\n" for index in range(60_000))
            text = PLUG + "states:\\n  switch.plug:\\n    attributes:\\n" + keys
            def cpu():
                started = time.process_time()
                home = load_home(text)
                return len(home.states["switch.plug"].attributes), time.process_time() - started
        """,
        memory_mb=250,
    )
    assert done.error is None
    count, seconds = ast.literal_eval(done.result or "")
    assert count > 60_000
    assert seconds < 20


def test_a_file_past_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as file:
        file.truncate(MAX_FILE_BYTES + 1)
    for load in LOADERS:
        assert f"larger than {MAX_FILE_BYTES:,} bytes (8 MiB)" in refused(path, load)
    assert "larger than" in refused("#" * MAX_FILE_BYTES + "\n")
    assert "larger than" in refused("#" + "é" * (MAX_FILE_BYTES // 2) + "\n")


def test_more_values_than_the_limit_are_refused() -> None:
    text = "[" + "0," * MAX_VALUES + "0]\n"
    for load in LOADERS:
        assert f"more than {MAX_VALUES:,} values" in refused(text, load)
    assert f"more than {MAX_VALUES:,} values" in refused(f"name: {text}")


@pytest.mark.parametrize(
    "text",
    [
        "name: [" + "x" * 500_000 + "]\n",
        "time: " + "9" * 4000 + "\n",
        "k" * 500_000 + ": 1\n",
        "states:\n  " + "s" * 300_000 + ": {}\n",
        "entities:\n  - {entity_id: switch." + "a" * 300_000 + ", name: A, state: 'on'}\n",
        "time: '" + "2026" * 100_000 + "'\n",
        PLUG + "states:\n  switch.plug: {state: '" + "x" * 300_000 + "'}\n",
        PLUG
        + "entities:\n  - {entity_id: light.a, name: A, state: 'on', supported_features: "
        + "9" * 4000
        + "}\n",
        "&" + "a" * 300_000 + " name: x\n",
    ],
)
def test_error_messages_repeat_little_of_the_input(text: str) -> None:
    assert len(refused(text)) < 500


def test_areas_nest_to_the_limit_and_a_long_chain_is_refused_at_once() -> None:
    def chain(length: int) -> str:
        areas = "".join(f"  - {{id: a{i}, name: A, parent: a{i + 1}}}\n" for i in range(length))
        return f"areas:\n{areas}  - {{id: a{length}, name: A}}\n"

    assert len(load_home(chain(MAX_AREA_DEPTH - 1)).areas) == MAX_AREA_DEPTH
    assert f"areas nest at most {MAX_AREA_DEPTH} deep" in refused(chain(MAX_AREA_DEPTH))
    started = time.process_time()
    assert "areas nest at most" in refused(chain(5000))
    assert time.process_time() - started < 30


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system ['true']\n",
        PLUG + "states:\n  switch.plug: {attributes: {x: !!set {a, b}}}\n",
        PLUG + "states:\n  switch.plug: {attributes: {x: !!binary aGVsbG8=}}\n",
        PLUG + "states:\n  switch.plug: {attributes: {? !tuple [a, b] : 1}}\n",
        "? [a]\n: 1\n",
    ],
)
def test_yaml_that_is_no_home_value_is_refused(text: str) -> None:
    refused(text)


# --- what each domain's entities may hold ---------------------------------------------------------

THERMOSTAT = "devices:\n  - {id: t, name: T, type: smart_thermostat}\n"  # climate.t
SPEAKER = "devices:\n  - {id: s, name: S, type: smart_speaker}\n"  # media_player.s
ENTITY = "entities:\n  - {entity_id: %s, name: A, state: unknown, %s}\n"
STATE = "entities:\n  - {entity_id: %s, name: A, state: %s}\n"
BAD_ENTITIES = [
    (
        ENTITY % ("light.a", "capabilities: {supported_color_modes: 5}"),
        "light.a: capabilities.supported_color_modes: expected a list of names, got 5",
    ),
    (
        BULB + "states:\n  light.bulb: {hidden: {color_mode: rgbww}}\n",
        "light.bulb: hidden.color_mode: 'rgbww' is not one of supported_color_modes",
    ),
    (
        BULB + "states:\n  light.bulb: {hidden: {color_mode: hs}}\n",
        "remembers its hs_color and brightness too",
    ),
    (
        BULB + "states:\n  light.bulb: {attributes: {brightness: '128'}}\n",
        "attributes.brightness: expected a number 0-255, got '128'",
    ),
    (
        BULB + "states:\n  light.bulb: {attributes: {color_mode: rgb}}\n",
        "attributes.color_mode: rgb is not one of supported_color_modes",
    ),
    (
        BULB + "states:\n  light.bulb: {attributes: {hs_color: !tuple [400, 10]}}\n",
        "attributes.hs_color: expected a number 0-360, got 400",
    ),
    (
        ENTITY
        % ("light.a", "capabilities: {min_color_temp_kelvin: 6000, max_color_temp_kelvin: 6010}"),
        "must be at least a mired warmer",
    ),
    (
        THERMOSTAT + "states:\n  climate.t: {attributes: {temperature: .nan}}\n",
        "attributes.temperature: expected a number -100-200, got nan",
    ),
    (
        ENTITY % ("climate.a", "capabilities: {min_temp: 30, max_temp: 20}"),
        "capabilities: min_temp (30) is above max_temp (20)",
    ),
    (
        ENTITY % ("climate.a", "capabilities: {hvac_modes: [heat, 1]}"),
        "capabilities.hvac_modes: expected one of",
    ),
    (
        THERMOSTAT + "states:\n  climate.t: {hidden: {last_on_mode: [heat]}}\n",
        "hidden.last_on_mode: expected one of",
    ),
    (
        ENTITY % ("fan.a", "capabilities: {percentage_step: 0}"),
        "capabilities.percentage_step: expected a number 0.01-100, got 0",
    ),
    (SPEAKER + "states:\n  media_player.s: {hidden: {track: 99}}\n", "hidden.track: 99 is past"),
    (
        SPEAKER + "states:\n  media_player.s: {attributes: {volume_level: 2}}\n",
        "attributes.volume_level: expected a number 0-1, got 2",
    ),
    (ENTITY % ("lock.a", "capabilities: {code_format: '('}"), "expected a regular expression"),
    (
        ENTITY % ("water_heater.a", "capabilities: {operation_list: eco}"),
        "capabilities.operation_list: expected a list of names",
    ),
    (ENTITY % ("cover.a", "attributes: {}, hidden: {current_position: -1}"), "hidden.current_pos"),
    (
        ENTITY % ("switch.a", "supported_features: 1"),
        "supported_features: 1 has bits 1 that no switch has; its features: none",
    ),
    (ENTITY % ("light.a", "supported_features: 64"), "its features: effect 4, flash 8"),
    (ENTITY % ("switch.a", "capabilities: {1: 2}"), "capabilities: keys are names (strings)"),
    (PLUG + "states:\n  switch.plug: {state: '" + "x" * 256 + "'}\n", "at most 255 characters"),
    ("rooms:\n  a: {temperature: -250}\nareas: [{id: a, name: A}]\n", "expected -100 to 200 °C"),
    (
        PLUG + "states:\n  switch.plug: {attributes: {since: 2026-01-01}}\n",
        "attributes.since: datetime.date(2026, 1, 1) is no value of a Home Assistant state",
    ),
    (PLUG + "states:\n  switch.plug: {hidden: {x: {? !tuple [a] : 1}}}\n", "hidden.x: ('a',) is"),
    (
        STATE % ("vacuum.a", "'off'"),
        "vacuum.a: state: expected one of cleaning, docked, error, idle, paused, returning, "
        "unavailable, unknown, got 'off'",
    ),
    (STATE % ("fan.a", "sideways"), "fan.a: state: expected one of off, on, unavailable, unknown"),
    (STATE % ("cover.a", "'on'"), "cover.a: state: expected one of closed, closing, open"),
    (STATE % ("climate.a", "cooling"), "climate.a: state: expected one of auto, cool, dry"),
]


@pytest.mark.parametrize("state", ["unavailable", "unknown"])
@pytest.mark.parametrize("entity_id", ["vacuum.a", "light.a", "climate.a", "binary_sensor.a"])
def test_any_entity_may_be_unavailable_or_unknown(entity_id: str, state: str) -> None:
    """Home Assistant writes these for any entity it cannot read: real snapshots hold them."""
    assert load_home(STATE % (entity_id, state)).states[entity_id].state == state


def test_a_sensor_may_hold_any_state() -> None:
    assert load_home(STATE % ("sensor.a", "'21.5'")).states["sensor.a"].state == "21.5"


@pytest.mark.parametrize(("text", "message"), BAD_ENTITIES)
def test_an_entity_holding_what_its_domain_cannot_use_is_refused(text: str, message: str) -> None:
    assert message in refused(text)


def test_a_media_player_with_unmodelled_home_assistant_features_loads() -> None:
    """A real player may seek (2) or browse media (131072): the twin offers no service for it."""
    home = load_home(ENTITY % ("media_player.a", "supported_features: 131074"))
    assert home.entities["media_player.a"].supported_features == 131074


def _snapshot(attributes: dict[str, Any], **entry: Any) -> dict[str, Any]:
    return {
        "entities": [{"entity_id": "light.x", **entry}],
        "states": [{"entity_id": "light.x", "state": "on", "attributes": attributes}],
    }


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        (_snapshot({"supported_features": "abc"}), "supported_features: expected an integer"),
        (_snapshot({"supported_features": True}), "supported_features: expected an integer"),
        (_snapshot({"friendly_name": ["x"]}), "light.x: name: expected a string"),
        (_snapshot({"device_class": ["x"]}), "light.x: device_class: expected a string"),
        (_snapshot({"unit_of_measurement": {}}), "unit_of_measurement: expected a string"),
        (_snapshot({}, capabilities={"effect_list": [1]}), "capabilities.effect_list"),
        (_snapshot({"supported_color_modes": "hs"}), "capabilities.supported_color_modes"),
    ],
)
def test_a_snapshot_entity_of_the_wrong_types_is_refused(snapshot: Any, message: str) -> None:
    assert message in refused(snapshot, import_ha_snapshot)
    assert message in refused(json.dumps(snapshot) + "\n", import_ha_snapshot)


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("supported_features: [[1]]", "expected a list of feature names"),
        ("supported_features: abc", "supported_features: expected an integer"),
        ("device_class: [x]", "device_class: expected a string"),
        ("brightness: high", "attributes.brightness: expected a number"),
    ],
)
def test_an_inventory_entity_of_the_wrong_types_is_refused(attributes: str, message: str) -> None:
    text = f"entities:\n- id: light.a\n  attributes:\n    {attributes}\n"
    assert message in refused(text, import_ha_snapshot)


def test_an_inventory_device_info_of_the_wrong_type_is_refused() -> None:
    text = "devices:\n- name: D\n  info: {manufacturer: [x]}\n"
    assert "devices[0].info.manufacturer: " in refused(text, import_ha_snapshot)


# --- homeflow home show -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe name: x",
        b"name: 2026-02-30\n",
        b"[" * 50_000,
        billion_laughs("attributes").encode(),
        b"name: x\ntime: 9999-12-31T23:59:59Z\n",
        BAD_ENTITIES[1][0].encode(),
        b"name: [unclosed\n  still: [\n",
    ],
)
def test_show_on_a_bad_file_prints_one_error_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "home.yaml"
    path.write_bytes(content)
    result = CliRunner().invoke(main, ["home", "show", str(path)])
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert result.output.count("\n") == 1
    assert "Traceback" not in result.output


def test_show_prints_names_as_written(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    path.write_text(
        'name: "[/] [bold]\\e[2J"\nareas: [{id: a, name: "[red]"}]\n'
        'devices: [{id: p, name: "[/x]", type: smart_plug, area: a}]\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["home", "show", str(path)])
    assert result.exit_code == 0, result.output
    assert "[/] [bold][2J" in result.output
    assert "[red]" in result.output
    assert "\x1b" not in result.output


# --- a hostile corpus, in bounded memory and time -------------------------------------------------


def _keys(count: int, twice: bool = False) -> str:
    keys = "".join(f"        k{index}: {index}\n" for index in range(count))
    return PLUG + "states:\n  switch.plug:\n    attributes:\n" + keys + ("        k0: 0\n" * twice)


HOSTILE: dict[str, Callable[[], bytes | str]] = {
    "latin-1": lambda: b"name: caf\xe9\n",
    "utf-16": lambda: "name: x\n".encode("utf-16"),
    "truncated utf-8": lambda: b"name: \xe2\x82\n",
    "nul byte": lambda: "name: a\x00b\n",
    "escaped surrogate": lambda: '{"states": [], "name": "\\ud800"}\n',
    "impossible date": lambda: "name: 2026-02-30\n",
    "year 9999": lambda: "time: 9999-12-31T23:59:59Z\n",
    "year 1": lambda: "time: 0001-01-01T00:00:00Z\n",
    "bad offset": lambda: "time: 2026-01-01T00:00:00+25:00\n",
    "deep flow": lambda: "[" * 50_000,
    "deep json": lambda: "[" * 50_000 + "]" * 50_000,
    "deep objects": lambda: '{"a": ' * 50_000 + "1" + "}" * 50_000,
    "deep block": lambda: "".join(" " * depth + "a:\n" for depth in range(1000)),
    "just too deep": lambda: nested(MAX_DEPTH + 1),
    "bomb in a state": lambda: billion_laughs("state"),
    "bomb in attributes": lambda: billion_laughs("attributes"),
    "merge alias": lambda: "base: &b {name: x}\n<<: *b\n",
    "30k keys": lambda: "".join(f"k{index}: {index}\n" for index in range(30_000)),
    "30k attributes": lambda: _keys(30_000),
    "a key twice after 30k": lambda: _keys(30_000, twice=True),
    "huge key": lambda: "k" * 900_000 + ": 1\n",
    "huge name": lambda: "name: " + "x" * 900_000 + "\n",
    "too many values": lambda: "[" + "0," * MAX_VALUES + "0]\n",
    "digits past python's": lambda: "name: " + "9" * 5000 + "\n",
    "huge feature bits": lambda: ENTITY % ("light.a", "supported_features: " + "9" * 4000),
    "infinite room": lambda: "areas: [{id: a, name: A}]\nrooms: {a: {temperature: .inf}}\n",
    "area chain": lambda: (
        "areas:\n" + "".join(f"  - {{id: a{i}, name: A, parent: a{i + 1}}}\n" for i in range(5000))
    ),
    "python tag": lambda: "!!python/object/apply:os.system ['true']\n",
    "a set": lambda: PLUG + "states:\n  switch.plug: {attributes: {x: !!set {a}}}\n",
    "tuple key": lambda: "? !tuple [a, b]\n: 1\n",
    "list key": lambda: "? [a]\n: 1\n",
    "empty": lambda: "",
    "null": lambda: "null\n",
    "scalar": lambda: "42\n",
    "a json list": lambda: "[1, 2]\n",
    "features abc": lambda: json.dumps(_snapshot({"supported_features": "abc"})),
    "nan in a snapshot": lambda: json.dumps(
        _snapshot({"supported_color_modes": ["hs"], "hs_color": [math.nan, 1]})
    ),
    **{f"entity {index}": partial(str, text) for index, (text, _) in enumerate(BAD_ENTITIES)},
}


def corpus_outcomes() -> tuple[dict[str, str], dict[str, float], list[str]]:
    """What in the corpus gave something other than a Home or a HomeDefinitionError, through
    load_home or import_ha_snapshot; what took more than 20 CPU seconds; and what load_home
    loaded as a home."""
    odd, slow, homes = {}, {}, []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "home.yaml"
        for name, make in HOSTILE.items():
            document = make()
            assert len(document) <= 2**20
            path.write_bytes(document if isinstance(document, bytes) else document.encode())
            started = time.process_time()
            for load in LOADERS:
                try:
                    load(path)
                    if load is load_home:
                        homes.append(name)
                except HomeDefinitionError:
                    pass
                except BaseException as err:  # what the test is for
                    odd[f"{name} ({load.__name__})"] = f"{type(err).__name__}: {str(err)[:80]}"
            if (seconds := time.process_time() - started) > 20:
                slow[name] = seconds
    return odd, slow, homes


def test_a_hostile_corpus_loads_or_is_refused_in_bounded_memory_and_time() -> None:
    """Documents of up to 1 MB each, loaded in a child whose address space is capped at 300 MB
    more than it uses once imported: each is a Home or a HomeDefinitionError."""
    done = run_bounded(
        "corpus_outcomes()",
        setup="from tests.twin.test_homefile_limits import corpus_outcomes",
        memory_mb=300,
    )
    assert done.error is None
    odd, slow, homes = ast.literal_eval(done.result or "")
    assert (odd, slow) == ({}, {})
    assert homes == ["30k attributes", "huge name"]


# --- mutated homes and snapshots: a HomeDefinitionError, or a home that works -------------------

# Device types for every domain and colour mode, beyond what a made apartment has.
EXTRA_TYPES = (
    "color_ambiance_bulb",
    "rgbw_led_strip",
    "rgbcct_led_controller",
    "rgb_light_bars",
    "color_white_bulb",
    "humidifier",
    "dehumidifier",
    "smart_thermostat",
    "portable_air_conditioner",
    "electric_water_heater",
    "smart_speaker",
    "venetian_blind",
    "garage_door_opener",
    "keypad_door_lock",
    "irrigation_valve",
    "tower_fan",
)


class Chooser(Protocol):
    """What picks service data: random.Random, or hypothesis data (`Drawn`)."""

    def choice(self, options: Sequence[Any]) -> Any: ...
    def randint(self, low: int, high: int) -> int: ...
    def uniform(self, low: float, high: float) -> float: ...
    def random(self) -> float: ...


class Drawn:
    """Service data drawn by hypothesis, so that a failure shrinks to the call that failed."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def choice(self, options: Sequence[Any]) -> Any:
        return self.data.draw(st.sampled_from(options))

    def randint(self, low: int, high: int) -> int:
        return self.data.draw(st.integers(low, high))

    def uniform(self, low: float, high: float) -> float:
        return self.data.draw(st.floats(low, high))

    def random(self) -> float:
        return self.data.draw(st.floats(0, 1, exclude_max=True))


def service_data(fields: dict[str, Any], choose: Chooser) -> dict[str, Any]:
    """Data for a service as the entity's manual describes its fields: every required field, and
    some optional ones, with values of the field's type, range and options."""
    return {
        name: field_value(spec, choose)
        for name, spec in fields.items()
        if spec["required"] or choose.random() < 0.5
    }


def field_value(spec: dict[str, Any], choose: Chooser) -> Any:
    """A value of a field of the manual: one of its options, else of its type within its range."""
    if spec.get("options"):
        return choose.choice(spec["options"])
    kind = spec.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "array":
        items = spec.get("items", {"type": "number", "min": 0, "max": 1})
        count = spec.get("length", 2)
        return [
            field_value(items[i] if isinstance(items, list) else items, choose)
            for i in range(count)
        ]
    if kind in ("integer", "number"):
        low, high = sorted((spec.get("min", -50), spec.get("max", 400)))
        if kind == "integer" and math.ceil(low) <= math.floor(high):
            return choose.randint(math.ceil(low), math.floor(high))
        return choose.uniform(low, high)
    if kind == "boolean":
        return choose.random() < 0.5
    if kind == "object":
        return {}
    return choose.choice(["1234", "on", "x"])


def exercise(home: Home, changed: set[str], choose: Chooser) -> None:
    """Read and describe every entity, call each service of the `changed` ones once, export the
    home and run its physics: each call gives a result (an error result for bad input), and
    nothing raises."""
    for entity_id, entry in list(home.entities.items()):
        assert tools.get_state(home, entity_id)["entity_id"] == entity_id
        manual = tools.describe(home, entity_id)
        assert manual["entity_id"] == entity_id
        if entity_id not in changed:
            continue
        services = manual["services"]
        for service, spec in services.items():
            fields = spec.get("fields") or services.get(spec.get("fields_as"), {}).get("fields", {})
            data = service_data(fields, choose)
            result = tools.call_service(home, entry.domain, service, {"entity_id": entity_id}, data)
            assert "success" in result
    json.dumps(export_ha_snapshot(home))
    home.advance(600)


# Device types whose entities the base home also holds as entities of no device type, so that
# its home file writes their capabilities out.
FREE_TYPES = (
    "color_bulb",
    "rgbcct_led_controller",
    "smart_thermostat",
    "tower_fan",
    "smart_tv",
    "keypad_door_lock",
    "electric_water_heater",
    "humidifier",
    "robot_vacuum",
    "venetian_blind",
    "irrigation_valve",
)


@cache
def base_home() -> Home:
    """A made apartment with a device of every other kind and free entities of several, all of
    them used (so that they remember colours, speeds and modes in `hidden`)."""
    home = make_home(11, "apartment")
    catalog = load_catalog()
    area = next(iter(home.areas))
    for type_id in EXTRA_TYPES:
        catalog[type_id].install(home, f"x_{type_id}", f"X {type_id}", area)
    for type_id in FREE_TYPES:
        scratch = Home()
        catalog[type_id].install(scratch, "scratch", f"Free {type_id}")
        for entity_id, entry in scratch.entities.items():
            free = replace(entry, entity_id=f"{entity_id}_free", device_id=None, area_id=area)
            state = scratch.states[entity_id]
            home.add_entity(free, state.state, state.attributes)
    choose = random.Random(5)
    for _ in range(2):
        exercise(home, set(home.entities), choose)
    return home


@cache
def base_documents() -> tuple[Any, dict[str, Any]]:
    """The base home's home file, parsed, and its snapshot, to mutate copies of."""
    home = base_home()
    snapshot = json.loads(json.dumps(export_ha_snapshot(home)))
    return yaml.load(dump_home(home), Loader=_Loader), snapshot


def changed_entities(home: Home) -> set[str]:
    """The entities of a loaded home that differ from the base home's."""
    base = base_home()
    return {
        entity_id
        for entity_id, entry in home.entities.items()
        if base.entities.get(entity_id) != entry
        or base.states.get(entity_id) != home.states[entity_id]
    }


class _Loader(yaml.CSafeLoader):
    """YAML with the home file's `!tuple`."""


class _Dumper(yaml.CSafeDumper):
    """YAML with the home file's `!tuple`, and no anchors (which a home file may not have)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _construct_tuple(loader: yaml.CSafeLoader, node: yaml.Node) -> tuple[Any, ...]:
    assert isinstance(node, yaml.SequenceNode)
    return tuple(loader.construct_sequence(node, deep=True))


_Loader.add_constructor("!tuple", _construct_tuple)
_Dumper.add_representer(
    tuple, lambda dumper, data: dumper.represent_sequence("!tuple", data, flow_style=True)
)

# Names the domains take, to put where another name or a number was.
NAMES = sorted(
    {*COLOR_MODES, *HVAC_MODES, "on", "off", "idle", "playing", "open", "closing", "jammed"}
    | {"returning", "docked", "unknown", "unavailable", "eco", "auto", "all", "none"}
)
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-300, 70000),
    st.floats(),
    st.text(max_size=5),
    st.sampled_from([*NAMES, "", "x" * 300]),
    st.lists(st.integers(-1, 300), max_size=6),
    st.lists(st.sampled_from(NAMES), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
    st.tuples(st.floats(-10, 400), st.floats(-10, 400)),
)
# Keys to insert: those the domains read, those of the formats, and others.
KEYS = st.sampled_from(
    sorted(
        {key for rules in RULES.values() for key in rules.values}
        | {"state", "attributes", "hidden", "capabilities", "supported_features", "parent"}
        | {"area", "area_id", "device_id", "last_changed", "last_updated", "time", "level"}
    )
) | st.text(max_size=4)
# Where entities hold what their domains read, which is where mutations are most telling.
ENTITY_PARTS = frozenset({"attributes", "hidden", "capabilities"})


def mutate(document: Any, data: st.DataObject) -> None:
    """Change a few values of `document` at random, mostly its entities': replace them with odd
    ones, give them another type, drop them, or insert odd keys and items."""
    for _ in range(data.draw(st.integers(1, 4))):
        slots, held = _slots(document)
        if held and data.draw(st.integers(0, 9)) > 0:  # nine times in ten
            slots = held
        if not slots:
            return
        node, key = slots[data.draw(st.integers(0, len(slots) - 1))]
        operation = data.draw(st.sampled_from(["replace", "retype", "drop", "insert"]))
        if operation == "replace":
            node[key] = data.draw(ODD)
        elif operation == "retype":
            node[key] = data.draw(st.sampled_from(_retyped(node[key])))
        elif operation == "drop":
            del node[key]
        elif isinstance(node, dict):
            node[data.draw(KEYS)] = data.draw(ODD)
        else:
            node.insert(key, data.draw(ODD))


def _slots(document: Any) -> tuple[list[tuple[Any, Any]], list[tuple[Any, Any]]]:
    """Every (mapping or list, key or index) of `document`, and those of what its entities hold:
    their capabilities, attributes, memory and supported_features."""
    slots: list[tuple[Any, Any]] = []
    held: list[tuple[Any, Any]] = []
    pending = [(document, False)]
    while pending:
        node, inside = pending.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            (held if inside or key == "supported_features" else slots).append((node, key))
            if isinstance(value, dict | list):
                pending.append((value, inside or key in ENTITY_PARTS))
    return slots + held, held


def _retyped(value: Any) -> list[Any]:
    """`value` in other types: as text, in a list or a mapping, as another kind of number."""
    forms: list[Any] = [None, str(value)[:50], [value], {"value": value}]
    if isinstance(value, bool):
        forms.append(int(value))
    elif isinstance(value, int):
        forms += [float(value), -value, value * 1000]
    elif isinstance(value, float) and math.isfinite(value):
        forms += [int(value), -value, value * 1e6]
    elif isinstance(value, list):
        forms.append(tuple(value))
    elif isinstance(value, tuple):
        forms.append(list(value))
    return forms


MUTATIONS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@MUTATIONS
@given(st.data())
def test_a_mutated_home_file_is_refused_or_loads_a_working_home(data: st.DataObject) -> None:
    document = copy.deepcopy(base_documents()[0])
    mutate(document, data)
    text = yaml.dump(document, Dumper=_Dumper, allow_unicode=True)
    try:
        home = load_home(text)
    except HomeDefinitionError:
        return
    exercise(home, changed_entities(home), Drawn(data))


@MUTATIONS
@given(st.data())
def test_a_mutated_snapshot_is_refused_or_loads_a_working_home(data: st.DataObject) -> None:
    snapshot = copy.deepcopy(base_documents()[1])
    mutate(snapshot, data)
    source = snapshot if data.draw(st.booleans()) else json.dumps(snapshot) + "\n"
    try:
        home, _ = import_ha_snapshot(source)
    except HomeDefinitionError:
        return
    exercise(home, changed_entities(home), Drawn(data))


@pytest.mark.parametrize(
    ("entity", "message"),
    [
        ({"id": "vacuum.robot", "state": "off"}, "vacuum.robot: state: expected one of cleaning"),
        (
            {
                "id": "light.lamp",
                "state": "off",
                "attributes": {"supported_color_modes": ["hs"], "color_mode": ["hs"]},
            },
            "light.lamp: attributes.color_mode: expected one of brightness",
        ),
    ],
)
def test_an_inventory_setup_home_assistant_never_holds_is_refused(
    entity: dict[str, Any], message: str
) -> None:
    """synthetic-home setup states are checked as home files are, naming entity and field."""
    assert message in refused({"entities": [entity]}, import_ha_snapshot)

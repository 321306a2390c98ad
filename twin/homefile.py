"""Loading and saving homes: the twin's YAML home files, and Home Assistant snapshots.

A home file says what a home is in a few lines: a device names a device type of the catalog
(`twin/device_types/`) and gets that type's entities in their initial state, and only states that
differ from the initial ones are written. `dump_home` then `load_home` gives back an equal home
(registries and states, `hidden` and times included), and `dump_home` writes a home the same way
every time (everything sorted).

```yaml
name: Demo Home
time: "2026-01-01T07:30:00+00:00"  # the simulation clock, ISO 8601 (no offset: UTC)
weather: {city: Berlin, seed: 7}   # twin.weather.Weather; or constant outdoor conditions:
                                   # {temperature: 15.0, humidity: 60.0, sun_elevation: 30.0,
                                   #  cloud_cover: 0.5} (none: ConstantWeather's defaults)
floors:
  - {id: ground, name: Ground Floor, level: 0}
areas:                             # in any order; `parent` nests a room in another
  - {id: bedroom, name: Bedroom, floor: ground}
  - {id: ensuite, name: Ensuite, floor: ground, parent: bedroom}
  - {id: garden, name: Garden, floor: ground, outdoor: true}  # in the weather (default false)
devices:
  - id: bedside_plug
    name: Bedside Plug             # entity ids come from it: switch.bedside_plug
    type: smart_plug               # a device type id of twin.catalog.load_catalog()
    area: bedroom
    manufacturer: Eve              # optional: overrides the type's first model
    model: Energy
  - {id: hub, name: Hub, manufacturer: Acme, model: H1}  # no type: not from the catalog
entities:                          # entities not from the catalog (imported homes)
  - entity_id: sensor.outdoor_temperature
    name: Outdoor Temperature      # the friendly name
    device: hub                    # optional, as are area, device_class,
    device_class: temperature      # unit_of_measurement, supported_features (a bit mask),
    unit_of_measurement: °C        # entity_category and capabilities (static attributes)
    capabilities: {state_class: measurement}
    state: "4.5"                   # required here, with the optional keys of `states`
states:                            # entities whose state differs from their initial one
  switch.bedside_plug:
    state: "on"                    # a string: quote on/off/yes/no and numbers
    attributes: {}                 # merged over the initial attributes
    removed_attributes: []         # initial attributes the state no longer has
    hidden: {}                     # what the device remembers (State.hidden)
    last_changed: "2026-01-01T07:00:00+00:00"  # both default to `time`
    last_updated: "2026-01-01T07:00:00+00:00"
rooms:                             # each area's air (RoomClimate), where it differs from the
  bedroom: {temperature: 19.5, co2: 812.5}  # default; the room physics moves it
```

A device with `type` and `install: false` keeps the type as a label but gets no entities from the
catalog; `dump_home` writes this when a device's entities no longer match its type's. Tuples
(Home Assistant's `hs_color`, `rgb_color`...) are written `!tuple [a, b]` so that they come back as
tuples. Times are kept to the microsecond, Home Assistant's own resolution.

`import_ha_snapshot` twins a real Home Assistant home from a JSON or YAML dump with the keys
`floors` (floor_id, name, level), `areas` (area_id, name, floor_id), `devices` (id, name or
name_by_user, manufacturer, model, area_id), `entities` (entity registry entries) and `states`
(state objects as `/api/states` returns them). Entities of domains the twin does not model (unless
kept, read-only, with `keep_unmodelled`), and registry entries without a state (disabled ones
have none), are skipped and their ids returned.
Capabilities come from the registry entry's `capabilities`, else from the state attributes that
Home Assistant's `capability_attributes` lists; friendly_name, device_class, unit_of_measurement and
supported_features become registry fields. The clock starts at the newest `last_updated`. What Home
Assistant lacks travels as extra keys, which it ignores (`name`, `time`, `weather` and `rooms` at
the top, `parent_id` and `outdoor` on areas, `device_type` on devices, `hidden` on states), so
`export_ha_snapshot` then `import_ha_snapshot` gives back an equal home. JSON turns tuples into
lists; Home Assistant's colour attributes become tuples again, other values stay lists. The twin
has no `hidden_by`.

Without a `states` key the data is read as a `synthetic-home` inventory (`areas`, `devices` and
`entities` with `id`s): floors come from the areas' floor names (all at level 0: the inventory has
no levels), and entity attributes, which are synthetic-home's entity arguments, are made Home
Assistant's (enum names such as `sensor.SensorDeviceClass.TEMPERATURE`, `native_value`, boolean
states, a climate's `hvac_mode`).

All three are read and checked the same way, completely, before a home is returned: a file or
text of at most MAX_FILE_BYTES of UTF-8, lists and mappings nested at most MAX_DEPTH deep, at most
MAX_VALUES values, no YAML aliases (an alias bomb expands a few lines without end), times within
MIN_TIME..MAX_TIME, areas nested at most MAX_AREA_DEPTH deep, and every entity's registry fields,
capabilities, attributes and memory as its domain declares them (twin.domains.rules). Anything
else is a HomeDefinitionError naming where it is (the byte, the line and column, or the key), and
repeating at most a short excerpt of the input.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, replace
from datetime import UTC, datetime
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import voluptuous as vol
import yaml

from .atomic import write_text
from .catalog import DeviceType, load_catalog, slugify
from .domains import DOMAINS, check_entity
from .domains.rules import MAX_TEMPERATURE, MIN_TEMPERATURE
from .errors import HomeDefinitionError
from .home import DEFAULT_START, Home
from .outdoor import ConstantWeather, Outdoor, OutdoorSource
from .registry import Area, Device, EntityEntry, Floor
from .room import RoomClimate
from .state import State
from .validation import shown
from .weather import Weather

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # a PyYAML without libyaml: the same loader, in Python
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]

# A file: a path, or a package resource such as `files("twin.examples") / "demo_home.yaml"`.
Source = str | os.PathLike[str] | Traversable

# Home Assistant's capability_attributes per domain: static attributes, kept in the registry too.
CAPABILITIES: dict[str, frozenset[str]] = {
    "climate": frozenset(
        {
            "hvac_modes",
            "min_temp",
            "max_temp",
            "target_temp_step",
            "min_humidity",
            "max_humidity",
            "target_humidity_step",
            "fan_modes",
            "preset_modes",
            "swing_modes",
            "swing_horizontal_modes",
        }
    ),
    "cover": frozenset({"supported_speeds"}),
    "fan": frozenset({"preset_modes"}),
    "humidifier": frozenset(
        {"min_humidity", "max_humidity", "target_humidity_step", "available_modes"}
    ),
    "light": frozenset(
        {"min_color_temp_kelvin", "max_color_temp_kelvin", "effect_list", "supported_color_modes"}
    ),
    "media_player": frozenset({"source_list", "sound_mode_list"}),
    "sensor": frozenset({"state_class", "options"}),
    "vacuum": frozenset({"fan_speed_list"}),
    "water_heater": frozenset({"min_temp", "max_temp", "target_temp_step", "operation_list"}),
}
# Attributes Home Assistant keeps as tuples, which JSON turns into lists.
TUPLE_ATTRIBUTES = frozenset({"hs_color", "rgb_color", "rgbw_color", "rgbww_color", "xy_color"})
# Domains whose synthetic-home `unit_of_measurement` is a temperature unit, not a state attribute.
TEMPERATURE_UNIT_DOMAINS = frozenset({"climate", "water_heater"})
# The states a boolean synthetic-home state stands for, where they are not on/off.
BOOLEAN_STATES = {"cover": ("open", "closed"), "valve": ("open", "closed")}
# YAML's line breaks besides "\n".
_LINE_BREAKS = frozenset("\r\x85\u2028\u2029")

# What a home file, snapshot or inventory may be, whatever its format: larger, deeper or fuller
# input is refused before anything is built from it (a million nested "[" or a YAML alias bomb
# would otherwise exhaust the stack or memory).
MAX_FILE_BYTES = 8 * 1024 * 1024  # read from a file or given as text (then in characters too)
MAX_DEPTH = 64  # lists and mappings inside each other; a home file needs 6
MAX_VALUES = 500_000  # scalars, lists and mappings in all
# How deep areas may nest in each other (an ensuite in a bedroom is 2 deep).
MAX_AREA_DEPTH = 16
# The simulation clock's range: from the Unix epoch to the year 9000, which leaves a millennium
# of simulated time before Python's dates end (year 9999).
MIN_TIME = 0.0
MAX_TIME = datetime(9000, 1, 1, tzinfo=UTC).timestamp()
# Characters of an error's excerpts of the input: a YAML parser's complaint, a key.
_EXCERPT = 200
_KEY_EXCERPT = 60


# --- reading ---------------------------------------------------------------------------------


class _Loader(_SafeLoader):
    """Safe YAML that refuses duplicate keys and reads `!tuple` sequences as tuples; what it
    cannot construct (an impossible date, an int of more digits than Python reads) is a YAML
    error at that node."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A node's value; ValueError and OverflowError become errors at the node."""
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as err:
            raise yaml.constructor.ConstructorError(
                None, None, _clip(str(err)), node.start_mark
            ) from None

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """A mapping; a key written twice is an error rather than silently the last one."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                twice = key in seen
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    "a key must be a plain value such as a string",
                    key_node.start_mark,
                ) from None
            if twice:
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"key {shown(key)} twice",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


class _Dumper(yaml.SafeDumper):
    """Safe YAML that writes tuples as `!tuple` and never writes anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        """Write shared objects out in full: home files are for reading."""
        return True


def _construct_tuple(loader: yaml.BaseLoader, node: yaml.Node) -> tuple[Any, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise yaml.constructor.ConstructorError(
            None, None, "!tuple needs a sequence such as [1, 2]", node.start_mark
        )
    return tuple(loader.construct_sequence(node, deep=True))


def _represent_tuple(dumper: yaml.SafeDumper, data: tuple[Any, ...]) -> yaml.Node:
    return dumper.represent_sequence("!tuple", data, flow_style=True)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    """Strings with line breaks double-quoted: PyYAML's other styles may read back spaces."""
    style = '"' if any(character in _LINE_BREAKS for character in data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Loader.add_constructor("!tuple", _construct_tuple)
_Dumper.add_representer(tuple, _represent_tuple)
_Dumper.add_representer(str, _represent_str)


def _read(source: Source) -> tuple[str, Any]:
    """The parsed JSON or YAML of a file, or of text (a string with a line break); and its name.

    What the limits above refuse, and text that is not UTF-8, is a HomeDefinitionError that says
    where.
    """
    if isinstance(source, str) and "\n" in source:
        where = "home text"
        text = _text(source, where)
    else:
        where = str(source)
        text = _decoded(_bytes(source, where), where)
    with _at(where):
        document = _parse(text)
        _check_values(document)
    return where, document


def _bytes(source: Source, where: str) -> bytes:
    """A file's bytes, reading no more than the limit (and one byte to tell it is past it)."""
    file = Path(source) if isinstance(source, str | os.PathLike) else source
    try:
        with file.open("rb") as stream:
            data: bytes = stream.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        raise HomeDefinitionError(f"Cannot read {where}: {err.strerror or err}") from None
    if len(data) > MAX_FILE_BYTES:
        raise HomeDefinitionError(f"{where}: {_too_large()}")
    return data


def _decoded(data: bytes, where: str) -> str:
    """UTF-8 bytes as text (without a byte order mark)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise HomeDefinitionError(
            f"{where}: not UTF-8: byte {data[err.start]:#04x} at position {err.start} "
            f"({err.reason}); save the file as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


def _text(text: str, where: str) -> str:
    """Home text within the limit, in characters and in UTF-8 bytes."""
    if len(text) > MAX_FILE_BYTES:
        raise HomeDefinitionError(f"{where}: {_too_large()}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as err:
        raise HomeDefinitionError(
            f"{where}: not Unicode text: character {err.start} is a lone surrogate "
            f"({text[err.start]!r})"
        ) from None
    if size > MAX_FILE_BYTES:
        raise HomeDefinitionError(f"{where}: {_too_large()}")
    return text


def _too_large() -> str:
    return f"larger than {MAX_FILE_BYTES:,} bytes ({MAX_FILE_BYTES // 2**20} MiB), a file's limit"


def _parse(text: str) -> Any:
    """JSON if it is JSON, else YAML (which reads JSON too, and says where it goes wrong)."""
    if text.lstrip().startswith(("{", "[")):
        with suppress(ValueError, RecursionError):
            return json.loads(text, object_pairs_hook=_unique_keys)
    try:
        _check_yaml(text)
        return yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as err:
        raise HomeDefinitionError(f"malformed YAML: {_yaml_problem(err)}") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object; a key written twice is refused (the YAML reading then says where)."""
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise ValueError("a key written twice")
    return mapping


def _check_yaml(text: str) -> None:
    """Refuse aliases, nesting past MAX_DEPTH and more than MAX_VALUES values, reading only the
    parser's events: an alias repeats a subtree, so a few lines could expand without end."""
    depth = values = 0
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            _refuse(event, "an alias (*name) is not allowed in a home; write the value out")
        if isinstance(event, yaml.NodeEvent):
            values += 1
            if values > MAX_VALUES:
                _refuse(event, f"more than {MAX_VALUES:,} values, the limit of a home")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                _refuse(event, f"lists and mappings nested more than {MAX_DEPTH} deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _refuse(event: Any, problem: str) -> None:
    """A YAML error at the event (libyaml's events carry their own kind of mark)."""
    raise yaml.composer.ComposerError(None, None, problem, event.start_mark)


def _yaml_problem(err: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong, and at which line and column."""
    if not isinstance(err, yaml.MarkedYAMLError):
        return _clip(" ".join(str(err).split()))
    problem = _clip("; ".join(part for part in (err.context, err.problem) if part))
    mark = err.problem_mark or err.context_mark
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem


def _check_values(document: Any) -> None:
    """Refuse a document nested past MAX_DEPTH, of more than MAX_VALUES values, or with text that
    is not Unicode (JSON's escapes can make lone surrogates, which no file can hold)."""
    values = 0
    pending: list[tuple[Any, int]] = [(document, 0)]
    while pending:
        value, depth = pending.pop()
        values += 1
        if values > MAX_VALUES:
            raise HomeDefinitionError(f"more than {MAX_VALUES:,} values, the limit of a home")
        if isinstance(value, Mapping):
            children: Any = [*value, *value.values()]
        elif isinstance(value, list | tuple):
            children = value
        else:
            if isinstance(value, str) and not value.isascii():
                _check_unicode(value)
            continue
        if depth == MAX_DEPTH:
            raise HomeDefinitionError(f"lists and mappings nested more than {MAX_DEPTH} deep")
        pending.extend((child, depth + 1) for child in children)


def _check_unicode(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise HomeDefinitionError(
            f"{shown(text)} holds a lone surrogate, which is not Unicode text"
        ) from None


def _clip(text: str, limit: int = _EXCERPT) -> str:
    """`text`, cut short if long: error messages never repeat much of the input."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- validation ------------------------------------------------------------------------------


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


def _timestamp(value: Any) -> float:
    """An ISO 8601 time (a string or a YAML timestamp; no offset means UTC) in epoch seconds."""
    if isinstance(value, str):
        with suppress(ValueError):
            value = datetime.fromisoformat(value)
    if not isinstance(value, datetime):
        raise vol.Invalid(
            f"expected an ISO 8601 time such as 2026-01-01T08:00:00+00:00, got {shown(value)}"
        )
    moment: datetime = value if value.tzinfo else value.replace(tzinfo=UTC)
    seconds = moment.timestamp()
    if not MIN_TIME <= seconds <= MAX_TIME:
        raise vol.Invalid(
            f"expected a time from {_iso(MIN_TIME)} to {_iso(MAX_TIME)} (the clock needs room "
            f"to run), got {moment.isoformat()}"
        )
    return seconds


def _state_string(value: Any) -> str:
    if not isinstance(value, str):
        raise vol.Invalid(f"a state is a string, got {shown(value)}; quote it, e.g. 'on' or '21.5'")
    return value


# Ids of at most 255 characters, Home Assistant's longest entity id.
_ID = vol.All(str, vol.Length(min=1, max=255))


def _finite(value: Any) -> float:
    """A finite number, as a float (True is no number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise vol.Invalid(f"expected a finite number, got {shown(value)}")
    return float(value)


def _percent(value: Any) -> float:
    """A relative humidity."""
    number = _finite(value)
    if not 0 <= number <= 100:
        raise vol.Invalid(f"expected 0-100, got {shown(value)}")
    return number


def _not_negative(value: Any) -> float:
    """An amount that cannot be negative: light, CO2, particles."""
    number = _finite(value)
    if number < 0:
        raise vol.Invalid(f"expected 0 or more, got {shown(value)}")
    return number


def _temperature(value: Any) -> float:
    """An air temperature, °C, within what the room physics models (twin.domains.rules)."""
    number = _finite(value)
    if not MIN_TEMPERATURE <= number <= MAX_TEMPERATURE:
        raise vol.Invalid(
            f"expected {MIN_TEMPERATURE:g} to {MAX_TEMPERATURE:g} °C, got {shown(value)}"
        )
    return number


_CITY_WEATHER = vol.Schema({vol.Required("city"): _ID, vol.Required("seed"): int})
_CONSTANT_WEATHER = vol.Schema(
    {
        vol.Required("temperature"): _temperature,
        vol.Required("humidity"): _percent,
        vol.Required("sun_elevation"): vol.All(_finite, vol.Range(min=-90, max=90)),
        vol.Required("cloud_cover"): vol.All(_finite, vol.Range(min=0, max=1)),
    }
)


def _weather_keys(value: Any) -> dict[str, Any]:
    """A city's weather ({city, seed}) or constant outdoor conditions, by the keys it has."""
    if isinstance(value, dict) and "city" in value:
        checked: dict[str, Any] = _CITY_WEATHER(value)
    else:
        checked = _CONSTANT_WEATHER(value)
    return checked


_ROOMS = {
    str: vol.Schema(
        {
            vol.Optional("temperature"): _temperature,
            vol.Optional("humidity"): _percent,
            vol.Optional("illuminance"): _not_negative,
            vol.Optional("co2"): _not_negative,
            vol.Optional("pm25"): _not_negative,
        }
    )
}


def _nullable(validator: Any, *keys: str) -> dict[Any, Any]:
    """Keys that may be missing or null (None)."""
    return {vol.Optional(key, default=None): vol.Any(None, validator) for key in keys}


def _list_of(fields: dict[Any, Any], extra: int = vol.ALLOW_EXTRA) -> list[vol.Schema]:
    """A list of mappings with `fields` and, unless `extra` says not, other keys (as registries)."""
    return [vol.Schema(fields, extra=extra)]


_STATE_KEYS: dict[Any, Any] = {
    vol.Optional("attributes"): dict,
    vol.Optional("removed_attributes"): [str],
    vol.Optional("hidden"): dict,
    vol.Optional("last_changed"): _timestamp,
    vol.Optional("last_updated"): _timestamp,
}
_HOME_FILE = vol.Schema(
    {
        vol.Optional("name", default="Home"): str,
        vol.Optional("time", default=_iso(DEFAULT_START)): _timestamp,
        vol.Optional("floors", default=list): _list_of(
            {
                vol.Required("id"): _ID,
                vol.Required("name"): str,
                vol.Optional("level", default=0): int,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("areas", default=list): _list_of(
            {
                vol.Required("id"): _ID,
                vol.Required("name"): str,
                **_nullable(_ID, "floor", "parent"),
                vol.Optional("outdoor", default=False): bool,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("devices", default=list): _list_of(
            {
                vol.Required("id"): _ID,
                vol.Required("name"): str,
                vol.Optional("install", default=True): bool,
                **_nullable(_ID, "type", "area"),
                vol.Optional("manufacturer"): vol.Any(None, str),
                vol.Optional("model"): vol.Any(None, str),
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("entities", default=list): _list_of(
            {
                vol.Required("entity_id"): _ID,
                vol.Required("name"): str,
                **_nullable(_ID, "device", "area"),
                **_nullable(str, "device_class", "unit_of_measurement", "entity_category"),
                vol.Optional("supported_features", default=0): int,
                vol.Optional("capabilities", default=dict): dict,
                vol.Required("state"): _state_string,
                **_STATE_KEYS,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("states", default=dict): {
            str: {vol.Optional("state"): _state_string, **_STATE_KEYS}
        },
        vol.Optional("weather"): _weather_keys,
        vol.Optional("rooms", default=dict): _ROOMS,
    }
)
_HA_SNAPSHOT = vol.Schema(
    {
        vol.Optional("name", default="Home"): str,
        vol.Optional("time"): _timestamp,
        vol.Optional("floors", default=list): _list_of(
            {vol.Required("floor_id"): _ID, vol.Required("name"): str, **_nullable(int, "level")}
        ),
        vol.Optional("areas", default=list): _list_of(
            {
                vol.Required("area_id"): _ID,
                vol.Required("name"): str,
                **_nullable(_ID, "floor_id", "parent_id"),
                vol.Optional("outdoor", default=False): bool,
            }
        ),
        vol.Optional("devices", default=list): _list_of(
            {
                vol.Required("id"): _ID,
                **_nullable(str, "name", "name_by_user", "manufacturer", "model"),
                **_nullable(_ID, "area_id", "device_type"),
            }
        ),
        vol.Optional("entities", default=list): _list_of(
            {
                vol.Required("entity_id"): _ID,
                **_nullable(_ID, "device_id", "area_id"),
                **_nullable(str, "name", "original_name", "device_class", "original_device_class"),
                **_nullable(str, "unit_of_measurement", "entity_category"),
                **_nullable(int, "supported_features"),
                **_nullable(dict, "capabilities"),
            }
        ),
        vol.Required("states"): _list_of(
            {
                vol.Required("entity_id"): _ID,
                vol.Required("state"): _state_string,
                vol.Optional("attributes", default=dict): dict,
                vol.Optional("hidden", default=dict): dict,
                vol.Optional("last_changed"): _timestamp,
                vol.Optional("last_updated"): _timestamp,
            }
        ),
        vol.Optional("weather"): _weather_keys,
        vol.Optional("rooms", default=dict): _ROOMS,
    },
    extra=vol.ALLOW_EXTRA,
)
# A synthetic-home device's info: what the twin reads of it.
_DEVICE_INFO = vol.Schema(_nullable(str, "manufacturer", "model"), extra=vol.ALLOW_EXTRA)
_INVENTORY = vol.Schema(
    {
        vol.Optional("areas", default=list): _list_of(
            {vol.Required("name"): str, **_nullable(_ID, "id"), **_nullable(str, "floor")}
        ),
        vol.Optional("devices", default=list): _list_of(
            {
                vol.Required("name"): str,
                **_nullable(_ID, "id", "area"),
                **_nullable(_DEVICE_INFO, "info"),
            }
        ),
        vol.Optional("entities", default=list): _list_of(
            {
                vol.Required("id"): _ID,
                **_nullable(str, "name"),
                **_nullable(_ID, "area", "device"),
                **_nullable(vol.Any(str, bool, int, float), "state"),
                **_nullable(dict, "attributes"),
            }
        ),
    },
    extra=vol.ALLOW_EXTRA,
)


def _validate(schema: vol.Schema, raw: Any, what: str) -> dict[str, Any]:
    """`raw` checked and completed by `schema`; an error names the key at fault."""
    if not isinstance(raw, dict):
        raise HomeDefinitionError(f"expected {what} (a mapping), got {type(raw).__name__}")
    try:
        validated: dict[str, Any] = schema(raw)
    except vol.MultipleInvalid as err:
        first = err.errors[0]
        raise HomeDefinitionError(f"{_key_path(first.path)}: {first.error_message}") from None
    return validated


def _key_path(path: Sequence[Any]) -> str:
    """`devices[2].type` for the path ['devices', 2, 'type']."""
    text = ""
    for part in path:
        name = _clip(str(part), _KEY_EXCERPT)
        if isinstance(part, int):
            text += f"[{name}]"
        elif "." in name:
            text += f"[{name!r}]"
        else:
            text += f".{name}" if text else name
    return text


@contextmanager
def _at(where: str) -> Iterator[None]:
    """Prefix the message of a HomeDefinitionError raised inside with `where`."""
    try:
        yield
    except HomeDefinitionError as err:
        raise HomeDefinitionError(f"{where}: {err}") from None


def _first(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


# --- home files ------------------------------------------------------------------------------


def load_home(source: Source) -> Home:
    """A home from a home file (a path) or its text (a string with a line break).

    Raises HomeDefinitionError, naming the file and key at fault, for any bad input.
    """
    where, raw = _read(source)
    with _at(where):
        return _checked(_build(_validate(_HOME_FILE, raw, "a home file")))


def dump_home(home: Home) -> str:
    """The home file of `home`: catalog devices by type, and only the states that differ."""
    catalog = load_catalog()
    from_catalog: set[str] = set()
    devices = []
    for device in sorted(home.devices.values(), key=lambda device: device.device_id):
        entity_ids = _catalog_entities(home, device, catalog)
        from_catalog.update(entity_ids or ())
        devices.append(_device_document(device, catalog, installs=entity_ids is not None))
    free = {
        entity_id: _entity_document(entry, home.states[entity_id].state)
        for entity_id, entry in sorted(home.entities.items())
        if entity_id not in from_catalog
    }
    head = {"name": home.name, "time": _iso(home.now)}
    body: dict[str, Any] = {
        "floors": [
            {"id": floor.floor_id, "name": floor.name, "level": floor.level}
            for floor in sorted(home.floors.values(), key=lambda floor: floor.floor_id)
        ],
        "areas": [_area_document(area) for _, area in sorted(home.areas.items())],
        "devices": devices,
        "entities": list(free.values()),
    }
    initial = _build(_validate(_HOME_FILE, {**head, **body}, "a home file"))
    weather = _weather_document(home.weather)
    document = {**head, **({"weather": weather} if weather else {}), **body}
    states = {}
    for entity_id in sorted(home.states):
        changes = _state_changes(initial.states[entity_id], home.states[entity_id])
        if entity_id in free:
            free[entity_id].update(changes)
        elif changes:
            states[entity_id] = changes
    if states:
        document["states"] = states
    if rooms := _rooms_document(home):
        document["rooms"] = rooms
    try:
        return yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    except yaml.YAMLError as err:
        raise HomeDefinitionError(f"Cannot write home {home.name!r} as YAML: {err}") from None


def save_home(home: Home, path: str | os.PathLike[str]) -> None:
    """Write the home file of `home` atomically: a crash leaves the old file or the new one."""
    write_text(Path(path), dump_home(home))


def _build(document: Mapping[str, Any]) -> Home:
    """A home from a validated home file."""
    home = Home(document["name"], document["time"], _weather(document))
    for index, raw in enumerate(document["floors"]):
        with _at(f"floors[{index}]"):
            home.add_floor(Floor(raw["id"], raw["name"], raw["level"]))
    areas = [
        Area(raw["id"], raw["name"], raw["floor"], raw["parent"], raw["outdoor"])
        for raw in document["areas"]
    ]
    _add_areas(home, [(f"areas[{index}]", area) for index, area in enumerate(areas)])
    catalog = load_catalog()
    for index, raw in enumerate(document["devices"]):
        with _at(f"devices[{index}]"):
            _add_device(home, raw, catalog)
    for index, raw in enumerate(document["entities"]):
        with _at(f"entities[{index}]"):
            entry = EntityEntry(
                entity_id=raw["entity_id"],
                name=raw["name"],
                device_id=raw["device"],
                area_id=raw["area"],
                device_class=raw["device_class"],
                unit_of_measurement=raw["unit_of_measurement"],
                supported_features=raw["supported_features"],
                entity_category=raw["entity_category"],
                capabilities=raw["capabilities"],
            )
            home.add_entity(entry, raw["state"])
            _change_state(home, entry.entity_id, raw)
    for entity_id, raw in document["states"].items():
        if entity_id not in home.states:
            raise HomeDefinitionError(
                f"states[{shown(entity_id)}]: the home has no entity {shown(entity_id)}; "
                "catalog entities are named <domain>.<device name slug>[_<key>]"
            )
        _change_state(home, entity_id, raw)
    _set_rooms(home, document["rooms"])
    return home


def _checked(home: Home) -> Home:
    """The home, once every entity holds only what its domain can use (twin.domains.rules)."""
    for entity_id, entry in home.entities.items():
        with _at(entity_id):
            check_entity(entry, home.states[entity_id])
    return home


def _weather(document: Mapping[str, Any]) -> OutdoorSource:
    """The weather a validated home file or snapshot names: ConstantWeather's without one."""
    raw = document.get("weather")
    if raw is None:
        return ConstantWeather()
    if "city" in raw:
        with _at("weather"):
            return Weather(raw["city"], raw["seed"])
    return ConstantWeather(Outdoor(**raw))


def _weather_document(weather: OutdoorSource) -> dict[str, Any] | None:
    """How a home file writes its weather; None for ConstantWeather's defaults."""
    if isinstance(weather, Weather):
        return {"city": weather.city, "seed": weather.seed}
    if isinstance(weather, ConstantWeather):
        return None if weather == ConstantWeather() else asdict(weather.outdoor)
    raise HomeDefinitionError(
        f"Cannot write weather of type {type(weather).__name__}: a home file keeps a "
        "twin.weather.Weather or a ConstantWeather; give the home one of those"
    )


def _set_rooms(home: Home, rooms: Mapping[str, Mapping[str, float]]) -> None:
    """Set the air of the areas a file lists; the others keep RoomClimate's defaults."""
    for area_id, raw in rooms.items():
        if area_id not in home.areas:
            raise HomeDefinitionError(
                f"rooms[{shown(area_id)}]: the home has no area {shown(area_id)}; rooms are keyed "
                "by area id"
            )
        home.rooms[area_id] = RoomClimate(**raw)


def _rooms_document(home: Home) -> dict[str, dict[str, float]]:
    """The fields of each area's air that differ from RoomClimate's defaults, by area."""
    default = asdict(RoomClimate())
    rooms = {}
    for area_id, room in sorted(home.rooms.items()):
        changed = {key: value for key, value in asdict(room).items() if value != default[key]}
        if changed:
            rooms[area_id] = changed
    return rooms


def _add_areas(home: Home, areas: Sequence[tuple[str, Area]]) -> None:
    """Add areas, each after its parent, whatever order they are listed in; at most
    MAX_AREA_DEPTH deep."""
    listed: dict[str, tuple[str, Area]] = {}
    for where, area in areas:
        if area.area_id in listed:
            raise HomeDefinitionError(
                f"{where}: there is already an area with id {shown(area.area_id)}"
            )
        listed[area.area_id] = (where, area)
    depths: dict[str, int] = {}
    for area_id in listed:
        if area_id in home.areas:
            continue
        chain = [area_id]  # the area, then its ancestors that are yet to be added
        while (parent := listed[chain[-1]][1].parent_id) in listed and parent not in home.areas:
            if parent in chain:
                raise HomeDefinitionError(
                    f"{listed[chain[-1]][0]}: parent {shown(parent)} is itself inside "
                    f"{shown(chain[-1])}; areas cannot loop"
                )
            if len(chain) == MAX_AREA_DEPTH:
                _too_deep(listed[area_id][0])
            chain.append(parent)
        for child in reversed(chain):
            where, area = listed[child]
            with _at(where):
                home.add_area(area)
            depths[child] = depths.get(area.parent_id or "", 0) + 1
            if depths[child] > MAX_AREA_DEPTH:
                _too_deep(where)


def _too_deep(where: str) -> None:
    raise HomeDefinitionError(f"{where}: areas nest at most {MAX_AREA_DEPTH} deep")


def _add_device(home: Home, raw: Mapping[str, Any], catalog: Mapping[str, DeviceType]) -> None:
    """Add a plain device, or a catalog device with its entities and any model override."""
    type_id = raw["type"]
    if type_id is None or not raw["install"]:
        home.add_device(
            Device(
                raw["id"],
                raw["name"],
                raw.get("manufacturer"),
                raw.get("model"),
                raw["area"],
                type_id,
            )
        )
        return
    device_type = catalog.get(type_id)
    if device_type is None:
        known = ", ".join(sorted(catalog))
        raise HomeDefinitionError(
            f"type: no device type {type_id!r} in the catalog; known: {known}"
        )
    device = device_type.install(home, raw["id"], raw["name"], raw["area"])
    overrides = {key: raw[key] for key in ("manufacturer", "model") if key in raw}
    home.devices[device.device_id] = replace(device, **overrides)


def _change_state(home: Home, entity_id: str, raw: Mapping[str, Any]) -> None:
    """Apply a file's state keys to an entity's state."""
    old = home.states[entity_id]
    removed = set(raw.get("removed_attributes", ()))
    attributes = {key: value for key, value in old.attributes.items() if key not in removed}
    attributes.update(with_tuples(raw.get("attributes", {})))
    home.states[entity_id] = State(
        entity_id,
        raw.get("state", old.state),
        attributes,
        raw.get("last_changed", old.last_changed),
        raw.get("last_updated", old.last_updated),
        with_tuples(raw["hidden"]) if "hidden" in raw else old.hidden,
    )


def _catalog_entities(
    home: Home, device: Device, catalog: Mapping[str, DeviceType]
) -> list[str] | None:
    """The ids of a device's catalog entities; None unless its type would install just those."""
    device_type = catalog.get(device.device_type or "")
    if device_type is None:
        return None
    scratch = Home()
    device_type.install(scratch, device.device_id, device.name)
    for entity_id, entry in scratch.entities.items():
        if home.entities.get(entity_id) != entry:
            return None
    return list(scratch.entities)


def _device_document(
    device: Device, catalog: Mapping[str, DeviceType], installs: bool
) -> dict[str, Any]:
    document: dict[str, Any] = {"id": device.device_id, "name": device.name}
    if device.device_type is not None:
        document["type"] = device.device_type
    if device.device_type is not None and not installs:
        document["install"] = False
    if device.area_id is not None:
        document["area"] = device.area_id
    if installs:
        manufacturer, model = catalog[device.device_type or ""].models[0]
        if device.manufacturer != manufacturer:
            document["manufacturer"] = device.manufacturer
        if device.model != model:
            document["model"] = device.model
    else:
        if device.manufacturer is not None:
            document["manufacturer"] = device.manufacturer
        if device.model is not None:
            document["model"] = device.model
    return document


def _area_document(area: Area) -> dict[str, Any]:
    document: dict[str, Any] = {"id": area.area_id, "name": area.name}
    if area.floor_id is not None:
        document["floor"] = area.floor_id
    if area.parent_id is not None:
        document["parent"] = area.parent_id
    if area.outdoor:
        document["outdoor"] = True
    return document


def _entity_document(entry: EntityEntry, state: str) -> dict[str, Any]:
    optional = {
        "device": entry.device_id,
        "area": entry.area_id,
        "device_class": entry.device_class,
        "unit_of_measurement": entry.unit_of_measurement,
        "supported_features": entry.supported_features or None,
        "entity_category": entry.entity_category,
        "capabilities": _sorted(entry.capabilities) or None,
    }
    return {
        "entity_id": entry.entity_id,
        "name": entry.name,
        **{key: value for key, value in optional.items() if value is not None},
        "state": state,
    }


def _state_changes(initial: State, current: State) -> dict[str, Any]:
    """The state keys of a home file that turn `initial` into `current`."""
    changes: dict[str, Any] = {}
    if current.state != initial.state:
        changes["state"] = current.state
    attributes = {
        key: value
        for key, value in current.attributes.items()
        if key not in initial.attributes or not _same(initial.attributes[key], value)
    }
    if attributes:
        changes["attributes"] = _sorted(attributes)
    removed = [key for key in initial.attributes if key not in current.attributes]
    if removed:
        changes["removed_attributes"] = sorted(removed)
    if current.hidden != initial.hidden:
        changes["hidden"] = _sorted(current.hidden)
    if current.last_changed != initial.last_changed:
        changes["last_changed"] = _iso(current.last_changed)
    if current.last_updated != initial.last_updated:
        changes["last_updated"] = _iso(current.last_updated)
    return changes


def _same(first: Any, second: Any) -> bool:
    """Equal and of the same type, so that True is not written off as 1."""
    return type(first) is type(second) and first == second


def _sorted(mapping: Mapping[Any, Any]) -> dict[Any, Any]:
    """A copy with keys in order, nested mappings too, so that files are written the same way."""
    return {
        key: _sorted(value) if isinstance(value, Mapping) else value
        for key, value in sorted(mapping.items(), key=lambda item: str(item[0]))
    }


# --- Home Assistant snapshots ----------------------------------------------------------------


def import_ha_snapshot(
    data: Mapping[str, Any] | Source, *, keep_unmodelled: bool = False
) -> tuple[Home, list[str]]:
    """A home from a Home Assistant snapshot or a synthetic-home inventory (a mapping, a JSON or
    YAML file, or its text), and the sorted ids of the entities it skipped.

    `keep_unmodelled` keeps a snapshot's entities of domains the twin does not simulate, read-only
    (Home.add_entity's `any_domain`), as a mirror of a real home needs them for its conditions.
    """
    if isinstance(data, Mapping):
        where, raw = "snapshot", data
        with _at(where):
            _check_values(raw)
    else:
        where, raw = _read(data)
    with _at(where):
        if isinstance(raw, Mapping) and "states" in raw:
            snapshot = _validate(_HA_SNAPSHOT, dict(raw), "a snapshot")
            home, skipped = _from_snapshot(snapshot, keep_unmodelled)
        else:
            inventory = _validate(_INVENTORY, raw, "a snapshot or an inventory")
            home, skipped = _from_inventory(inventory)
        return _checked(home), skipped


def export_ha_snapshot(home: Home) -> dict[str, Any]:
    """The home as a Home Assistant snapshot of JSON types, which import_ha_snapshot reads back."""
    return {
        "name": home.name,
        "time": _iso(home.now),
        "floors": [
            {"floor_id": floor.floor_id, "name": floor.name, "level": floor.level}
            for _, floor in sorted(home.floors.items())
        ],
        "areas": [
            {
                "area_id": area.area_id,
                "name": area.name,
                "floor_id": area.floor_id,
                "parent_id": area.parent_id,
                "outdoor": area.outdoor,
            }
            for _, area in sorted(home.areas.items())
        ],
        "devices": [
            {
                "id": device.device_id,
                "name": device.name,
                "manufacturer": device.manufacturer,
                "model": device.model,
                "area_id": device.area_id,
                "device_type": device.device_type,
            }
            for _, device in sorted(home.devices.items())
        ],
        "entities": [
            {
                "entity_id": entry.entity_id,
                "device_id": entry.device_id,
                "area_id": entry.area_id,
                "name": entry.name,
                "device_class": entry.device_class,
                "unit_of_measurement": entry.unit_of_measurement,
                "supported_features": entry.supported_features,
                "entity_category": entry.entity_category,
                "capabilities": _jsonable(entry.capabilities),
            }
            for _, entry in sorted(home.entities.items())
        ],
        "states": [_jsonable(_state_object(state)) for _, state in sorted(home.states.items())],
        **({"weather": weather} if (weather := _weather_document(home.weather)) else {}),
        "rooms": _rooms_document(home),
    }


def _state_object(state: State) -> dict[str, Any]:
    data = state.as_dict()
    if state.hidden:
        data["hidden"] = state.hidden
    return data


def _jsonable(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def with_tuples(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes with Home Assistant's tuples restored where JSON made them lists."""
    return {
        key: tuple(value) if key in TUPLE_ATTRIBUTES and isinstance(value, list) else value
        for key, value in attributes.items()
    }


def _by_id(items: Sequence[Mapping[str, Any]], key: str, where: str) -> dict[str, Any]:
    """Items by their id; an id listed twice is an error."""
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        if item[key] in found:
            raise HomeDefinitionError(f"{where}[{index}]: {key} {shown(item[key])} is listed twice")
        found[item[key]] = item
    return found


def _from_snapshot(snapshot: Mapping[str, Any], keep_unmodelled: bool) -> tuple[Home, list[str]]:
    states = snapshot["states"]
    registry = _by_id(snapshot["entities"], "entity_id", "entities")
    listed = _by_id(states, "entity_id", "states")
    newest = max(
        (state["last_updated"] for state in states if "last_updated" in state), default=None
    )
    home = Home(
        snapshot["name"], _first(snapshot.get("time"), newest, DEFAULT_START), _weather(snapshot)
    )
    for index, raw in enumerate(snapshot["floors"]):
        with _at(f"floors[{index}]"):
            home.add_floor(Floor(raw["floor_id"], raw["name"], raw["level"] or 0))
    areas = [
        (
            f"areas[{index}]",
            Area(raw["area_id"], raw["name"], raw["floor_id"], raw["parent_id"], raw["outdoor"]),
        )
        for index, raw in enumerate(snapshot["areas"])
    ]
    _add_areas(home, areas)
    for index, raw in enumerate(snapshot["devices"]):
        name = _first(raw["name_by_user"], raw["name"], raw["model"], raw["id"])
        with _at(f"devices[{index}]"):
            home.add_device(
                Device(
                    raw["id"],
                    name,
                    raw["manufacturer"],
                    raw["model"],
                    raw["area_id"],
                    raw["device_type"],
                )
            )
    skipped = [entity_id for entity_id in registry if entity_id not in listed]
    for index, state in enumerate(states):
        entity_id = state["entity_id"]
        entry = registry.get(entity_id, {})
        if entity_id.partition(".")[0] not in DOMAINS and not keep_unmodelled:
            skipped.append(entity_id)
            continue
        with _at(f"states[{index}] ({entity_id})"):
            _add_ha_entity(home, state, entry, keep_unmodelled)
    _set_rooms(home, snapshot["rooms"])
    return home, sorted(skipped)


def _add_ha_entity(
    home: Home, state: Mapping[str, Any], registry: Mapping[str, Any], any_domain: bool
) -> None:
    """Add one entity from its state object and entity registry entry (which may be empty)."""
    entity_id = state["entity_id"]
    attributes = with_tuples(state["attributes"])
    name = _first(
        attributes.pop("friendly_name", None), registry.get("name"), registry.get("original_name")
    )
    device_class = _first(
        attributes.pop("device_class", None),
        registry.get("device_class"),
        registry.get("original_device_class"),
    )
    unit = _first(attributes.pop("unit_of_measurement", None), registry.get("unit_of_measurement"))
    features = _first(
        attributes.pop("supported_features", None), registry.get("supported_features")
    )
    capabilities = registry.get("capabilities")
    if capabilities is None:
        static = CAPABILITIES.get(entity_id.partition(".")[0], frozenset())
        capabilities = {key: value for key, value in attributes.items() if key in static}
    entry = EntityEntry(
        entity_id=entity_id,
        name=name if name is not None else entity_id.partition(".")[2].replace("_", " "),
        device_id=registry.get("device_id"),
        area_id=registry.get("area_id"),
        device_class=device_class,
        unit_of_measurement=unit,
        supported_features=features or 0,
        entity_category=registry.get("entity_category"),
        capabilities=dict(capabilities),
    )
    added = home.add_entity(entry, state["state"], attributes, any_domain=any_domain)
    home.states[entity_id] = replace(
        added,
        last_changed=state.get("last_changed", home.now),
        last_updated=state.get("last_updated", home.now),
        hidden=with_tuples(state["hidden"]),
    )


# --- synthetic-home inventories --------------------------------------------------------------


def _from_inventory(inventory: Mapping[str, Any]) -> tuple[Home, list[str]]:
    """A home from a synthetic-home inventory; it has no floor levels, so all floors get 0."""
    home = Home()
    areas = []
    for index, raw in enumerate(inventory["areas"]):
        floor_id = None
        if raw["floor"] is not None:
            floor_id = slugify(raw["floor"])
            if floor_id not in home.floors:
                home.add_floor(Floor(floor_id, raw["floor"]))
        area_id = raw["id"] or slugify(raw["name"])
        areas.append((f"areas[{index}]", Area(area_id, raw["name"], floor_id)))
    _add_areas(home, areas)
    for index, raw in enumerate(inventory["devices"]):
        info = raw["info"] or {}
        device = Device(
            raw["id"] or slugify(raw["name"]),
            raw["name"],
            info.get("manufacturer"),
            info.get("model"),
            raw["area"],
        )
        with _at(f"devices[{index}]"):
            home.add_device(device)
    skipped = []
    for index, raw in enumerate(inventory["entities"]):
        if raw["id"].partition(".")[0] not in DOMAINS:
            skipped.append(raw["id"])
            continue
        with _at(f"entities[{index}]"):
            _add_inventory_entity(home, raw)
    return home, sorted(skipped)


def _add_inventory_entity(home: Home, raw: Mapping[str, Any]) -> None:
    """Add an inventory entity: its attributes are the synthetic-home entity's arguments, with
    enum names (`sensor.SensorDeviceClass.TEMPERATURE`) and native values, made Home Assistant's."""
    entity_id = raw["id"]
    domain = entity_id.partition(".")[0]
    attributes = dict(raw["attributes"] or {})
    device_class = _enum_value(attributes.pop("device_class", None))
    if "state_class" in attributes:
        attributes["state_class"] = _enum_value(attributes["state_class"])
    features = attributes.pop("supported_features", 0)
    if isinstance(features, list):
        if not all(isinstance(name, str) for name in features):
            raise HomeDefinitionError(
                "attributes.supported_features: expected a list of feature names such as "
                "light.LightEntityFeature.EFFECT"
            )
        try:
            features = DOMAINS[domain].feature_flags(_enum_value(name) for name in features)
        except KeyError as err:
            raise HomeDefinitionError(
                f"attributes.supported_features: {_clip(err.args[0])}"
            ) from None
    unit = _first(
        attributes.pop("native_unit_of_measurement", None),
        attributes.pop("unit_of_measurement", None),
    )
    state = _first(raw["state"], attributes.pop("native_value", None))
    if domain == "climate":
        state = _first(state, attributes.pop("hvac_mode", None))
    static = CAPABILITIES.get(domain, frozenset())
    capabilities = {key: value for key, value in attributes.items() if key in static}
    device = home.devices.get(raw["device"] or "")
    entry = EntityEntry(
        entity_id=entity_id,
        name=_first(raw["name"], device and device.name, entity_id.partition(".")[2]),
        device_id=raw["device"],
        area_id=None if device and device.area_id == raw["area"] else raw["area"],
        device_class=device_class,
        unit_of_measurement=None if domain in TEMPERATURE_UNIT_DOMAINS else unit,
        supported_features=features,
        capabilities=capabilities,
    )
    home.add_entity(entry, _inventory_state(domain, state, attributes), attributes)


def _enum_value(value: Any) -> Any:
    """`sensor.SensorDeviceClass.TEMPERATURE` -> `temperature`; other values as they are."""
    if isinstance(value, str) and "." in value:
        return value.rpartition(".")[2].lower()
    return value


def _inventory_state(domain: str, value: Any, attributes: Mapping[str, Any]) -> str:
    """Home Assistant's state for an inventory state, as synthetic-home's entities show it."""
    if value is None:
        if domain == "light":
            return "on" if attributes.get("brightness") else "off"
        return "unknown"
    if isinstance(value, bool):
        on, off = BOOLEAN_STATES.get(domain, ("on", "off"))
        return on if value else off
    return str(value)

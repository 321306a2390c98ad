"""What home files, Home Assistant snapshots and synthetic-home inventories share: reading JSON
or YAML safely within the limits of a home, checking values, and building the parts of a home that
every format has (areas, rooms, weather), each error naming where it is."""

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

from ..domains import DOMAINS, check_entity, domain_of
from ..domains.rules import MAX_TEMPERATURE, MIN_TEMPERATURE
from ..errors import HomeDefinitionError
from ..home import Home
from ..outdoor import ConstantWeather, Outdoor, OutdoorSource
from ..registry import Area, EntityEntry
from ..room import RoomClimate
from ..service import EntityDraft
from ..state import State
from ..validation import shown
from ..weather import Weather

try:
    from yaml import CSafeLoader as _SafeLoader
except ImportError:  # a PyYAML without libyaml: the same loader, in Python
    from yaml import SafeLoader as _SafeLoader  # type: ignore[assignment]


# A file: a path, or a package resource such as `files("twin.examples") / "demo_home.yaml"`.
Source = str | os.PathLike[str] | Traversable
# Attributes Home Assistant keeps as tuples (those of every domain), which JSON turns into lists.
TUPLE_ATTRIBUTES: frozenset[str] = frozenset().union(
    *(domain.carrying.tuples for domain in DOMAINS.values())
)
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
                None, None, clip(str(err)), node.start_mark
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


def _construct_tuple(loader: yaml.BaseLoader, node: yaml.Node) -> tuple[Any, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise yaml.constructor.ConstructorError(
            None, None, "!tuple needs a sequence such as [1, 2]", node.start_mark
        )
    return tuple(loader.construct_sequence(node, deep=True))


_Loader.add_constructor("!tuple", _construct_tuple)


def read_source(source: Source) -> tuple[str, Any]:
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
    with at(where):
        document = _parse(text)
        check_values(document)
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
        return clip(" ".join(str(err).split()))
    problem = clip("; ".join(part for part in (err.context, err.problem) if part))
    mark = err.problem_mark or err.context_mark
    return f"{problem} (line {mark.line + 1}, column {mark.column + 1})" if mark else problem


def check_values(document: Any) -> None:
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


def clip(text: str, limit: int = _EXCERPT) -> str:
    """`text`, cut short if long: error messages never repeat much of the input."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat()


def parse_time(value: Any) -> float:
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
            f"expected a time from {iso_time(MIN_TIME)} to {iso_time(MAX_TIME)} (the clock needs "
            f"room to run), got {moment.isoformat()}"
        )
    return seconds


def state_string(value: Any) -> str:
    if not isinstance(value, str):
        raise vol.Invalid(f"a state is a string, got {shown(value)}; quote it, e.g. 'on' or '21.5'")
    return value


# Ids of at most 255 characters, Home Assistant's longest entity id.
ID = vol.All(str, vol.Length(min=1, max=255))


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


_CITY_WEATHER = vol.Schema({vol.Required("city"): ID, vol.Required("seed"): int})
_CONSTANT_WEATHER = vol.Schema(
    {
        vol.Required("temperature"): _temperature,
        vol.Required("humidity"): _percent,
        vol.Required("sun_elevation"): vol.All(_finite, vol.Range(min=-90, max=90)),
        vol.Required("cloud_cover"): vol.All(_finite, vol.Range(min=0, max=1)),
    }
)


def weather_keys(value: Any) -> dict[str, Any]:
    """A city's weather ({city, seed}) or constant outdoor conditions, by the keys it has."""
    if isinstance(value, dict) and "city" in value:
        checked: dict[str, Any] = _CITY_WEATHER(value)
    else:
        checked = _CONSTANT_WEATHER(value)
    return checked


ROOMS = {
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


def nullable(validator: Any, *keys: str) -> dict[Any, Any]:
    """Keys that may be missing or null (None)."""
    return {vol.Optional(key, default=None): vol.Any(None, validator) for key in keys}


def list_of(fields: dict[Any, Any], extra: int = vol.ALLOW_EXTRA) -> list[vol.Schema]:
    """A list of mappings with `fields` and, unless `extra` says not, other keys (as registries)."""
    return [vol.Schema(fields, extra=extra)]


STATE_KEYS: dict[Any, Any] = {
    vol.Optional("attributes"): dict,
    vol.Optional("removed_attributes"): [str],
    vol.Optional("hidden"): dict,
    vol.Optional("last_changed"): parse_time,
    vol.Optional("last_updated"): parse_time,
}


def validate(schema: vol.Schema, raw: Any, what: str) -> dict[str, Any]:
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
        name = clip(str(part), _KEY_EXCERPT)
        if isinstance(part, int):
            text += f"[{name}]"
        elif "." in name:
            text += f"[{name!r}]"
        else:
            text += f".{name}" if text else name
    return text


def settle_imported(home: Home, entry: EntityEntry, state: State, *, arguments: bool) -> None:
    """Put an entity imported from a real home as Home Assistant holds it: its domain's
    `shows` where the state was built from the entity's arguments (an inventory), then its
    `holds`; what they read is checked first. One rule for every importer."""
    carrying = domain_of(entry.domain).carrying
    hooks = [hook for hook in (carrying.shows if arguments else None, carrying.holds) if hook]
    if not hooks:
        return
    with at(entry.entity_id):
        check_entity(entry, state)
    draft = EntityDraft.of(entry, state)
    for hook in hooks:
        hook(draft)
    home.states[entry.entity_id] = replace(
        state, state=draft.state, attributes=draft.attributes, hidden=draft.hidden
    )


@contextmanager
def at(where: str) -> Iterator[None]:
    """Prefix the message of a HomeDefinitionError raised inside with `where`."""
    try:
        yield
    except HomeDefinitionError as err:
        raise HomeDefinitionError(f"{where}: {err}") from None


def first_set(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def checked_home(home: Home) -> Home:
    """The home, once every entity holds only what its domain can use (twin.domains.rules)."""
    for entity_id, entry in home.entities.items():
        with at(entity_id):
            check_entity(entry, home.states[entity_id])
    return home


def weather_of(document: Mapping[str, Any]) -> OutdoorSource:
    """The weather a validated home file or snapshot names: ConstantWeather's without one."""
    raw = document.get("weather")
    if raw is None:
        return ConstantWeather()
    if "city" in raw:
        with at("weather"):
            return Weather(raw["city"], raw["seed"])
    return ConstantWeather(Outdoor(**raw))


def weather_document(weather: OutdoorSource) -> dict[str, Any] | None:
    """How a home file writes its weather; None for ConstantWeather's defaults."""
    if isinstance(weather, Weather):
        return {"city": weather.city, "seed": weather.seed}
    if isinstance(weather, ConstantWeather):
        return None if weather == ConstantWeather() else asdict(weather.outdoor)
    raise HomeDefinitionError(
        f"Cannot write weather of type {type(weather).__name__}: a home file keeps a "
        "twin.weather.Weather or a ConstantWeather; give the home one of those"
    )


def set_rooms(home: Home, rooms: Mapping[str, Mapping[str, float]]) -> None:
    """Set the air of the areas a file lists; the others keep RoomClimate's defaults."""
    for area_id, raw in rooms.items():
        if area_id not in home.areas:
            raise HomeDefinitionError(
                f"rooms[{shown(area_id)}]: the home has no area {shown(area_id)}; rooms are keyed "
                "by area id"
            )
        home.rooms[area_id] = RoomClimate(**raw)


def rooms_document(home: Home) -> dict[str, dict[str, float]]:
    """The fields of each area's air that differ from RoomClimate's defaults, by area."""
    default = asdict(RoomClimate())
    rooms = {}
    for area_id, room in sorted(home.rooms.items()):
        changed = {key: value for key, value in asdict(room).items() if value != default[key]}
        if changed:
            rooms[area_id] = changed
    return rooms


def add_areas(home: Home, areas: Sequence[tuple[str, Area]]) -> None:
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
            with at(where):
                home.add_area(area)
            depths[child] = depths.get(area.parent_id or "", 0) + 1
            if depths[child] > MAX_AREA_DEPTH:
                _too_deep(where)


def _too_deep(where: str) -> None:
    raise HomeDefinitionError(f"{where}: areas nest at most {MAX_AREA_DEPTH} deep")


def with_tuples(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes with Home Assistant's tuples restored where JSON made them lists."""
    return {
        key: tuple(value) if key in TUPLE_ATTRIBUTES and isinstance(value, list) else value
        for key, value in attributes.items()
    }

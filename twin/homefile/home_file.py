"""The twin's YAML home files: load_home, dump_home and save_home (twin.homefile has the format)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import voluptuous as vol
import yaml

from ..atomic import write_text
from ..catalog import DeviceType, load_catalog
from ..errors import HomeDefinitionError
from ..home import DEFAULT_START, Home
from ..registry import Area, Device, EntityEntry, Floor
from ..state import State
from ..validation import shown
from .common import (
    ID,
    ROOMS,
    STATE_KEYS,
    Source,
    add_areas,
    at,
    checked_home,
    iso_time,
    list_of,
    nullable,
    parse_time,
    read_source,
    rooms_document,
    set_rooms,
    state_string,
    validate,
    weather_document,
    weather_keys,
    weather_of,
    with_tuples,
)

# YAML's line breaks besides "\n".
_LINE_BREAKS = frozenset("\r\x85\u2028\u2029")


class _Dumper(yaml.SafeDumper):
    """Safe YAML that writes tuples as `!tuple` and never writes anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        """Write shared objects out in full: home files are for reading."""
        return True


def _represent_tuple(dumper: yaml.SafeDumper, data: tuple[Any, ...]) -> yaml.Node:
    return dumper.represent_sequence("!tuple", data, flow_style=True)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    """Strings with line breaks double-quoted: PyYAML's other styles may read back spaces."""
    style = '"' if any(character in _LINE_BREAKS for character in data) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(tuple, _represent_tuple)
_Dumper.add_representer(str, _represent_str)
_HOME_FILE = vol.Schema(
    {
        vol.Optional("name", default="Home"): str,
        vol.Optional("time", default=iso_time(DEFAULT_START)): parse_time,
        vol.Optional("floors", default=list): list_of(
            {
                vol.Required("id"): ID,
                vol.Required("name"): str,
                vol.Optional("level", default=0): int,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("areas", default=list): list_of(
            {
                vol.Required("id"): ID,
                vol.Required("name"): str,
                **nullable(ID, "floor", "parent"),
                vol.Optional("outdoor", default=False): bool,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("devices", default=list): list_of(
            {
                vol.Required("id"): ID,
                vol.Required("name"): str,
                vol.Optional("install", default=True): bool,
                **nullable(ID, "type", "area"),
                vol.Optional("manufacturer"): vol.Any(None, str),
                vol.Optional("model"): vol.Any(None, str),
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("entities", default=list): list_of(
            {
                vol.Required("entity_id"): ID,
                vol.Required("name"): str,
                **nullable(ID, "device", "area"),
                **nullable(str, "device_class", "unit_of_measurement", "entity_category"),
                vol.Optional("supported_features", default=0): int,
                vol.Optional("capabilities", default=dict): dict,
                vol.Required("state"): state_string,
                **STATE_KEYS,
            },
            vol.PREVENT_EXTRA,
        ),
        vol.Optional("states", default=dict): {
            str: {vol.Optional("state"): state_string, **STATE_KEYS}
        },
        vol.Optional("weather"): weather_keys,
        vol.Optional("rooms", default=dict): ROOMS,
    }
)


def load_home(source: Source) -> Home:
    """A home from a home file (a path) or its text (a string with a line break).

    Raises HomeDefinitionError, naming the file and key at fault, for any bad input.
    """
    where, raw = read_source(source)
    with at(where):
        return checked_home(_build(validate(_HOME_FILE, raw, "a home file")))


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
    head = {"name": home.name, "time": iso_time(home.now)}
    body: dict[str, Any] = {
        "floors": [
            {"id": floor.floor_id, "name": floor.name, "level": floor.level}
            for floor in sorted(home.floors.values(), key=lambda floor: floor.floor_id)
        ],
        "areas": [_area_document(area) for _, area in sorted(home.areas.items())],
        "devices": devices,
        "entities": list(free.values()),
    }
    initial = _build(validate(_HOME_FILE, {**head, **body}, "a home file"))
    weather = weather_document(home.weather)
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
    if rooms := rooms_document(home):
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
    home = Home(document["name"], document["time"], weather_of(document))
    for index, raw in enumerate(document["floors"]):
        with at(f"floors[{index}]"):
            home.add_floor(Floor(raw["id"], raw["name"], raw["level"]))
    areas = [
        Area(raw["id"], raw["name"], raw["floor"], raw["parent"], raw["outdoor"])
        for raw in document["areas"]
    ]
    add_areas(home, [(f"areas[{index}]", area) for index, area in enumerate(areas)])
    catalog = load_catalog()
    for index, raw in enumerate(document["devices"]):
        with at(f"devices[{index}]"):
            _add_device(home, raw, catalog)
    for index, raw in enumerate(document["entities"]):
        with at(f"entities[{index}]"):
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
    set_rooms(home, document["rooms"])
    return home


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
        changes["last_changed"] = iso_time(current.last_changed)
    if current.last_updated != initial.last_updated:
        changes["last_updated"] = iso_time(current.last_updated)
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

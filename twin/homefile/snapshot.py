"""Home Assistant snapshots: import_ha_snapshot (which also reads synthetic-home inventories) and
export_ha_snapshot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import voluptuous as vol

from ..domains import DOMAINS, domain_of
from ..errors import HomeDefinitionError
from ..home import DEFAULT_START, Home
from ..registry import Area, Device, EntityEntry, Floor, object_id_words
from ..state import State
from ..validation import shown
from .common import (
    ID,
    ROOMS,
    Source,
    add_areas,
    at,
    check_values,
    checked_home,
    first_set,
    iso_time,
    list_of,
    nullable,
    parse_time,
    read_source,
    rooms_document,
    set_rooms,
    settle_imported,
    state_string,
    validate,
    weather_document,
    weather_keys,
    weather_of,
    with_tuples,
)
from .inventory import from_inventory

_HA_SNAPSHOT = vol.Schema(
    {
        vol.Optional("name", default="Home"): str,
        vol.Optional("time"): parse_time,
        vol.Optional("floors", default=list): list_of(
            {vol.Required("floor_id"): ID, vol.Required("name"): str, **nullable(int, "level")}
        ),
        vol.Optional("areas", default=list): list_of(
            {
                vol.Required("area_id"): ID,
                vol.Required("name"): str,
                **nullable(ID, "floor_id", "parent_id"),
                vol.Optional("outdoor", default=False): bool,
            }
        ),
        vol.Optional("devices", default=list): list_of(
            {
                vol.Required("id"): ID,
                **nullable(str, "name", "name_by_user", "manufacturer", "model"),
                **nullable(ID, "area_id", "device_type"),
            }
        ),
        vol.Optional("entities", default=list): list_of(
            {
                vol.Required("entity_id"): ID,
                **nullable(ID, "device_id", "area_id"),
                **nullable(str, "name", "original_name", "device_class", "original_device_class"),
                **nullable(str, "unit_of_measurement", "entity_category"),
                **nullable(int, "supported_features"),
                **nullable(dict, "capabilities"),
            }
        ),
        vol.Required("states"): list_of(
            {
                vol.Required("entity_id"): ID,
                vol.Required("state"): state_string,
                vol.Optional("attributes", default=dict): dict,
                vol.Optional("hidden", default=dict): dict,
                vol.Optional("last_changed"): parse_time,
                vol.Optional("last_updated"): parse_time,
            }
        ),
        vol.Optional("weather"): weather_keys,
        vol.Optional("rooms", default=dict): ROOMS,
    },
    extra=vol.ALLOW_EXTRA,
)


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
        with at(where):
            check_values(raw)
    else:
        where, raw = read_source(data)
    with at(where):
        if isinstance(raw, Mapping) and "states" in raw:
            snapshot = validate(_HA_SNAPSHOT, dict(raw), "a snapshot")
            # export_ha_snapshot always writes the rooms: without them it is a real home's.
            home, skipped = _from_snapshot(snapshot, keep_unmodelled, real="rooms" not in raw)
        else:
            home, skipped = from_inventory(raw)
        return checked_home(home), skipped


def export_ha_snapshot(home: Home) -> dict[str, Any]:
    """The home as a Home Assistant snapshot of JSON types, which import_ha_snapshot reads back."""
    return {
        "name": home.name,
        "time": iso_time(home.now),
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
        **({"weather": weather} if (weather := weather_document(home.weather)) else {}),
        "rooms": rooms_document(home),
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


def _by_id(items: Sequence[Mapping[str, Any]], key: str, where: str) -> dict[str, Any]:
    """Items by their id; an id listed twice is an error."""
    found: dict[str, Any] = {}
    for index, item in enumerate(items):
        if item[key] in found:
            raise HomeDefinitionError(f"{where}[{index}]: {key} {shown(item[key])} is listed twice")
        found[item[key]] = item
    return found


def _from_snapshot(
    snapshot: Mapping[str, Any], keep_unmodelled: bool, *, real: bool
) -> tuple[Home, list[str]]:
    states = snapshot["states"]
    registry = _by_id(snapshot["entities"], "entity_id", "entities")
    listed = _by_id(states, "entity_id", "states")
    newest = max(
        (state["last_updated"] for state in states if "last_updated" in state), default=None
    )
    home = Home(
        snapshot["name"],
        first_set(snapshot.get("time"), newest, DEFAULT_START),
        weather_of(snapshot),
    )
    for index, raw in enumerate(snapshot["floors"]):
        with at(f"floors[{index}]"):
            home.add_floor(Floor(raw["floor_id"], raw["name"], raw["level"] or 0))
    areas = [
        (
            f"areas[{index}]",
            Area(raw["area_id"], raw["name"], raw["floor_id"], raw["parent_id"], raw["outdoor"]),
        )
        for index, raw in enumerate(snapshot["areas"])
    ]
    add_areas(home, areas)
    for index, raw in enumerate(snapshot["devices"]):
        name = first_set(raw["name_by_user"], raw["name"], raw["model"], raw["id"])
        with at(f"devices[{index}]"):
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
        with at(f"states[{index}] ({entity_id})"):
            _add_ha_entity(home, state, entry, keep_unmodelled, real)
    set_rooms(home, snapshot["rooms"])
    return home, sorted(skipped)


def _add_ha_entity(
    home: Home, state: Mapping[str, Any], registry: Mapping[str, Any], any_domain: bool, real: bool
) -> None:
    """Add one entity from its state object and entity registry entry (which may be empty);
    one of a `real` home keeps what the twin would make up (Carrying.holds)."""
    entity_id = state["entity_id"]
    attributes = with_tuples(state["attributes"])
    name = first_set(
        attributes.pop("friendly_name", None), registry.get("name"), registry.get("original_name")
    )
    device_class = first_set(
        attributes.pop("device_class", None),
        registry.get("device_class"),
        registry.get("original_device_class"),
    )
    unit = first_set(
        attributes.pop("unit_of_measurement", None), registry.get("unit_of_measurement")
    )
    features = first_set(
        attributes.pop("supported_features", None), registry.get("supported_features")
    )
    # The registry holds Home Assistant's capability_attributes; the twin's other static
    # attributes (a lock's code_format, a fan's percentage_step) only show in the state.
    static = domain_of(entity_id.partition(".")[0]).carrying.capabilities
    capabilities = {
        **{key: value for key, value in attributes.items() if key in static},
        **(registry.get("capabilities") or {}),
    }
    entry = EntityEntry(
        entity_id=entity_id,
        name=name if name is not None else object_id_words(entity_id),
        device_id=registry.get("device_id"),
        area_id=registry.get("area_id"),
        device_class=device_class,
        unit_of_measurement=unit,
        supported_features=features or 0,
        entity_category=registry.get("entity_category"),
        capabilities=capabilities,
    )
    added = home.add_entity(entry, state["state"], attributes, any_domain=any_domain)
    imported = replace(
        added,
        last_changed=state.get("last_changed", home.now),
        last_updated=state.get("last_updated", home.now),
        hidden=with_tuples(state["hidden"]),
    )
    home.states[entity_id] = imported
    if real and entry.domain in DOMAINS:
        settle_imported(home, entry, imported, arguments=False)

"""synthetic-home inventories: their areas, devices and entities, made Home Assistant's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import voluptuous as vol

from ..catalog import slugify
from ..domains import DOMAINS, domain_of
from ..domains.descriptor import Carrying
from ..errors import HomeDefinitionError
from ..home import Home
from ..registry import Area, Device, EntityEntry, Floor
from .common import (
    ID,
    add_areas,
    at,
    clip,
    first_set,
    list_of,
    nullable,
    settle_imported,
    validate,
)

# A synthetic-home device's info: what the twin reads of it.
_DEVICE_INFO = vol.Schema(nullable(str, "manufacturer", "model"), extra=vol.ALLOW_EXTRA)
_INVENTORY = vol.Schema(
    {
        vol.Optional("areas", default=list): list_of(
            {vol.Required("name"): str, **nullable(ID, "id"), **nullable(str, "floor")}
        ),
        vol.Optional("devices", default=list): list_of(
            {
                vol.Required("name"): str,
                **nullable(ID, "id", "area"),
                **nullable(_DEVICE_INFO, "info"),
            }
        ),
        vol.Optional("entities", default=list): list_of(
            {
                vol.Required("id"): ID,
                **nullable(str, "name"),
                **nullable(ID, "area", "device"),
                **nullable(vol.Any(str, bool, int, float), "state"),
                **nullable(dict, "attributes"),
            }
        ),
    },
    extra=vol.ALLOW_EXTRA,
)


def from_inventory(data: Any) -> tuple[Home, list[str]]:
    """A home from a synthetic-home inventory, once checked, and the sorted ids of the entities
    it skipped; it has no floor levels, so all floors get 0."""
    inventory = validate(_INVENTORY, data, "a snapshot or an inventory")
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
    add_areas(home, areas)
    for index, raw in enumerate(inventory["devices"]):
        info = raw["info"] or {}
        device = Device(
            raw["id"] or slugify(raw["name"]),
            raw["name"],
            info.get("manufacturer"),
            info.get("model"),
            raw["area"],
        )
        with at(f"devices[{index}]"):
            home.add_device(device)
    skipped = []
    for index, raw in enumerate(inventory["entities"]):
        if raw["id"].partition(".")[0] not in DOMAINS:
            skipped.append(raw["id"])
            continue
        with at(f"entities[{index}]"):
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
                f"attributes.supported_features: {clip(err.args[0])}"
            ) from None
    unit = first_set(
        attributes.pop("native_unit_of_measurement", None),
        attributes.pop("unit_of_measurement", None),
    )
    carrying = domain_of(domain).carrying
    for key in carrying.enums & attributes.keys():
        attributes[key] = _enum_value(attributes[key])
    given = carrying.arguments(attributes) if carrying.arguments is not None else None
    state = first_set(raw["state"], attributes.pop("native_value", None), given)
    if carrying.state_attribute is not None:
        state = first_set(state, attributes.pop(carrying.state_attribute, None))
    capabilities = {key: value for key, value in attributes.items() if key in carrying.capabilities}
    device = home.devices.get(raw["device"] or "")
    entry = EntityEntry(
        entity_id=entity_id,
        name=first_set(raw["name"], device and device.name, entity_id.partition(".")[2]),
        device_id=raw["device"],
        area_id=None if device and device.area_id == raw["area"] else raw["area"],
        device_class=device_class,
        unit_of_measurement=None if carrying.temperature_unit else unit,
        supported_features=features,
        capabilities=capabilities,
    )
    added = home.add_entity(entry, _inventory_state(carrying, state, attributes), attributes)
    settle_imported(home, entry, added, arguments=True)


def _enum_value(value: Any) -> Any:
    """`sensor.SensorDeviceClass.TEMPERATURE` -> `temperature`; other values as they are."""
    if isinstance(value, str) and "." in value:
        return value.rpartition(".")[2].lower()
    return value


def _inventory_state(carrying: Carrying, value: Any, attributes: Mapping[str, Any]) -> str:
    """Home Assistant's state for an inventory state, as synthetic-home's entities show it."""
    if value is None:
        if carrying.on_attribute is not None:
            return "on" if attributes.get(carrying.on_attribute) else "off"
        return "unknown"
    if isinstance(value, bool):
        on, off = carrying.boolean_states
        return on if value else off
    return str(value)

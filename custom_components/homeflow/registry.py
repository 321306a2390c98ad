"""The home's floors, areas and devices in Home Assistant's registries.

A virtual home's areas never merge into areas the user already has: a name that is taken gets the
home's name in front ("Beach House Kitchen"). What setup created is remembered with the home, so
that removing the entry removes the floors and areas nothing else uses.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, count

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers import floor_registry as fr

from twin.home import Home

from .const import DOMAIN

# {"floors": {twin floor id: HA floor id}, "areas": {twin area id: HA area id}}
type RegistryIds = dict[str, dict[str, str]]


def device_identifier(entry: ConfigEntry, device_id: str) -> tuple[str, str]:
    """The device registry identifier of a twin device: unique across homes."""
    return (DOMAIN, f"{entry.entry_id}_{device_id}")


def entity_unique_id(entry: ConfigEntry, entity_id: str) -> str:
    """The entity registry unique id of a twin entity: unique across homes."""
    return f"{entry.entry_id}_{entity_id}"


def register_home(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, made: RegistryIds | None = None
) -> RegistryIds:
    """Write floors, areas and devices; returns the Home Assistant ids of the twin's floors and
    areas. With the ids an earlier setup `made`, what still exists is kept, not made again.

    A device, or an entity with an area of its own, goes to its area only when it is new or the
    area was made again (the user deleted it): as with Home Assistant's suggested area, where it
    is later is the user's choice.
    """
    floors = fr.async_get(hass)
    areas = ar.async_get(hass)
    made = made or {"floors": {}, "areas": {}}
    ids: RegistryIds = {"floors": {}, "areas": {}}
    fresh: set[str] = set()  # the areas made now: a deleted one made again may get its old id
    for floor in home.floors.values():
        kept = made["floors"].get(floor.floor_id)
        if kept is None or floors.async_get_floor(kept) is None:
            name = _free_name(floor.name, entry.title, floors.async_get_floor_by_name)
            kept = floors.async_create(name, level=floor.level).floor_id
        ids["floors"][floor.floor_id] = kept
    for area in home.areas.values():
        kept = made["areas"].get(area.area_id)
        if kept is None or areas.async_get_area(kept) is None:
            name = _free_name(area.name, entry.title, areas.async_get_area_by_name)
            floor_id = ids["floors"].get(area.floor_id) if area.floor_id else None
            kept = areas.async_create(name, floor_id=floor_id).id
            fresh.add(kept)
        ids["areas"][area.area_id] = kept
    _place_devices(hass, entry, home, ids, fresh)
    _place_entities(hass, entry, home, ids, fresh)
    return ids


def _place_devices(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, ids: RegistryIds, fresh: set[str]
) -> None:
    """Write the devices; put each new one, and each whose area is `fresh`, in its area."""
    devices = dr.async_get(hass)
    for device in home.devices.values():
        identifier = device_identifier(entry, device.device_id)
        new = devices.async_get_device_by_identifier(identifier, entry.entry_id) is None
        entry_device = devices.async_get_or_create(
            config_entry_id=entry.entry_id,
            identifiers={identifier},
            name=device.name,
            manufacturer=device.manufacturer,
            model=device.model,
        )
        area_id = ids["areas"].get(device.area_id) if device.area_id else None
        if new or area_id in fresh:
            devices.async_update_device(entry_device.id, area_id=area_id)


def _place_entities(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, ids: RegistryIds, fresh: set[str]
) -> None:
    """Put the registered entities whose own area is `fresh` back in it; a new entity places
    itself when it is added."""
    entities = er.async_get(hass)
    for twin in home.entities.values():
        area_id = ids["areas"][twin.area_id] if twin.area_id else None
        unique_id = entity_unique_id(entry, twin.entity_id)
        if area_id in fresh and (
            entity_id := entities.async_get_entity_id(twin.domain, DOMAIN, unique_id)
        ):
            entities.async_update_entity(entity_id, area_id=area_id)


def unregister_home(hass: HomeAssistant, entry_id: str, made: RegistryIds) -> None:
    """Delete the areas and floors this home made, unless another entry's device or entity (or
    one of the user's own) still uses them."""
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    devices = dr.async_get(hass)
    entities = er.async_get(hass)
    for area_id in made["areas"].values():
        in_use = any(
            device.config_entry_id != entry_id
            for device in dr.async_entries_for_area(devices, area_id)
        ) or any(
            entity.config_entry_id != entry_id
            for entity in er.async_entries_for_area(entities, area_id)
        )
        if areas.async_get_area(area_id) and not in_use:
            areas.async_delete(area_id)
    for floor_id in made["floors"].values():
        if floors.async_get_floor(floor_id) and not ar.async_entries_for_floor(areas, floor_id):
            floors.async_delete(floor_id)


def _free_name(name: str, home_name: str, existing: Callable[[str], object | None]) -> str:
    """`name`, else the home's name and `name`, else that with the first free number: a registry
    refuses a name it has."""
    prefixed = f"{home_name} {name}"
    names = chain((name, prefixed), (f"{prefixed} {n}" for n in count(2)))
    return next(n for n in names if existing(n) is None)

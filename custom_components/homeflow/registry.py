"""The home's floors, areas and devices in Home Assistant's registries.

A room or floor the config flow chose goes into the user's own area or floor of the same name (as
the registries match names). Any other is made, with icons by room type and floor level; a name
that is taken gets the home's name in front ("Beach House Kitchen"). What setup made is remembered
with the home, apart from the user's own it used, so that removing the entry removes only the
floors and areas it made that nothing else uses.
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
from twin.registry import Area, Device

from .const import (
    AREA_ICONS,
    CONF_AREAS,
    CONF_FLOORS,
    DEFAULT_AREA_ICON,
    DEFAULT_FLOOR_ICON,
    DOMAIN,
    FLOOR_ICONS,
)

# {"floors": {twin floor id: HA floor id}, "areas": {twin area id: HA area id}} of what HomeFlow
# made, "user_floors", "user_areas" likewise of the user's own it uses, and "floored": {HA area id:
# HA floor id} of the user's areas it put on a floor.
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
    made = made or {}
    ids: RegistryIds = {"floors": {}, "areas": {}, "user_floors": {}, "user_areas": {}}
    ids["floored"] = dict(made.get("floored", {}))
    _register_floors(hass, entry, home, made, ids)
    fresh = _register_areas(hass, entry, home, made, ids)
    _place_devices(hass, entry, home, ids, fresh)
    _place_entities(hass, entry, home, ids, fresh)
    return ids


def _register_floors(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, made: RegistryIds, ids: RegistryIds
) -> None:
    """Write the twin's floors into `ids`: kept, the user's chosen one, or made."""
    floors = fr.async_get(hass)
    reuse = set(entry.data.get(CONF_FLOORS, ()))
    for floor in home.floors.values():
        if (kind := _kept(made, "floors", floor.floor_id, floors.async_get_floor)) is None:
            user = floors.async_get_floor_by_name(floor.name)
            if floor.floor_id in reuse and user is not None:
                kind = ("user_floors", user.floor_id)
            else:
                name = _free_name(floor.name, entry.title, floors.async_get_floor_by_name)
                icon = FLOOR_ICONS.get(floor.level, DEFAULT_FLOOR_ICON)
                kind = ("floors", floors.async_create(name, icon=icon, level=floor.level).floor_id)
        ids[kind[0]][floor.floor_id] = kind[1]


def _register_areas(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, made: RegistryIds, ids: RegistryIds
) -> set[str]:
    """Write the twin's areas into `ids`: kept, the user's chosen one, or made; returns the ids
    of those made now (a deleted one made again may get its old id)."""
    areas = ar.async_get(hass)
    floor_ids = ids["floors"] | ids["user_floors"]
    reuse = set(entry.data.get(CONF_AREAS, ()))
    fresh: set[str] = set()
    for area in home.areas.values():
        floor_id = floor_ids.get(area.floor_id) if area.floor_id else None
        if (kind := _kept(made, "areas", area.area_id, areas.async_get_area)) is None:
            user = areas.async_get_area_by_name(area.name)
            if area.area_id in reuse and user is not None:
                kind = ("user_areas", user.id)
                _put_on_floor(hass, user, floor_id, ids)
            else:
                name = _free_name(area.name, entry.title, areas.async_get_area_by_name)
                created = areas.async_create(name, floor_id=floor_id, icon=area_icon(area))
                kind = ("areas", created.id)
                fresh.add(created.id)
        ids[kind[0]][area.area_id] = kind[1]
    return fresh


def _put_on_floor(
    hass: HomeAssistant, area: ar.AreaEntry, floor_id: str | None, ids: RegistryIds
) -> None:
    """Put a user's area that is on no floor on the twin room's, remembered in `ids` so that
    removal takes it off again: floor targets then reach the same rooms as in the twin."""
    if area.floor_id is None and floor_id is not None:
        ar.async_get(hass).async_update(area.id, floor_id=floor_id)
        ids["floored"][area.id] = floor_id


def area_ids(ids: RegistryIds) -> dict[str, str]:
    """The Home Assistant area of each twin area: one HomeFlow made or the user's own."""
    return ids.get("areas", {}) | ids.get("user_areas", {})


def area_icon(area: Area) -> str:
    """The icon of a room HomeFlow makes: by the first room type its id names."""
    return next((icon for word, icon in AREA_ICONS if word in area.area_id), DEFAULT_AREA_ICON)


def _kept(
    made: RegistryIds, kind: str, twin_id: str, exists: Callable[[str], object | None]
) -> tuple[str, str] | None:
    """(kind or "user_" kind, Home Assistant id) of what an earlier setup used, if it exists."""
    for key in (kind, f"user_{kind}"):
        if (kept := made.get(key, {}).get(twin_id)) is not None and exists(kept) is not None:
            return key, kept
    return None


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
            name=_device_name(hass, home, device, ids),
            manufacturer=device.manufacturer,
            model=device.model,
        )
        area_id = area_ids(ids).get(device.area_id) if device.area_id else None
        if new or area_id in fresh:
            devices.async_update_device(entry_device.id, area_id=area_id)


def _place_entities(
    hass: HomeAssistant, entry: ConfigEntry, home: Home, ids: RegistryIds, fresh: set[str]
) -> None:
    """Put the registered entities whose own area is `fresh` back in it; a new entity places
    itself when it is added."""
    entities = er.async_get(hass)
    for twin in home.entities.values():
        area_id = area_ids(ids)[twin.area_id] if twin.area_id else None
        unique_id = entity_unique_id(entry, twin.entity_id)
        if area_id in fresh and (
            entity_id := entities.async_get_entity_id(twin.domain, DOMAIN, unique_id)
        ):
            entities.async_update_entity(entity_id, area_id=area_id)


def _device_name(hass: HomeAssistant, home: Home, device: Device, ids: RegistryIds) -> str:
    """The twin device's name, led by its Home Assistant area's name where the twin's led by the
    twin area's: dashboards strip an area's name from the names that start with it."""
    if device.area_id is None:
        return device.name
    twin_area = home.areas[device.area_id].name
    area = ar.async_get(hass).async_get_area(area_ids(ids)[device.area_id])
    if area is None or not device.name.casefold().startswith(f"{twin_area.casefold()} "):
        return device.name
    return f"{area.name}{device.name[len(twin_area) :]}"


def unregister_home(hass: HomeAssistant, entry_id: str, made: RegistryIds) -> None:
    """Delete the areas and floors this home made, unless another entry's device or entity (or
    one of the user's own) still uses them; take the user's areas off the floors it put them on."""
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    devices = dr.async_get(hass)
    entities = er.async_get(hass)
    for area_id in made.get("areas", {}).values():
        in_use = any(
            device.config_entry_id != entry_id
            for device in dr.async_entries_for_area(devices, area_id)
        ) or any(
            entity.config_entry_id != entry_id
            for entity in er.async_entries_for_area(entities, area_id)
        )
        if areas.async_get_area(area_id) and not in_use:
            areas.async_delete(area_id)
    for area_id, floor_id in made.get("floored", {}).items():
        if (area := areas.async_get_area(area_id)) is not None and area.floor_id == floor_id:
            areas.async_update(area_id, floor_id=None)
    for floor_id in made.get("floors", {}).values():
        if floors.async_get_floor(floor_id) and not ar.async_entries_for_floor(areas, floor_id):
            floors.async_delete(floor_id)


def _free_name(name: str, home_name: str, existing: Callable[[str], object | None]) -> str:
    """`name`, else the home's name and `name`, else that with the first free number: a registry
    refuses a name it has."""
    prefixed = f"{home_name} {name}"
    names = chain((name, prefixed), (f"{prefixed} {n}" for n in count(2)))
    return next(n for n in names if existing(n) is None)


def same_named(hass: HomeAssistant, home: Home) -> tuple[dict[str, bool], dict[str, bool]]:
    """The twin's areas and floors whose names the user's own have (as the registries match
    names), each with whether the user's holds nothing yet (no device or entity in it)."""
    areas = ar.async_get(hass)
    floors = fr.async_get(hass)
    found_areas: dict[str, bool] = {}
    for area in home.areas.values():
        if (user_area := areas.async_get_area_by_name(area.name)) is not None:
            found_areas[area.area_id] = _empty(hass, user_area.id)
    found_floors: dict[str, bool] = {}
    for floor in home.floors.values():
        if (user_floor := floors.async_get_floor_by_name(floor.name)) is not None:
            on_it = ar.async_entries_for_floor(areas, user_floor.floor_id)
            found_floors[floor.floor_id] = all(_empty(hass, a.id) for a in on_it)
    return found_areas, found_floors


def _empty(hass: HomeAssistant, area_id: str) -> bool:
    """Whether no device or entity is in an area."""
    return not dr.async_entries_for_area(dr.async_get(hass), area_id) and not (
        er.async_entries_for_area(er.async_get(hass), area_id)
    )

"""Resolving a service call's target to entities, as Home Assistant's target helper does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import TargetNotFoundError
from .validation import (
    ATTR_AREA_ID,
    ATTR_DEVICE_ID,
    ATTR_ENTITY_ID,
    ATTR_FLOOR_ID,
    ATTR_LABEL_ID,
    ENTITY_MATCH_ALL,
    ENTITY_MATCH_NONE,
    ensure_list,
)

if TYPE_CHECKING:
    from .home import Home


@dataclass(frozen=True, slots=True)
class Selection:
    """The entities a target names: `explicit` ones by entity id, `indirect` ones through an area,
    floor or device. `everything` is `entity_id: all`."""

    explicit: tuple[str, ...] = ()
    indirect: tuple[str, ...] = ()
    everything: bool = False


def select(home: Home, target: dict[str, Any], strict: bool = True) -> Selection:
    """The entities that a validated target names.

    Devices, areas and floors reach their entities as in Home Assistant: an area holds the entities
    placed in it and those of its devices that name no area of their own; config and diagnostic
    entities are only reached by id. Unknown device, area and floor ids, and labels, are errors;
    with `strict=False` they are skipped, as Home Assistant skips them (it only logs them).
    """
    entity_ids = target.get(ATTR_ENTITY_ID, ENTITY_MATCH_NONE)
    if entity_ids == ENTITY_MATCH_ALL:
        return Selection(everything=True)
    explicit = () if entity_ids == ENTITY_MATCH_NONE else tuple(dict.fromkeys(entity_ids))

    if strict and target.get(ATTR_LABEL_ID, ENTITY_MATCH_NONE) not in (ENTITY_MATCH_NONE, []):
        raise TargetNotFoundError(
            "Labels are not modelled by the twin; target entities, devices, areas or floors instead"
        )
    device_ids = set(_ids(home.devices, target, ATTR_DEVICE_ID, "device", strict))
    area_ids = set(_ids(home.areas, target, ATTR_AREA_ID, "area", strict))
    for floor_id in _ids(home.floors, target, ATTR_FLOOR_ID, "floor", strict):
        area_ids.update(a.area_id for a in home.areas.values() if a.floor_id == floor_id)
    if not (device_ids or area_ids):
        return Selection(explicit)

    indirect = []
    for entry in home.entities.values():
        if entry.entity_category is not None or entry.entity_id in explicit:
            continue
        if entry.device_id in device_ids or entry.area_id in area_ids:
            indirect.append(entry.entity_id)
        elif entry.area_id is None and entry.device_id is not None:
            device = home.devices[entry.device_id]
            if device.area_id in area_ids:
                indirect.append(entry.entity_id)
    return Selection(explicit, tuple(sorted(indirect)))


def _ids(
    known: dict[str, Any], target: dict[str, Any], key: str, kind: str, strict: bool
) -> list[str]:
    ids = target.get(key, ENTITY_MATCH_NONE)
    if ids is None or ids == ENTITY_MATCH_NONE:
        return []
    if not strict:
        # Raw ids too (homeassistant.turn_on's), as Home Assistant's TargetSelection reads them.
        return [item for item in ensure_list(ids) if isinstance(item, str) and item in known]
    for item in ids:
        if item not in known:
            choices = ", ".join(sorted(known)) or "none"
            raise TargetNotFoundError(f"No {kind} with id {item!r}; the home's {kind}s: {choices}")
    return list(ids)

"""Resolving a service call's target to entities, as Home Assistant's target helper does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import EntityNotFoundError, TargetNotFoundError
from .validation import (
    ATTR_AREA_ID,
    ATTR_DEVICE_ID,
    ATTR_ENTITY_ID,
    ATTR_FLOOR_ID,
    ATTR_LABEL_ID,
    ENTITY_MATCH_ALL,
    ENTITY_MATCH_NONE,
    TARGET_KEYS,
    TARGET_SCHEMA,
    ensure_list,
    validated,
)

if TYPE_CHECKING:
    from .home import Home


@dataclass(slots=True)
class Selection:
    """The entities a target names: `explicit` ones by entity id, `indirect` ones through an area,
    floor or device. `everything` is `entity_id: all`; `named` is False for a call that names no
    target at all, which the home refuses when it plans the call."""

    explicit: tuple[str, ...] = ()
    indirect: tuple[str, ...] = ()
    everything: bool = False
    named: bool = True

    def entity_ids(self, home: Home) -> tuple[str, ...]:
        """Every entity the target reaches, of any domain."""
        if self.everything:
            return tuple(home.entities)
        return self.explicit + self.indirect


def resolve(
    home: Home, fields: Mapping[str, Any], domain: str, service: str, strict: bool = True
) -> Selection:
    """The entities that the target keys among the `fields` of a call of `domain.service` name.

    Strict, the target must be valid and every id in it known (an entity's, device's, area's or
    floor's; labels are not modelled); it names nothing when every key is empty. Lenient, unknown
    ids and labels are skipped, as Home Assistant skips them; it names nothing without a key.
    """
    target = {key: fields[key] for key in TARGET_KEYS if key in fields}
    if strict and (known := _known_entity_ids(home, target)):
        return Selection(known)
    if not target:
        return Selection(named=False)
    target = validated(TARGET_SCHEMA, target, domain, service)
    if strict and all(ids in (ENTITY_MATCH_NONE, []) for ids in target.values()):
        return Selection(named=False)
    selection = select(home, target, strict)
    if strict:
        for entity_id in selection.explicit:
            if entity_id not in home.entities:
                raise entity_not_found(entity_id)
    return selection


def select(home: Home, target: Mapping[str, Any], strict: bool = True) -> Selection:
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


def entity_not_found(entity_id: str) -> EntityNotFoundError:
    """The error for an entity id the home lacks, saying how to find the right one."""
    return EntityNotFoundError(
        f"Entity {entity_id} not found; list the home's entities to find its id"
    )


def _known_entity_ids(home: Home, target: dict[str, Any]) -> tuple[str, ...]:
    """The common case, decided without the schema: a target of existing entity ids only.

    Existing ids are valid, lower-case and comma-free, so the schema would return them as given.
    """
    if len(target) != 1 or ATTR_ENTITY_ID not in target:
        return ()
    ids = target[ATTR_ENTITY_ID]
    if isinstance(ids, str):
        return (ids,) if ids in home.entities else ()
    if (
        isinstance(ids, list)
        and ids
        and all(isinstance(item, str) and item in home.entities for item in ids)
    ):
        return tuple(dict.fromkeys(ids))
    return ()


def _ids(
    known: Mapping[str, Any], target: Mapping[str, Any], key: str, kind: str, strict: bool
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

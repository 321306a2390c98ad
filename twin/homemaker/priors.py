"""HomeMaker's priors, read from homemaker.yaml: the kinds of home and of room, the devices each
kind of room tends to have, the household's names and its daily routine.

The file is data so that the variety of homes can grow without code; `read_priors` checks it
against the device catalog so that a typo fails at once, naming the entry at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import yaml

from ..catalog import load_catalog
from ..errors import HomeDefinitionError
from .household import Routine


@dataclass(frozen=True, slots=True)
class Slot:
    """A device that a kind of room may have (see homemaker.yaml)."""

    label: str | None
    p: float
    types: tuple[str, ...]
    weights: tuple[float, ...]
    max: int = 1
    needs: str | None = None
    once: str | None = None


@dataclass(frozen=True, slots=True)
class RoomKind:
    """A kind of room: its default name, whether it is outdoors, and its device slots."""

    kind: str
    name: str
    outdoor: bool
    slots: tuple[Slot, ...]


@dataclass(frozen=True, slots=True)
class HomeType:
    """A kind of home and the bounds of its device count and household."""

    type_id: str
    label: str
    devices: tuple[int, int]
    adults: tuple[int, int]
    children: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Priors:
    """Everything HomeMaker draws from, as read from homemaker.yaml."""

    home_types: Mapping[str, HomeType]
    labels: Mapping[str, str]
    rooms: Mapping[str, RoomKind]
    names: Mapping[str, tuple[str, ...]]
    routine: Routine


def read_priors() -> Priors:
    """The priors in homemaker.yaml, checked against the device catalog."""
    raw = yaml.safe_load(
        files("twin.homemaker").joinpath("homemaker.yaml").read_text(encoding="utf-8")
    )
    home_types = {
        type_id: _read_home_type(type_id, spec) for type_id, spec in raw["home_types"].items()
    }
    labels = {str(type_id): str(label) for type_id, label in raw["labels"].items()}
    rooms = {kind: _read_room_kind(kind, spec, labels) for kind, spec in raw["rooms"].items()}
    unknown = sorted(set(labels) - set(load_catalog()))
    if unknown:
        raise HomeDefinitionError(
            f"homemaker.yaml names device types not in the catalog: {unknown}"
        )
    names = {key: tuple(map(str, value)) for key, value in raw["names"].items()}
    routine = raw["routine"]
    return Priors(
        home_types,
        labels,
        rooms,
        names,
        Routine(routine["at_home"], routine["awake"], routine["tv_on"]),
    )


def _read_home_type(type_id: str, spec: dict[str, Any]) -> HomeType:
    """A home type; its device range must hold at least two counts for sizes to differ."""
    home_type = HomeType(
        type_id,
        str(spec["label"]),
        _bounds(spec["devices"]),
        _bounds(spec["adults"]),
        _bounds(spec["children"]),
    )
    if home_type.devices[0] >= home_type.devices[1] or home_type.devices[0] < 1:
        raise HomeDefinitionError(
            f"homemaker.yaml: home type {type_id!r} needs devices [low, high] with 1 <= low < high"
        )
    return home_type


def _bounds(value: list[int]) -> tuple[int, int]:
    """A [low, high] pair from YAML, as ints."""
    low, high = value
    return int(low), int(high)


def _read_room_kind(kind: str, spec: dict[str, Any], labels: Mapping[str, str]) -> RoomKind:
    """A room kind whose every slot has a probability, a known scope and labelled types."""
    slots = []
    for item in spec["devices"]:
        types = tuple(item["types"])
        missing = [t for t in types if t not in labels]
        if missing or not 0 < item["p"] <= 1 or item.get("once") not in (None, "home", "floor"):
            raise HomeDefinitionError(
                f"homemaker.yaml: room {kind!r} has a bad slot {item}: p must be in (0, 1], "
                f"once home or floor, and every type needs a label (missing: {missing})"
            )
        slots.append(
            Slot(
                item.get("label"),
                float(item["p"]),
                types,
                tuple(float(w) for w in item["types"].values()),
                int(item.get("max", 1)),
                item.get("needs"),
                item.get("once"),
            )
        )
    return RoomKind(kind, str(spec["name"]), bool(spec.get("outdoor", False)), tuple(slots))

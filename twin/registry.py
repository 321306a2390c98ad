"""The home's registries, as Home Assistant keeps them: floors, areas, devices and entities."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Floor:
    """A storey; `level` orders floors (0 is the ground floor)."""

    floor_id: str
    name: str
    level: int = 0


@dataclass(frozen=True, slots=True)
class Area:
    """A room. `parent_id` nests rooms (an ensuite inside a bedroom); Home Assistant has no such
    link, so targeting an area never includes its children, as in Home Assistant. `outdoor` marks
    a garden, balcony or terrace, whose air is the weather's (twin only: Home Assistant has no
    such field either)."""

    area_id: str
    name: str
    floor_id: str | None = None
    parent_id: str | None = None
    outdoor: bool = False


@dataclass(frozen=True, slots=True)
class Device:
    """A physical device; its entities are in its area unless they name their own."""

    device_id: str
    name: str
    manufacturer: str | None = None
    model: str | None = None
    area_id: str | None = None
    device_type: str | None = None


@dataclass(frozen=True, slots=True)
class EntityEntry:
    """An entity registry entry: what does not change while the home runs.

    `capabilities` are the static attributes the entity shows in its state (`min_temp`,
    `hvac_modes`, `supported_color_modes`...); the domain's services read their limits from them.
    """

    entity_id: str
    name: str
    device_id: str | None = None
    area_id: str | None = None
    device_class: str | None = None
    unit_of_measurement: str | None = None
    supported_features: int = 0
    entity_category: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)

    @property
    def domain(self) -> str:
        """The entity's domain, e.g. `light`."""
        return self.entity_id.partition(".")[0]


def object_id_words(entity_id: str) -> str:
    """The name of an entity that has none: its object id's words (`light.den_lamp`: "den lamp")."""
    return entity_id.partition(".")[2].replace("_", " ")

"""The device catalog: device types as data (YAML in `twin/device_types/`), behaviour in `domains/`.

A device type lists the entities a device of that type carries, each with its Home Assistant domain,
device class, unit, supported features (by name), capabilities (static attributes such as
`min_temp` or `supported_color_modes`) and initial state; its physics parameters say what its
devices do to a room's air beyond what their domains do. See `twin/device_types/README.md`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Literal

import yaml
from slugify import slugify as python_slugify

from .domains import DOMAINS
from .errors import HomeDefinitionError
from .registry import Device, EntityEntry

if TYPE_CHECKING:
    from .home import Home

# What a device does for the room physics beyond its domain: a whole-home thermostat (central
# heating or cooling), a room valve (a radiator thermostat in the central heating's place), an
# air purifier or an exhaust fan.
PhysicsRole = Literal["whole_home", "room_valve", "purifier", "exhaust"]
# The domain of the entity that each physics number, and each role, acts through.
_NUMBER_DOMAINS = {"lumens": "light", "capacity": "climate"}
_ROLE_DOMAINS: dict[PhysicsRole, str] = {
    "whole_home": "climate",
    "room_valve": "climate",
    "purifier": "fan",
    "exhaust": "fan",
}


@dataclass(frozen=True, slots=True)
class EntitySpec:
    """One entity of a device type."""

    domain: str
    key: str | None = None
    name: str | None = None
    device_class: str | None = None
    unit: str | None = None
    features: tuple[str, ...] = ()
    entity_category: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    state: str = "unknown"
    attributes: dict[str, Any] = field(default_factory=dict)

    def object_id(self, device_slug: str) -> str:
        """The entity's object id on a device whose name slugifies to `device_slug`."""
        return f"{device_slug}_{self.key}" if self.key else device_slug

    def friendly_name(self, device_name: str) -> str:
        """Home Assistant's friendly name: the device name, then the entity's own name if any."""
        return f"{device_name} {self.name}" if self.name else device_name


@dataclass(frozen=True, slots=True)
class DevicePhysics:
    """A device type's parameters for the room physics; None leaves the physics' default."""

    lumens: float | None = None  # a light's output at full brightness
    capacity: float | None = None  # °C/h a climate entity heats or cools its room by
    role: PhysicsRole | None = None


@dataclass(frozen=True, slots=True)
class DeviceType:
    """A kind of device, e.g. a colour bulb or a split air conditioner."""

    type_id: str
    category: str
    description: str
    models: tuple[tuple[str, str], ...]
    entities: tuple[EntitySpec, ...]
    physics: DevicePhysics = DevicePhysics()

    def install(
        self,
        home: Home,
        device_id: str,
        name: str,
        area_id: str | None = None,
        model: int = 0,
    ) -> Device:
        """Add a device of this type, with all its entities in their initial state, to `home`."""
        manufacturer, model_name = self.models[model % len(self.models)]
        device = home.add_device(
            Device(device_id, name, manufacturer, model_name, area_id, self.type_id)
        )
        slug = slugify(name)
        for spec in self.entities:
            entry = EntityEntry(
                entity_id=f"{spec.domain}.{spec.object_id(slug)}",
                name=spec.friendly_name(name),
                device_id=device_id,
                device_class=spec.device_class,
                unit_of_measurement=spec.unit,
                supported_features=DOMAINS[spec.domain].feature_flags(spec.features),
                entity_category=spec.entity_category,
                capabilities=spec.capabilities,
            )
            home.add_entity(entry, spec.state, spec.attributes)
        return device


def slugify(text: str) -> str:
    """Home Assistant's slug (homeassistant.util.slugify, with the library it uses): letters
    transliterated (`Étage` -> `etage`, `居間` -> `ju_jian`), lower case, runs of other characters
    one underscore; so an imported area gets the id Home Assistant gives it."""
    return python_slugify(text, separator="_") or "unnamed"


@cache
def load_catalog() -> dict[str, DeviceType]:
    """Every device type of the built-in catalog, by type id."""
    catalog: dict[str, DeviceType] = {}
    for resource in sorted(files("twin.device_types").iterdir(), key=lambda r: r.name):
        if not resource.name.endswith(".yaml"):
            continue
        for type_id, raw in (yaml.safe_load(resource.read_text()) or {}).items():
            if type_id in catalog:
                raise HomeDefinitionError(f"Device type {type_id!r} is defined twice")
            catalog[type_id] = parse_device_type(type_id, raw, resource.name)
    return catalog


def parse_device_type(type_id: str, raw: dict[str, Any], source: str) -> DeviceType:
    """A device type from its YAML mapping; errors name the file and the type."""
    where = f"{source}: device type {type_id!r}"
    try:
        entities = tuple(_parse_entity(item) for item in raw["entities"])
        models = tuple((str(maker), str(model)) for maker, model in raw["models"])
        category, description = str(raw["category"]), str(raw.get("description", ""))
    except (KeyError, TypeError, ValueError) as err:
        raise HomeDefinitionError(f"{where}: {err!r}") from None
    if not models or not entities:
        raise HomeDefinitionError(f"{where}: needs at least one model and one entity")
    for spec in entities:
        if spec.domain not in DOMAINS:
            raise HomeDefinitionError(f"{where}: domain {spec.domain!r} is not modelled")
        try:
            DOMAINS[spec.domain].feature_flags(spec.features)
        except KeyError as err:
            raise HomeDefinitionError(f"{where}: {err.args[0]}") from None
    keys = [spec.key for spec in entities]
    if len(set(keys)) != len(keys):
        raise HomeDefinitionError(f"{where}: entity keys must be unique, got {keys}")
    physics = _parse_physics(raw.get("physics", {}), {spec.domain for spec in entities}, where)
    return DeviceType(type_id, category, description, models, entities, physics)


def _parse_entity(raw: dict[str, Any]) -> EntitySpec:
    raw = dict(raw)
    raw["features"] = tuple(raw.get("features", ()))
    raw["state"] = str(raw.get("state", "unknown"))
    return EntitySpec(**raw)


def _parse_physics(raw: object, domains: set[str], where: str) -> DevicePhysics:
    """A device type's physics parameters, each valid and acting through one of its entities."""
    known = list(DevicePhysics.__dataclass_fields__)
    if not isinstance(raw, dict):
        raise HomeDefinitionError(f"{where}: physics must be a mapping of {known}, got {raw!r}")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "role":
            if not isinstance(value, str) or value not in _ROLE_DOMAINS:
                raise HomeDefinitionError(
                    f"{where}: physics role must be one of {list(_ROLE_DOMAINS)}, got {value!r}"
                )
            needs, values[key] = _ROLE_DOMAINS[value], value
        elif key in _NUMBER_DOMAINS:
            if not _positive(value):
                raise HomeDefinitionError(
                    f"{where}: physics {key} must be a number above 0, got {value!r}"
                )
            needs, values[key] = _NUMBER_DOMAINS[key], float(value)
        else:
            raise HomeDefinitionError(f"{where}: unknown physics key {key!r}; known: {known}")
        if needs not in domains:
            raise HomeDefinitionError(f"{where}: physics {key} {value!r} needs a {needs} entity")
    return DevicePhysics(**values)


def _positive(value: object) -> bool:
    """Whether `value` is a finite number above 0 (booleans are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < math.inf

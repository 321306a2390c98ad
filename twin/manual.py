"""The device manual: what one entity offers an agent, compact enough for an LLM prompt.

The services are those of the entity's domain that its supported_features allow. Each field's type,
range and options are read from the service's voluptuous schema (once per service, at import):
vol.Coerce gives the type, vol.Range and vol.Clamp the range, the twin's Numeric both, vol.In the
options, vol.Exclusive and vol.Inclusive the groups; colour tuples (light's `_color`, over
`channels`) are read from their closure variables. The entity's capabilities then narrow them, as
its domain's module declares (twin.domains.descriptor.FieldNotes): a thermostat's
min_temp..max_temp and target_temp_step, a light's colour temperature range and effect_list, a
fan's percentage_step, the mode lists of climate, fans, humidifiers, media players, vacuums and
water heaters. Fields that Home Assistant's services.yaml filters out for the entity
(colour fields of a white bulb, transition without the feature) are left out. Where no range
exists, the description says what a value means.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import voluptuous as vol

from .domains import DOMAINS, climate, domain_of
from .domains.descriptor import CapabilityRange, FieldNotes
from .home import Home
from .registry import EntityEntry
from .service import Service
from .validation import Numeric, boolean, ensure_list, entity_id, string

TYPE_NAMES: Mapping[type, str] = MappingProxyType(
    {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        tuple: "array",
        list: "array",
        dict: "object",
    }
)
# Validators written as plain functions, and what they accept.
KNOWN_VALIDATORS: Mapping[Callable[..., Any], Mapping[str, Any]] = MappingProxyType(
    {
        string: {"type": "string"},
        boolean: {"type": "boolean"},
        entity_id: {"type": "string"},
        ensure_list: {"type": "array"},
        climate.hvac_mode: {"type": "string", "options": list(climate.HVAC_MODES)},
    }
)

# What each field means, after Home Assistant's service descriptions.
DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "transition": "Seconds to take to reach the new state.",
        "flash": "Flash the light.",
        "effect": "Light effect.",
        "brightness": "Brightness: 0 turns the light off, 1 is the dimmest, 255 the brightest.",
        "brightness_pct": "Brightness in percent: 0 turns the light off, 100 is the brightest.",
        "brightness_step": "Change the brightness by this amount (of 255).",
        "brightness_step_pct": "Change the brightness by this many percent.",
        "profile": "A light profile: a colour and a brightness.",
        "color_name": "A CSS colour name, e.g. red, orange or lightblue.",
        "color_temp_kelvin": "White colour temperature: low is warm, high is cool.",
        "hs_color": "Colour as hue (0-360) and saturation (0-100).",
        "rgb_color": "Colour as red, green and blue, 0-255 each.",
        "rgbw_color": "Colour as red, green, blue and white, 0-255 each.",
        "rgbww_color": "Colour as red, green, blue, cold white and warm white, 0-255 each.",
        "xy_color": "Colour as CIE x and y, 0-1 each.",
        "white": "Switch to white mode: true, or a brightness 0-255.",
        "temperature": "Target temperature.",
        "target_temp_low": "Low end of the target range: heats below it.",
        "target_temp_high": "High end of the target range: cools above it.",
        "hvac_mode": "HVAC mode.",
        "humidity": "Target humidity.",
        "fan_mode": "Fan mode.",
        "preset_mode": "Preset mode.",
        "swing_mode": "Swing mode.",
        "swing_horizontal_mode": "Horizontal swing mode.",
        "percentage": "Speed in percent; 0 turns the fan off.",
        "percentage_step": "Percent to change the speed by; without it, one speed step.",
        "oscillating": "Oscillate (true) or not (false).",
        "direction": "Direction of rotation.",
        "position": "Position: 0 is closed, 100 fully open.",
        "tilt_position": "Tilt: 0 is closed, 100 fully open.",
        "speed": "Speed of the movement.",
        "mode": "Operating mode.",
        "volume_level": "Volume: 0 is silent, 1 the loudest.",
        "is_volume_muted": "Mute (true) or unmute (false).",
        "source": "Input or app to switch to.",
        "sound_mode": "Sound mode.",
        "shuffle": "Shuffle on (true) or off (false).",
        "repeat": "Repeat mode.",
        "media_content_id": "What to play: a URL or the media's id.",
        "media_content_type": "Kind of media: music, tvshow, video, episode, channel, playlist...",
        "enqueue": "Play now, or add to the queue.",
        "announce": "Play as an announcement, then resume.",
        "extra": "Extra options, as the device defines them.",
        "fan_speed": "Suction power.",
        "command": "A vendor-specific command.",
        "params": "The command's parameters.",
        "operation_mode": "Operation mode.",
        "away_mode": "Away mode on (true) or off (false).",
        "code": "The lock's code.",
    }
)
UNITS: Mapping[str, str] = MappingProxyType(
    {
        "transition": "s",
        "brightness_pct": "%",
        "brightness_step_pct": "%",
        "color_temp_kelvin": "K",
        "temperature": "°C",
        "target_temp_low": "°C",
        "target_temp_high": "°C",
        "humidity": "%",
        "percentage": "%",
        "percentage_step": "%",
        "position": "%",
        "tilt_position": "%",
    }
)


# What the manual says of a field its domain has no notes on: only what its schema says.
_NO_NOTES = FieldNotes()
# Services with this many fields or more name an earlier service with the same fields.
SHARED_FIELDS = 3
# The order of a field's keys in the manual.
_KEY_ORDER = (
    "type",
    "required",
    "min",
    "max",
    "step",
    "unit",
    "length",
    "items",
    "options",
    "pattern",
)


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a service's schema, as introspected: its key and what its validator accepts."""

    name: str
    required: bool
    accepts: Mapping[str, Any]
    exclusive: str | None = None
    inclusive: str | None = None


def describe(home: Home, entity_id: str) -> dict[str, Any]:
    """The manual of one entity: who it is, its state, and the services it supports.

    Raises EntityNotFoundError for an unknown entity.
    """
    state = home.state(entity_id)
    entry = home.entities[entity_id]
    device = home.devices.get(entry.device_id) if entry.device_id is not None else None
    manual: dict[str, Any] = {
        "entity_id": entity_id,
        "name": entry.name,
        "domain": entry.domain,
        "area": home.area_of(entity_id),
        "device": (
            {"manufacturer": device.manufacturer, "model": device.model} if device else None
        ),
    }
    if entry.device_class is not None:
        manual["device_class"] = entry.device_class
    if entry.unit_of_measurement is not None:
        manual["unit_of_measurement"] = entry.unit_of_measurement
    manual["state"] = state.state
    # What the entity holds where the twin knows it (a list read from Home Assistant's state has
    # only its count).
    if (contents := domain_of(entry.domain).contents) is not None and contents in state.hidden:
        manual[contents] = state.hidden[contents]
    services: dict[str, Any] = {}
    for service in domain_of(entry.domain).services.values():
        if service.supported_by(entry):
            services[service.name] = _service_manual(entry, service, services)
    manual["services"] = services
    return manual


def _service_manual(
    entry: EntityEntry, service: Service, earlier: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """A service's description, the fields that apply to the entity, and their groups.

    Fields that repeat an earlier service's (light toggle's are turn_on's) are named, not repeated.
    """
    notes = domain_of(entry.domain).fields
    specs = [
        spec
        for spec in FIELDS[entry.domain, service.name]
        if spec.required
        or (applies := notes.get(spec.name, _NO_NOTES).applies) is None
        or applies(entry)
    ]
    manual: dict[str, Any] = {"description": service.description}
    if not specs:
        return manual
    fields = {spec.name: _field_manual(entry, spec) for spec in specs}
    if len(fields) >= SHARED_FIELDS:
        for name, other in earlier.items():
            if other.get("fields") == fields:
                manual["fields_as"] = name
                return manual
    manual["fields"] = fields
    if exclusive := _groups(specs, "exclusive"):
        manual["at_most_one_of"] = exclusive
    if together := _groups(specs, "inclusive"):
        manual["all_or_none_of"] = together
    return manual


def _groups(specs: Sequence[FieldSpec], kind: str) -> list[list[str]]:
    """The groups of two fields or more, of vol.Exclusive or vol.Inclusive keys."""
    groups: dict[str, list[str]] = {}
    for spec in specs:
        group = getattr(spec, kind)
        if group is not None:
            groups.setdefault(group, []).append(spec.name)
    return [names for names in groups.values() if len(names) > 1]


def _field_manual(entry: EntityEntry, spec: FieldSpec) -> dict[str, Any]:
    """A field as this entity takes it: the schema's limits narrowed by its capabilities."""
    notes = domain_of(entry.domain).fields.get(spec.name, _NO_NOTES)
    caps = entry.capabilities
    field: dict[str, Any] = {**spec.accepts, "required": spec.required}
    if notes.bounds is not None:
        _narrow(field, caps, notes.bounds)
    if notes.options_from is not None:
        field["options"] = list(caps.get(notes.options_from) or ())
    elif notes.options:
        field["options"] = list(notes.options)
    if (unit := UNITS.get(spec.name)) is not None:
        field["unit"] = unit
    if notes.pattern_from is not None and (pattern := caps.get(notes.pattern_from)) is not None:
        field["required"] = True
        field["pattern"] = pattern
    ordered = {name: field[name] for name in _KEY_ORDER if name in field}
    if (description := DESCRIPTIONS.get(spec.name)) is not None:
        ordered["description"] = description
    return ordered


def _narrow(field: dict[str, Any], caps: Mapping[str, Any], bounds: CapabilityRange) -> None:
    """Tighten a field's range to the entity's limits, and give its step."""
    if bounds.low is not None:
        _tighten(field, "min", caps.get(bounds.low, bounds.default_low), max)
    if bounds.high is not None:
        _tighten(field, "max", caps.get(bounds.high, bounds.default_high), min)
    if bounds.step is not None and (step := caps.get(bounds.step)) is not None:
        field["step"] = step


def _tighten(field: dict[str, Any], key: str, limit: Any, pick: Callable[[Any, Any], Any]) -> None:
    if limit is not None:
        field[key] = limit if field.get(key) is None else pick(field[key], limit)


# --- introspection of the schemas ---------------------------------------------------------------


def fields_of(service: Service) -> tuple[FieldSpec, ...]:
    """The fields of a service's data schema, with what each accepts."""
    schema = _data_schema(service.schema)
    if not schema:
        return ()
    specs = []
    for key, validator in schema.items():
        name = getattr(key, "schema", key)
        specs.append(
            FieldSpec(
                str(name),
                isinstance(key, vol.Required),
                MappingProxyType(accepts(validator)),
                getattr(key, "group_of_exclusion", None),
                getattr(key, "group_of_inclusion", None),
            )
        )
    return tuple(specs)


def _data_schema(schema: Any) -> dict[Any, Any] | None:
    """The dict of field validators inside a service schema (which vol.All may wrap)."""
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, vol.Schema):
        return _data_schema(schema.schema)
    if isinstance(schema, vol.All):
        for validator in schema.validators:
            if (found := _data_schema(validator)) is not None:
                return found
    return None


def accepts(validator: Any) -> dict[str, Any]:
    """What a validator accepts: its JSON type, range, options, or an array's length and items.

    An empty dict when it cannot be told (a validator written as an opaque function).
    """
    if isinstance(validator, vol.Schema):
        return accepts(validator.schema)
    if isinstance(validator, vol.All):
        found: dict[str, Any] = {}
        for part in validator.validators:
            _merge(found, accepts(part))
        return found
    if isinstance(validator, vol.Any):
        return _union([accepts(part) for part in validator.validators])
    if isinstance(validator, vol.Coerce):
        kind: Any = validator.type
        return {"type": TYPE_NAMES.get(kind, "string")}
    if isinstance(validator, vol.Range | vol.Clamp):
        return _bounds(validator.min, validator.max)
    if isinstance(validator, Numeric):
        return {"type": TYPE_NAMES[validator.kind], **_bounds(validator.low, validator.high)}
    if isinstance(validator, vol.In):
        container: Any = validator.container
        options = list(container)
        types = {TYPE_NAMES.get(type(option), "string") for option in options}
        return (
            {"type": types.pop(), "options": options} if len(types) == 1 else {"options": options}
        )
    if isinstance(validator, type):
        return {"type": TYPE_NAMES.get(validator, "object")}
    if isinstance(validator, bool | int | float | str):
        return {"type": TYPE_NAMES[type(validator)]}
    if inspect.isfunction(validator):
        known = KNOWN_VALIDATORS.get(validator)
        return dict(known) if known is not None else _closure(validator)
    return {}


def _closure(function: Callable[..., Any]) -> dict[str, Any]:
    """A tuple check over `channels`, by its closure."""
    names = inspect.getclosurevars(function).nonlocals
    channels = names.get("channels")
    if isinstance(channels, tuple) and channels:
        items = [accepts(channel) for channel in channels]
        same = all(item == items[0] for item in items)
        return {"type": "array", "length": len(items), "items": items[0] if same else items}
    return {}


def _bounds(low: Any, high: Any) -> dict[str, Any]:
    found = {}
    if low is not None:
        found["min"] = low
    if high is not None:
        found["max"] = high
    return found


def _merge(found: dict[str, Any], more: Mapping[str, Any]) -> None:
    """Add what one step of a vol.All accepts: later steps narrow ranges and refine the type."""
    for key, value in more.items():
        if key == "min" and "min" in found:
            found["min"] = max(found["min"], value)
        elif key == "max" and "max" in found:
            found["max"] = min(found["max"], value)
        else:
            found[key] = value


def _union(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What a vol.Any accepts: any of the parts' types, with their ranges and options."""
    found: dict[str, Any] = {}
    types: list[str] = []
    for part in parts:
        kind = part.get("type")
        if kind is not None and kind not in types:
            types.append(kind)
        for key, value in part.items():
            if key == "options":
                found.setdefault("options", []).extend(value)
            elif key != "type":
                found.setdefault(key, value)
    if types:
        found["type"] = types[0] if len(types) == 1 else types
    return found


FIELDS: Mapping[tuple[str, str], tuple[FieldSpec, ...]] = MappingProxyType(
    {
        (domain.name, service.name): fields_of(service)
        for domain in DOMAINS.values()
        for service in domain.services.values()
    }
)

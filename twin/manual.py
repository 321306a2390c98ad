"""The device manual: what one entity offers an agent, compact enough for an LLM prompt.

The services are those of the entity's domain that its supported_features allow. Each field's type,
range and options are read from the service's voluptuous schema (once per service, at import):
vol.Coerce gives the type, vol.Range and vol.Clamp the range, the twin's Numeric both, vol.In the
options, vol.Exclusive and vol.Inclusive the groups; colour tuples (light's `_color`, over
`channels`) are read from their closure variables. The entity's capabilities then narrow them: a
thermostat's min_temp..max_temp and target_temp_step, a light's colour temperature range and
effect_list, a fan's percentage_step, the mode lists of climate, fans, humidifiers, media players,
vacuums and water heaters. Fields that Home Assistant's services.yaml filters out for the entity
(colour fields of a white bulb, transition without the feature) are left out. Where no range
exists, the description says what a value means.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import voluptuous as vol

from .domains import DOMAINS, climate, cover, domain_of, fan, humidifier, light, water_heater
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


@dataclass(frozen=True, slots=True)
class CapabilityRange:
    """Capabilities that bound a field, with the domain's defaults when the entity lacks them."""

    low: str | None = None
    high: str | None = None
    default_low: float | None = None
    default_high: float | None = None
    step: str | None = None


_CLIMATE_TEMPERATURE = CapabilityRange(
    "min_temp",
    "max_temp",
    climate.DEFAULT_MIN_TEMP,
    climate.DEFAULT_MAX_TEMP,
    "target_temp_step",
)
RANGES: Mapping[tuple[str, str], CapabilityRange] = MappingProxyType(
    {
        ("climate", "temperature"): _CLIMATE_TEMPERATURE,
        ("climate", "target_temp_low"): _CLIMATE_TEMPERATURE,
        ("climate", "target_temp_high"): _CLIMATE_TEMPERATURE,
        ("climate", "humidity"): CapabilityRange(
            "min_humidity",
            "max_humidity",
            climate.DEFAULT_MIN_HUMIDITY,
            climate.DEFAULT_MAX_HUMIDITY,
            "target_humidity_step",
        ),
        ("humidifier", "humidity"): CapabilityRange(
            "min_humidity",
            "max_humidity",
            humidifier.DEFAULT_MIN_HUMIDITY,
            humidifier.DEFAULT_MAX_HUMIDITY,
        ),
        ("water_heater", "temperature"): CapabilityRange(
            "min_temp",
            "max_temp",
            water_heater.DEFAULT_MIN_TEMP,
            water_heater.DEFAULT_MAX_TEMP,
            "target_temp_step",
        ),
        ("light", "color_temp_kelvin"): CapabilityRange(
            "min_color_temp_kelvin",
            "max_color_temp_kelvin",
            light.DEFAULT_MIN_KELVIN,
            light.DEFAULT_MAX_KELVIN,
        ),
        ("fan", "percentage"): CapabilityRange(step=fan.ATTR_PERCENTAGE_STEP),
    }
)
# The capability that lists a field's options; an entity without it has none.
OPTION_LISTS: Mapping[tuple[str, str], str] = MappingProxyType(
    {
        ("climate", "hvac_mode"): "hvac_modes",
        ("climate", "fan_mode"): "fan_modes",
        ("climate", "preset_mode"): "preset_modes",
        ("climate", "swing_mode"): "swing_modes",
        ("climate", "swing_horizontal_mode"): "swing_horizontal_modes",
        ("light", "effect"): "effect_list",
        ("fan", "preset_mode"): fan.ATTR_PRESET_MODES,
        ("cover", "speed"): cover.ATTR_SUPPORTED_SPEEDS,
        ("humidifier", "mode"): humidifier.ATTR_AVAILABLE_MODES,
        ("media_player", "source"): "source_list",
        ("media_player", "sound_mode"): "sound_mode_list",
        ("vacuum", "fan_speed"): "fan_speed_list",
        ("water_heater", "operation_mode"): water_heater.ATTR_OPERATION_LIST,
    }
)
# Options a domain's handler checks against a fixed list.
FIXED_OPTIONS: Mapping[tuple[str, str], tuple[str, ...]] = MappingProxyType(
    {
        ("fan", "direction"): fan.DIRECTIONS,
        ("light", "profile"): tuple(light.PROFILES),
    }
)


def _modes(entry: EntityEntry) -> frozenset[str]:
    return frozenset(entry.capabilities.get("supported_color_modes") or ())


def _has_mode(modes: Iterable[str]) -> Callable[[EntityEntry], bool]:
    """A light filter of services.yaml: the light supports one of `modes`."""
    wanted = frozenset(modes)
    return lambda entry: not wanted.isdisjoint(_modes(entry))


def _has_feature(feature: int) -> Callable[[EntityEntry], bool]:
    """A feature filter of services.yaml: the entity has the feature."""
    return lambda entry: entry.supported_features & feature == feature


_BRIGHTNESS = _has_mode(light.COLOR_MODES_BRIGHTNESS)
_COLOR = _has_mode(light.COLOR_MODES_COLOR)
# Which optional fields apply to an entity, after Home Assistant's services.yaml `filter`s.
FIELD_FILTERS: Mapping[tuple[str, str], Callable[[EntityEntry], bool]] = MappingProxyType(
    {
        ("light", "transition"): _has_feature(light.TRANSITION),
        ("light", "flash"): _has_feature(light.FLASH),
        ("light", "effect"): _has_feature(light.EFFECT),
        ("light", "brightness"): _BRIGHTNESS,
        ("light", "brightness_pct"): _BRIGHTNESS,
        ("light", "brightness_step"): _BRIGHTNESS,
        ("light", "brightness_step_pct"): _BRIGHTNESS,
        ("light", "color_temp_kelvin"): _has_mode(light.COLOR_MODES_COLOR | {light.COLOR_TEMP}),
        ("light", "color_name"): _COLOR,
        ("light", "hs_color"): _COLOR,
        ("light", "rgb_color"): _COLOR,
        ("light", "rgbw_color"): _COLOR,
        ("light", "rgbww_color"): _COLOR,
        ("light", "xy_color"): _COLOR,
        ("light", "white"): _has_mode({light.WHITE}),
        ("climate", "temperature"): _has_feature(climate.TARGET_TEMPERATURE),
        ("climate", "target_temp_low"): _has_feature(climate.TARGET_TEMPERATURE_RANGE),
        ("climate", "target_temp_high"): _has_feature(climate.TARGET_TEMPERATURE_RANGE),
        ("fan", "percentage"): _has_feature(fan.SET_SPEED),
        ("fan", "preset_mode"): _has_feature(fan.PRESET_MODE),
        ("cover", "speed"): _has_feature(cover.SPEED),
    }
)
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
    domain = entry.domain
    specs = [
        spec
        for spec in FIELDS[domain, service.name]
        if spec.required
        or (applies := FIELD_FILTERS.get((domain, spec.name))) is None
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
    key = (entry.domain, spec.name)
    caps = entry.capabilities
    field: dict[str, Any] = {**spec.accepts, "required": spec.required}
    if (bounds := RANGES.get(key)) is not None:
        _narrow(field, caps, bounds)
    if (options_key := OPTION_LISTS.get(key)) is not None:
        field["options"] = list(caps.get(options_key) or ())
    elif key in FIXED_OPTIONS:
        field["options"] = list(FIXED_OPTIONS[key])
    if (unit := UNITS.get(spec.name)) is not None:
        field["unit"] = unit
    if key == ("lock", "code") and (code_format := caps.get("code_format")) is not None:
        field["required"] = True
        field["pattern"] = code_format
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

"""light: Home Assistant's light platform (homeassistant/components/light) and a well-behaved bulb.

The service layer is Home Assistant's: LIGHT_TURN_ON_SCHEMA, preprocess_turn_on_alternatives,
process_turn_on_params (brightness steps, colour conversion into a mode the light supports),
filter_turn_on_params, "brightness 0 turns the light off", toggle, and LightEntity.state_attributes.
What Home Assistant leaves to the integration follows its demo light, as a real bulb does: the bulb
remembers its brightness, colour and effect while off (in `hidden`), its color_mode follows the last
colour set, it clamps colour temperatures to its range and channels to 0-255, refuses effects it
lacks (but "off", Home Assistant's no effect), and flash and transition change nothing that lasts.
Only Home Assistant's built-in light profiles exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

import voluptuous as vol

from .. import color
from ..errors import HomeDefinitionError, ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import Numeric, shown, string
from .descriptor import (
    ON_OFF_OUTCOMES,
    Asked,
    CapabilityRange,
    Carrying,
    Domain,
    FieldFilter,
    FieldNotes,
    Spoken,
    has_feature,
    toggle_state,
)
from .rules import ON_OFF, EntityRules, names, number, one_of, optional, sequence, text

# Colour modes (Home Assistant's ColorMode) and the groups light/const.py builds from them.
ONOFF = "onoff"
BRIGHTNESS = "brightness"
COLOR_TEMP = "color_temp"
HS = "hs"
XY = "xy"
RGB = "rgb"
RGBW = "rgbw"
RGBWW = "rgbww"
WHITE = "white"
COLOR_MODES = frozenset({ONOFF, BRIGHTNESS, COLOR_TEMP, HS, XY, RGB, RGBW, RGBWW, WHITE})
COLOR_MODES_BRIGHTNESS = COLOR_MODES - {ONOFF}
COLOR_MODES_COLOR = frozenset({HS, RGB, RGBW, RGBWW, XY})

# LightEntityFeature.
EFFECT = 4
FLASH = 8
TRANSITION = 32

DEFAULT_MIN_KELVIN = 2000
DEFAULT_MAX_KELVIN = 6535
EFFECT_OFF = "off"

# The state attribute that holds the colour of each colour mode.
COLOR_KEYS = {
    COLOR_TEMP: "color_temp_kelvin",
    HS: "hs_color",
    XY: "xy_color",
    RGB: "rgb_color",
    RGBW: "rgbw_color",
    RGBWW: "rgbww_color",
}
# A bulb that has never been set powers on at full brightness in warm white (2700 K), or in plain
# white when it has no colour temperature, as most bulbs do.
POWER_ON_KELVIN = 2700
_POWER_ON_COLORS: dict[str, Any] = {
    HS: (0.0, 0.0),
    XY: color.rgb_to_xy(255, 255, 255),
    RGB: (255, 255, 255),
    RGBW: (0, 0, 0, 255),
    RGBWW: (0, 0, 0, 255, 255),
}
# Home Assistant's built-in light_profiles.csv: name -> (hs colour of its xy, brightness).
PROFILES = {
    name: (color.xy_to_hs(x, y), brightness)
    for name, x, y, brightness in (
        ("relax", 0.5119, 0.4147, 144),
        ("concentrate", 0.5119, 0.4147, 219),
        ("energize", 0.368, 0.3686, 203),
        ("reading", 0.4448, 0.4066, 240),
    )
}


def _byte(name: str) -> Callable[[Any], Any]:
    """cv.byte: an int 0-255."""
    return Numeric(int, 0, 255, name=name)


def _color(name: str, *channels: Any) -> vol.All:
    """A colour: a sequence of exactly these channels, made a tuple as Home Assistant does."""
    sequence = vol.ExactSequence(channels)

    def check(value: tuple[Any, ...]) -> tuple[Any, ...]:
        if len(value) != len(channels):
            raise vol.Invalid(f"{name} needs {len(channels)} values, got {len(value)}")
        return tuple(sequence(value))

    return vol.All(vol.Coerce(tuple), check)


COLOR_GROUP = "Color descriptors"
_ONE_COLOR = (
    "give one colour only: profile, color_name, color_temp_kelvin, hs_color, rgb_color, "
    "rgbw_color, rgbww_color, xy_color or white"
)
_ONE_BRIGHTNESS = (
    "give one brightness only: brightness, brightness_pct, brightness_step or brightness_step_pct"
)
VALID_TRANSITION = Numeric(float, 0, 6553, clamp=True)
VALID_BRIGHTNESS = Numeric(int, 0, 255, clamp=True)
VALID_FLASH = vol.In(["short", "long"], msg="flash must be short or long")


def _color_key(key: str) -> vol.Exclusive:
    """A key of the colour group: at most one colour per call."""
    return vol.Exclusive(key, COLOR_GROUP, msg=_ONE_COLOR)


def _brightness_key(key: str) -> vol.Exclusive:
    """A key of the brightness group: at most one brightness per call."""
    return vol.Exclusive(key, BRIGHTNESS, msg=_ONE_BRIGHTNESS)


_TURN_ON_FIELDS = {
    _color_key("profile"): string,
    vol.Optional("transition"): VALID_TRANSITION,
    _brightness_key("brightness"): VALID_BRIGHTNESS,
    _brightness_key("brightness_pct"): Numeric(float, 0, 100, name="brightness_pct"),
    _brightness_key("brightness_step"): Numeric(int, -255, 255, clamp=True),
    _brightness_key("brightness_step_pct"): Numeric(float, -100, 100, clamp=True),
    _color_key("color_name"): string,
    _color_key("color_temp_kelvin"): Numeric(int, 0, name="color_temp_kelvin"),
    _color_key("hs_color"): _color(
        "hs_color",
        Numeric(float, 0, 360, name="hue"),
        Numeric(float, 0, 100, name="saturation"),
    ),
    _color_key("rgb_color"): _color("rgb_color", *[_byte("rgb_color values")] * 3),
    _color_key("rgbw_color"): _color("rgbw_color", *[_byte("rgbw_color values")] * 4),
    _color_key("rgbww_color"): _color("rgbww_color", *[_byte("rgbww_color values")] * 5),
    _color_key("xy_color"): _color("xy_color", *[Numeric(float, 0, 1, name="x and y")] * 2),
    _color_key("white"): vol.Any(True, VALID_BRIGHTNESS),
    vol.Optional("flash"): VALID_FLASH,
    vol.Optional("effect"): string,
}
TURN_OFF_SCHEMA = schema(
    {vol.Optional("transition"): VALID_TRANSITION, vol.Optional("flash"): VALID_FLASH}
)


def preprocess_turn_on_alternatives(params: dict[str, Any]) -> dict[str, Any]:
    """Turn profile, color_name and brightness_pct into plain parameters (Home Assistant's)."""
    if "brightness_step" in params or "brightness_step_pct" in params:
        return params  # done per light, once the step is known
    if "profile" in params and (profile := PROFILES.get(params.pop("profile"))) is not None:
        params["hs_color"], brightness = profile  # the schema allows no other colour with it
        params.setdefault("brightness", brightness)
    if (color_name := params.pop("color_name", None)) is not None:
        try:
            params["rgb_color"] = color.name_to_rgb(color_name)
        except ValueError:
            params["rgb_color"] = (255, 255, 255)  # Home Assistant falls back to white
    if (brightness_pct := params.pop("brightness_pct", None)) is not None:
        params["brightness"] = round(255 * brightness_pct / 100)
    return params


TURN_ON_SCHEMA = vol.All(schema(_TURN_ON_FIELDS), preprocess_turn_on_alternatives)


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn on with the given brightness, colour and effect; brightness or white 0 turns off."""
    light = _Light(entity)
    params = light.process_turn_on(data)
    if params.get("brightness") == 0 or params.get("white") == 0:
        entity.state = "off"
    else:
        light.turn_on(params)
    light.show()


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off; the bulb keeps its brightness and colour for the next turn_on."""
    light = _Light(entity)
    entity.state = "off"
    light.show()


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn off if on, else on with the given parameters (LightEntity.async_toggle)."""
    light = _Light(entity)
    if entity.state != "on":
        params = light.process_turn_on(data)
        if params.get("brightness") != 0 and params.get("white") != 0:
            light.turn_on(params)
            light.show()
            return
    entity.state = "off"
    light.show()


def show(entity: EntityDraft) -> None:
    """Show what a light holding these attributes shows: while off, no colour mode or colour."""
    _Light(entity).show()


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """A synthetic-home light's arguments as LightEntity writes them: supported_color_modes
    sorted, the default colour temperature range of a light with color_temp, and the state from
    is_on (without it, Carrying.on_attribute decides)."""
    modes = arguments.get("supported_color_modes")
    if isinstance(modes, list) and all(isinstance(mode, str) for mode in modes):
        arguments["supported_color_modes"] = sorted(set(modes))
        if COLOR_TEMP in modes:
            arguments.setdefault("min_color_temp_kelvin", DEFAULT_MIN_KELVIN)
            arguments.setdefault("max_color_temp_kelvin", DEFAULT_MAX_KELVIN)
    return toggle_state(arguments)


def remembered(entry: EntityEntry, state: State) -> Mapping[str, Any]:
    """What the light remembers, on or off (LightEntity's `_attr_*`): what HA's light code reads.

    Home Assistant converts a colour temperature or `white: true` with the brightness of a light
    that is off, and derives the colours it shows from the unrounded colour; an entity that
    answers from this memory makes Home Assistant's state and normalisation the twin's.
    """
    if "color_mode" in state.hidden:
        return state.hidden
    return _Light(EntityDraft.of(entry, state)).memory


class _Light:
    """One light during a call: its capabilities and its memory (the entity's `_attr_*`)."""

    __slots__ = ("entity", "max_kelvin", "memory", "min_kelvin", "modes")

    def __init__(self, entity: EntityDraft) -> None:
        capabilities = entity.capabilities
        self.entity = entity
        if "supported_color_modes" not in capabilities:
            raise HomeDefinitionError(
                f"{entity.entity_id} lacks the supported_color_modes capability that every "
                "light needs; add it to the entity's capabilities"
            )
        self.modes = frozenset(capabilities["supported_color_modes"])
        self.min_kelvin: int = capabilities.get("min_color_temp_kelvin", DEFAULT_MIN_KELVIN)
        self.max_kelvin: int = capabilities.get("max_color_temp_kelvin", DEFAULT_MAX_KELVIN)
        self.memory = entity.hidden
        if "color_mode" not in self.memory:
            self.memory.update(self._power_on_memory())

    def _power_on_memory(self) -> dict[str, Any]:
        """What a light that was never set remembers: what it shows, else its power-on state."""
        shown = self.entity.attributes
        modes = self.modes
        mode = shown.get("color_mode") or next(
            (m for m in (COLOR_TEMP, WHITE, HS, XY, RGB, RGBW, RGBWW, BRIGHTNESS) if m in modes),
            ONOFF,
        )
        memory: dict[str, Any] = {"color_mode": mode}
        if not modes.isdisjoint(COLOR_MODES_BRIGHTNESS):
            brightness = shown.get("brightness")
            memory["brightness"] = 255 if brightness is None else brightness
        if self.entity.supports(EFFECT):
            # A light that is on shows its effect, None too; one that is off shows none.
            on = self.entity.state == "on"
            memory["effect"] = shown.get("effect", EFFECT_OFF) if on else EFFECT_OFF
        if (key := COLOR_KEYS.get(mode)) is not None:
            value = shown.get(key)
            if mode == COLOR_TEMP:
                memory[key] = value or self._clamp_kelvin(POWER_ON_KELVIN)
            else:
                memory[key] = tuple(value) if value else _POWER_ON_COLORS[mode]
        return memory

    @property
    def brightness(self) -> int | None:
        """LightEntity.brightness."""
        return self.memory.get("brightness")

    def _clamp_kelvin(self, kelvin: int) -> int:
        """A real bulb goes no warmer or cooler than it can."""
        return min(max(kelvin, self.min_kelvin), self.max_kelvin)

    def process_turn_on(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Home Assistant's process_turn_on_params: steps, then colour into a supported mode."""
        params = dict(data)
        if "brightness_step" in params or "brightness_step_pct" in params:
            brightness = self.brightness if self.entity.state == "on" and self.brightness else 0
            if "brightness_step" in params:
                brightness += params.pop("brightness_step")
            else:
                brightness_pct = round(brightness / 255 * 100)
                brightness = round((brightness_pct + params.pop("brightness_step_pct")) / 100 * 255)
            params["brightness"] = max(0, min(255, brightness))
            preprocess_turn_on_alternatives(params)
        modes = self.modes
        if "color_temp_kelvin" in params and COLOR_TEMP not in modes:
            kelvin = params.pop("color_temp_kelvin")
            if RGBWW in modes:
                if kelvin == 0:
                    raise ServiceValidationError(
                        f"{self.entity.entity_id} cannot show color_temp_kelvin 0; give a "
                        f"temperature of {self.min_kelvin}-{self.max_kelvin} K"
                    )
                params["rgbww_color"] = color.kelvin_to_rgbww(
                    kelvin,
                    params.get("brightness", self.memory["brightness"]),
                    self.min_kelvin,
                    self.max_kelvin,
                )
            elif not modes.isdisjoint(COLOR_MODES_COLOR):
                params["hs_color"] = color.kelvin_to_hs(kelvin)
        self._convert_color(params)
        if params.get("white") is True:
            params["white"] = self.brightness
        if "white" in params and WHITE in modes:
            params["white"] = params.pop("brightness", params["white"])
        return params

    def _convert_color(self, params: dict[str, Any]) -> None:
        """Give a requested colour in a colour mode the light supports, as Home Assistant does."""
        modes = self.modes
        low, high = self.min_kelvin, self.max_kelvin
        if "hs_color" in params and HS not in modes:
            self._from_rgb(params, color.hs_to_rgb(*params.pop("hs_color")))
        elif "rgb_color" in params and RGB not in modes:
            self._from_rgb(params, params.pop("rgb_color"))
        elif "xy_color" in params and XY not in modes:
            xy_color = params.pop("xy_color")
            if HS in modes:
                params["hs_color"] = color.rgb_to_hs(*_xy_to_rgb(*xy_color))
            elif RGB in modes:
                params["rgb_color"] = _xy_to_rgb(*xy_color)
            elif RGBW in modes:
                params["rgbw_color"] = color.rgb_to_rgbw(*_xy_to_rgb(*xy_color))
            elif RGBWW in modes:
                params["rgbww_color"] = color.rgb_to_rgbww(*_xy_to_rgb(*xy_color), low, high)
            elif COLOR_TEMP in modes:
                params["color_temp_kelvin"] = _xy_to_kelvin(*xy_color)
        elif "rgbw_color" in params and RGBW not in modes:
            self._from_rgb(params, color.rgbw_to_rgb(*params.pop("rgbw_color")))
        elif "rgbww_color" in params and RGBWW not in modes:
            red, green, blue, cold, warm = params.pop("rgbww_color")
            self._from_rgb(params, color.rgbww_to_rgb(red, green, blue, cold, warm, low, high))

    def _from_rgb(self, params: dict[str, Any], rgb: tuple[int, int, int]) -> None:
        """A colour the light cannot take as given, as rgb, into the first mode it supports.

        Home Assistant's order, the same for hs, rgb, rgbw and rgbww requests (the requested
        mode itself is never supported here).
        """
        modes = self.modes
        if RGB in modes:
            params["rgb_color"] = rgb
        elif RGBW in modes:
            params["rgbw_color"] = color.rgb_to_rgbw(*rgb)
        elif RGBWW in modes:
            params["rgbww_color"] = color.rgb_to_rgbww(*rgb, self.min_kelvin, self.max_kelvin)
        elif HS in modes:
            params["hs_color"] = color.rgb_to_hs(*rgb)
        elif XY in modes:
            params["xy_color"] = color.rgb_to_xy(*rgb)
        elif COLOR_TEMP in modes:
            params["color_temp_kelvin"] = _xy_to_kelvin(*color.rgb_to_xy(*rgb))

    def turn_on(self, params: dict[str, Any]) -> None:
        """The bulb: take what it supports (filter_turn_on_params), remember it, and light up."""
        entity, modes, memory = self.entity, self.modes, self.memory
        effect = params.get("effect") if entity.supports(EFFECT) else None
        if effect is not None:
            effects = entity.capabilities.get("effect_list") or []
            # "off" is Home Assistant's no effect (EFFECT_OFF), whatever the light lists.
            if effect not in effects and effect != EFFECT_OFF:
                raise ServiceValidationError(
                    f"{entity.entity_id} has no effect {effect!r}; effects: {', '.join(effects)}"
                )
            memory["effect"] = effect
        entity.state = "on"
        if "brightness" in params and not modes.isdisjoint(COLOR_MODES_BRIGHTNESS):
            memory["brightness"] = params["brightness"]
        for mode, key in COLOR_KEYS.items():
            if key in params and mode in modes:
                memory["color_mode"] = mode
                value = params[key]
                if mode == COLOR_TEMP:
                    value = self._clamp_kelvin(value)
                elif mode == XY:
                    _xy_to_rgb(*value)  # Home Assistant shows it as rgb, and fails where this does
                elif mode == RGBWW:
                    # Home Assistant makes whites beyond 0-255 from temperatures outside the
                    # light's range; the channels cannot go past off or full.
                    value = tuple(min(max(channel, 0), 255) for channel in value)
                memory[key] = value
        if "white" in params and WHITE in modes:
            memory["color_mode"] = WHITE
            memory["brightness"] = params["white"]

    def show(self) -> None:
        """Write LightEntity.state_attributes: what the light shows, on or off, for its modes."""
        entity, memory, modes = self.entity, self.memory, self.modes
        mode = memory["color_mode"] if entity.state == "on" else None
        attributes = entity.attributes
        if entity.supports(EFFECT):
            attributes["effect"] = memory.get("effect") if mode else None
        attributes["color_mode"] = mode
        if not modes.isdisjoint(COLOR_MODES_BRIGHTNESS):
            attributes["brightness"] = (
                memory["brightness"] if mode in COLOR_MODES_BRIGHTNESS else None
            )
        if COLOR_TEMP in modes:
            attributes["color_temp_kelvin"] = (
                memory[COLOR_KEYS[mode]] if mode == COLOR_TEMP else None
            )
        if COLOR_TEMP in modes or not modes.isdisjoint(COLOR_MODES_COLOR):
            attributes["hs_color"] = attributes["rgb_color"] = attributes["xy_color"] = None
            if RGBW in modes:
                attributes["rgbw_color"] = None
            if RGBWW in modes:
                attributes["rgbww_color"] = None
            if mode in COLOR_KEYS:
                value = memory[COLOR_KEYS[mode]]
                attributes.update(_color_attributes(mode, value, self.min_kelvin, self.max_kelvin))


def _xy_to_rgb(x: float, y: float) -> tuple[int, int, int]:
    """color.xy_to_rgb, refusing the xy (y next to 0) where Home Assistant's maths breaks down."""
    try:
        return color.xy_to_rgb(x, y)
    except (ValueError, OverflowError):
        raise ServiceValidationError(
            f"xy_color ({x}, {y}) is no colour a light can show; use a y of at least 0.001"
        ) from None


def _xy_to_kelvin(x: float, y: float) -> int:
    """color.xy_to_kelvin, refusing the one point where Home Assistant divides by zero."""
    try:
        return color.xy_to_kelvin(x, y)
    except ZeroDivisionError:
        raise ServiceValidationError(
            f"xy_color ({x}, {y}) has no colour temperature; move y off 0.1858"
        ) from None


@lru_cache(maxsize=4096)
def _color_attributes(mode: str, value: Any, min_kelvin: int, max_kelvin: int) -> dict[str, Any]:
    """LightEntity._light_internal_convert_color: a colour in every space it is shown in.

    Cached, as lights repeat colours; callers copy the result and never change it.
    """
    if mode == HS:
        return {
            "hs_color": (round(value[0], 3), round(value[1], 3)),
            "rgb_color": color.hs_to_rgb(*value),
            "xy_color": color.hs_to_xy(*value),
        }
    if mode == XY:
        return {
            "hs_color": color.xy_to_hs(*value),
            "rgb_color": color.xy_to_rgb(*value),
            "xy_color": (round(value[0], 6), round(value[1], 6)),
        }
    if mode == COLOR_TEMP:
        hs_color = color.kelvin_to_hs(value)
        return {
            "hs_color": (round(hs_color[0], 3), round(hs_color[1], 3)),
            "rgb_color": color.hs_to_rgb(*hs_color),
            "xy_color": color.hs_to_xy(*hs_color),
        }
    if mode == RGB:
        rgb = value
        extra = {}
    elif mode == RGBW:
        rgb = color.rgbw_to_rgb(*value)
        extra = {"rgbw_color": tuple(int(x) for x in value[0:4])}
    else:
        red, green, blue, cold, warm = value
        rgb = color.rgbww_to_rgb(red, green, blue, cold, warm, min_kelvin, max_kelvin)
        extra = {"rgbww_color": tuple(int(x) for x in value[0:5])}
    return {
        "hs_color": color.rgb_to_hs(*rgb),
        "rgb_color": tuple(int(x) for x in rgb[0:3]),
        **extra,
        "xy_color": color.rgb_to_xy(*rgb),
    }


# --- what a light may hold (twin.domains.rules) -------------------------------------------------

_KELVIN = number(1000, 40000)  # what color.kelvin_to_rgb models
_CHANNEL = number(0, 255)


def _consistent(entry: EntityEntry, state: State) -> None:
    """Its white range a mired wide at least (the rgbww conversions divide by it), its colour
    modes among its supported_color_modes, and a remembered colour mode with what `_Light.show`
    reads for it: the colour and, for a dimmable light, the brightness."""
    caps = entry.capabilities
    low = caps.get("min_color_temp_kelvin", DEFAULT_MIN_KELVIN)
    high = caps.get("max_color_temp_kelvin", DEFAULT_MAX_KELVIN)
    if color.kelvin_to_mired(low) <= color.kelvin_to_mired(high):
        raise vol.Invalid(
            f"capabilities: min_color_temp_kelvin ({low}) must be at least a mired warmer than "
            f"max_color_temp_kelvin ({high})"
        )
    if "supported_color_modes" not in caps:
        return  # the light's services say what it lacks
    modes = caps["supported_color_modes"]
    supported = ", ".join(modes) or "none"
    shown_mode = state.attributes.get("color_mode")
    if shown_mode is not None and shown_mode not in modes:
        raise vol.Invalid(
            f"attributes.color_mode: {shown_mode} is not one of supported_color_modes ({supported})"
        )
    memory = state.hidden
    if "color_mode" not in memory:
        return
    mode = memory["color_mode"]
    if mode not in modes:
        raise vol.Invalid(
            f"hidden.color_mode: {shown(mode)} is not one of supported_color_modes ({supported})"
        )
    needed = [COLOR_KEYS[mode]] if mode in COLOR_KEYS else []
    if not COLOR_MODES_BRIGHTNESS.isdisjoint(modes):
        needed.append(BRIGHTNESS)
    missing = [key for key in needed if memory.get(key) is None]
    if missing:
        raise vol.Invalid(
            f"hidden: a light that remembers color_mode {mode} remembers its "
            f"{' and '.join(missing)} too; add it, or leave out color_mode"
        )


RULES = EntityRules(
    {
        "supported_color_modes": names(one_of(COLOR_MODES)),
        "min_color_temp_kelvin": _KELVIN,
        "max_color_temp_kelvin": _KELVIN,
        "effect_list": optional(names()),
        "color_mode": optional(one_of(COLOR_MODES)),
        "brightness": optional(_CHANNEL),
        "effect": optional(text),
        "color_temp_kelvin": optional(_KELVIN),
        "hs_color": optional(sequence(number(0, 360), number(0, 100))),
        "xy_color": optional(sequence(number(0, 1), number(0, 1))),
        "rgb_color": optional(sequence(*[_CHANNEL] * 3)),
        "rgbw_color": optional(sequence(*[_CHANNEL] * 4)),
        "rgbww_color": optional(sequence(*[_CHANNEL] * 5)),
    },
    _consistent,
    states=ON_OFF,
)


# --- what the device manual says of a light's fields, after Home Assistant's services.yaml ------

_BRIGHTNESS_FIELDS = ("brightness", "brightness_pct", "brightness_step", "brightness_step_pct")
_COLOR_FIELDS = frozenset(
    {"color_name", "hs_color", "rgb_color", "rgbw_color", "rgbww_color", "xy_color"}
)


def _has_mode(modes: Iterable[str]) -> FieldFilter:
    """A light filter of services.yaml: the light supports one of `modes`."""
    wanted = frozenset(modes)
    return lambda entry: (
        not wanted.isdisjoint(entry.capabilities.get("supported_color_modes") or ())
    )


_BRIGHTNESS = _has_mode(COLOR_MODES_BRIGHTNESS)


DOMAIN = Domain.of(
    "light",
    [
        Service(
            "turn_on",
            turn_on,
            TURN_ON_SCHEMA,
            description="Turn lights on, or set their brightness, colour or effect.",
        ),
        Service("turn_off", turn_off, TURN_OFF_SCHEMA, description="Turn lights off."),
        Service(
            "toggle", toggle, TURN_ON_SCHEMA, description="Toggle lights; when off, as turn_on."
        ),
    ],
    {"effect": EFFECT, "flash": FLASH, "transition": TRANSITION},
    rules=RULES,
    device=True,
    key_attributes=("brightness",),
    fields={
        "transition": FieldNotes(applies=has_feature(TRANSITION)),
        "flash": FieldNotes(applies=has_feature(FLASH)),
        "effect": FieldNotes(options_from="effect_list", applies=has_feature(EFFECT)),
        **{key: FieldNotes(applies=_BRIGHTNESS) for key in _BRIGHTNESS_FIELDS},
        "color_temp_kelvin": FieldNotes(
            CapabilityRange(
                "min_color_temp_kelvin",
                "max_color_temp_kelvin",
                DEFAULT_MIN_KELVIN,
                DEFAULT_MAX_KELVIN,
            ),
            applies=_has_mode(COLOR_MODES_COLOR | {COLOR_TEMP}),
        ),
        **{key: FieldNotes(applies=_has_mode(COLOR_MODES_COLOR)) for key in _COLOR_FIELDS},
        "white": FieldNotes(applies=_has_mode({WHITE})),
        "profile": FieldNotes(options=tuple(PROFILES)),
    },
    state_outcomes=ON_OFF_OUTCOMES,
    carrying=Carrying(
        capabilities=frozenset(
            {
                "min_color_temp_kelvin",
                "max_color_temp_kelvin",
                "effect_list",
                "supported_color_modes",
            }
        ),
        tuples=frozenset(_COLOR_FIELDS - {"color_name"}),
        arguments=from_arguments,
        on_attribute="brightness",
        shows=show,
    ),
    spoken={
        "turn_on": (
            Spoken("HassTurnOn"),
            Spoken("HassLightSet", {"brightness_pct": "brightness"}),
            Spoken("HassLightSet", {"color_temp_kelvin": "temperature"}),
            Spoken("HassLightSet", {"color_name": "color"}),
        ),
        "turn_off": (Spoken("HassTurnOff"),),
    },
    asked=Asked(
        ("on", "off"),
        nouns=("light", "lamp", "chandelier", "sconce", "strip", "lights"),
        request=("turn_on", {}),
        feature_requests=(
            ("turn_on", {"color_name": "blue"}),
            ("turn_on", {"color_name": "red"}),
            ("turn_on", {"color_name": "green"}),
            ("turn_on", {"brightness_pct": 50}),
        ),
    ),
    color="#f2c14e",
)

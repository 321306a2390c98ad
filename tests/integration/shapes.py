"""Minimal Home Assistant entities of random shapes, one per domain the twin models.

Each domain has a shape generator: from a seeded random.Random it picks the entity's features
(supported_features, colour modes, option lists, ranges, attributes present or absent) and its
initial values, and returns a minimal entity of Home Assistant's own entity class that holds them.
A minimal entity is what a simple integration writes (as HA's `demo` and `kitchen_sink`
components do): it sets the `_attr_*` it is told in the service methods Home Assistant calls, and
does what a well-behaved device does where HA leaves it to the device (a thermostat or fan that is
turned on returns to what it last ran at).

Home Assistant's helpers and scripts are not written by integrations but configured by users:
their generators (CONFIGS) give a random YAML configuration, which HA's own helper component sets
up. Adding a domain is adding its generator to SHAPES or CONFIGS.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from datetime import date, datetime
from functools import partialmethod
from typing import Any

from homeassistant.components.alarm_control_panel import (
    AlarmControlPanelEntity,
    AlarmControlPanelEntityFeature,
    AlarmControlPanelState,
    CodeFormat,
)
from homeassistant.components.button import ButtonEntity
from homeassistant.components.climate import ClimateEntity, ClimateEntityFeature, HVACMode
from homeassistant.components.cover import CoverEntity, CoverEntityFeature
from homeassistant.components.fan import FanEntity, FanEntityFeature
from homeassistant.components.humidifier import HumidifierEntity, HumidifierEntityFeature
from homeassistant.components.lawn_mower import (
    LawnMowerActivity,
    LawnMowerEntity,
    LawnMowerEntityFeature,
)
from homeassistant.components.light import ColorMode, LightEntity, LightEntityFeature
from homeassistant.components.lock import LockEntity, LockEntityFeature
from homeassistant.components.media_player import (
    MediaPlayerEntity,
    MediaPlayerEntityFeature,
    MediaPlayerState,
)
from homeassistant.components.number import NumberEntity, NumberMode
from homeassistant.components.scene import Scene
from homeassistant.components.select import SelectEntity
from homeassistant.components.siren import SirenEntity, SirenEntityFeature
from homeassistant.components.switch import SwitchEntity
from homeassistant.components.todo import (
    TodoItem,
    TodoItemStatus,
    TodoListEntity,
    TodoListEntityFeature,
)
from homeassistant.components.vacuum import StateVacuumEntity, VacuumActivity, VacuumEntityFeature
from homeassistant.components.valve import ValveEntity, ValveEntityFeature
from homeassistant.components.water_heater import WaterHeaterEntity, WaterHeaterEntityFeature
from homeassistant.const import UnitOfTemperature
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.entity import Entity


class Minimal(Entity):
    """An entity that holds the `_attr_*` values it is given and writes them when told."""

    _attr_should_poll = False

    def __init__(self, entity_id: str, values: dict[str, Any]) -> None:
        self.entity_id = entity_id
        self.values = values
        self._attr_name = entity_id.partition(".")[2]
        for key, value in values.items():
            setattr(self, f"_attr_{key}", value)

    def hold(self, **values: Any) -> None:
        """Hold new values and write the state."""
        for key, value in values.items():
            setattr(self, f"_attr_{key}", value)
        self.async_write_ha_state()


def subset(rng: random.Random, options: list[Any], least: int = 0) -> list[Any]:
    """Some of `options`, in their order; at least `least` of them."""
    chosen = [option for option in options if rng.random() < 0.5]
    while len(chosen) < least:
        chosen = sorted({*chosen, rng.choice(options)}, key=options.index)
    return chosen


def flags[F: (int)](rng: random.Random, kind: type[F]) -> F:
    """A random combination of the members of a feature enum."""
    value = kind(0)
    for member in kind:  # type: ignore[attr-defined]
        if rng.random() < 0.5:
            value |= member
    return value


def maybe(rng: random.Random, value: Any, chance: float = 0.5) -> Any:
    """`value`, or None."""
    return value if rng.random() < chance else None


# --- switch -------------------------------------------------------------------------------------


class OnOff(Minimal):
    """An entity that turns on and off, and holds nothing more of what it is told."""

    async def async_turn_on(self, **kwargs: Any) -> None:
        self.hold(is_on=True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        self.hold(is_on=False)


class MinimalSwitch(OnOff, SwitchEntity):
    pass


def switch(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    return MinimalSwitch, {"is_on": rng.random() < 0.5}


# --- light --------------------------------------------------------------------------------------

COLOR_KEYS = {
    "hs_color": ColorMode.HS,
    "xy_color": ColorMode.XY,
    "rgb_color": ColorMode.RGB,
    "rgbw_color": ColorMode.RGBW,
    "rgbww_color": ColorMode.RGBWW,
    "color_temp_kelvin": ColorMode.COLOR_TEMP,
}
COLOR_VALUES: dict[ColorMode, tuple[str, Any]] = {
    ColorMode.HS: ("hs_color", (30.0, 60.0)),
    ColorMode.XY: ("xy_color", (0.4, 0.35)),
    ColorMode.RGB: ("rgb_color", (255, 120, 10)),
    ColorMode.RGBW: ("rgbw_color", (10, 20, 30, 200)),
    ColorMode.RGBWW: ("rgbww_color", (0, 10, 20, 255, 40)),
    ColorMode.COLOR_TEMP: ("color_temp_kelvin", 3000),
}


class MinimalLight(Minimal, LightEntity):
    async def async_turn_on(self, **kwargs: Any) -> None:
        values: dict[str, Any] = {"is_on": True}
        if "brightness" in kwargs:
            values["brightness"] = kwargs["brightness"]
        for key, mode in COLOR_KEYS.items():
            if key in kwargs:
                values[key] = kwargs[key]
                values["color_mode"] = mode
        if "color_temp_kelvin" in kwargs:  # a bulb goes no warmer or cooler than it can
            kelvin = kwargs["color_temp_kelvin"]
            values["color_temp_kelvin"] = min(
                max(kelvin, self.min_color_temp_kelvin), self.max_color_temp_kelvin
            )
        if "white" in kwargs:
            values["color_mode"] = ColorMode.WHITE
            values["brightness"] = kwargs["white"]
        if "effect" in kwargs:  # a bulb runs only the effects it has
            if kwargs["effect"] not in (*(self.effect_list or ()), "off"):
                raise ServiceValidationError(f"no effect {kwargs['effect']}")
            values["effect"] = kwargs["effect"]
        self.hold(**values)

    async def async_turn_off(self, **kwargs: Any) -> None:
        self.hold(is_on=False)


def light(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    kind = rng.random()
    if kind < 0.15:
        modes = {ColorMode.ONOFF}
    elif kind < 0.3:
        modes = {ColorMode.BRIGHTNESS}
    else:
        modes = set(subset(rng, list(COLOR_VALUES), least=1))
        if modes - {ColorMode.COLOR_TEMP} and rng.random() < 0.2:
            modes.add(ColorMode.WHITE)
    features = flags(rng, LightEntityFeature)
    mode = rng.choice(sorted(modes))
    values: dict[str, Any] = {
        "supported_color_modes": modes,
        "supported_features": features,
        "color_mode": mode,
        "is_on": rng.random() < 0.6,
    }
    if mode != ColorMode.ONOFF:
        values["brightness"] = rng.choice([1, 128, 255] if values["is_on"] else [0, 1, 128, 255])
    if mode in COLOR_VALUES:
        key, value = COLOR_VALUES[mode]
        values[key] = value
    if ColorMode.COLOR_TEMP in modes and rng.random() < 0.5:
        values["min_color_temp_kelvin"], values["max_color_temp_kelvin"] = 2200, 6500
    if features & LightEntityFeature.EFFECT:
        values["effect_list"] = subset(rng, ["off", "colorloop", "rainbow", "candle"], least=1)
        values["effect"] = maybe(rng, values["effect_list"][0])
    return MinimalLight, values


# --- fan ----------------------------------------------------------------------------------------


class MinimalFan(Minimal, FanEntity):
    """A fan that resumes its last speed or preset when turned on without one, and has no
    speed to set without SET_SPEED."""

    _attr_is_on: bool | None = False
    last: tuple[int | None, str | None] = (None, None)

    @property
    def is_on(self) -> bool | None:  # type: ignore[override]
        return self._attr_is_on

    async def async_turn_on(
        self, percentage: int | None = None, preset_mode: str | None = None, **kwargs: Any
    ) -> None:
        if preset_mode is not None:
            await self.async_set_preset_mode(preset_mode)
        elif percentage is not None and self.supported_features & FanEntityFeature.SET_SPEED:
            await self.async_set_percentage(percentage)
        elif not self._attr_is_on:
            speed, preset = self.last
            if preset is not None:
                await self.async_set_preset_mode(preset)
            else:
                await self.async_set_percentage(speed or 67)

    async def async_turn_off(self, **kwargs: Any) -> None:
        if self._attr_is_on:
            self.last = (self._attr_percentage or self.last[0], self._attr_preset_mode)
        self.hold(is_on=False, percentage=0, preset_mode=None)

    async def async_set_percentage(self, percentage: int) -> None:
        if percentage == 0:
            await self.async_turn_off()
        else:
            self.hold(is_on=True, percentage=percentage, preset_mode=None)

    async def async_set_preset_mode(self, preset_mode: str) -> None:
        self.hold(is_on=True, preset_mode=preset_mode, percentage=None)

    async def async_oscillate(self, oscillating: bool) -> None:
        self.hold(oscillating=oscillating)

    async def async_set_direction(self, direction: str) -> None:
        if direction not in ("forward", "reverse"):
            raise ServiceValidationError(f"no direction {direction}")
        self.hold(current_direction=direction)


def fan(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, FanEntityFeature)
    on = rng.random() < 0.5
    values: dict[str, Any] = {"supported_features": features, "is_on": on, "percentage": 0}
    if features & FanEntityFeature.SET_SPEED:
        count = rng.choice([1, 3, 4, 6, 100])
        values["speed_count"] = count
        values["percentage"] = 100 // count * rng.randint(1, count) if on else 0
    else:
        values["percentage"] = 67 if on else 0
    if features & FanEntityFeature.PRESET_MODE:
        values["preset_modes"] = maybe(rng, subset(rng, ["auto", "sleep", "turbo"], 1), 0.8)
        if on and values["preset_modes"] and rng.random() < 0.4:
            values["preset_mode"], values["percentage"] = values["preset_modes"][0], None
    if features & FanEntityFeature.OSCILLATE:
        values["oscillating"] = rng.random() < 0.5
    if features & FanEntityFeature.DIRECTION:
        values["current_direction"] = rng.choice(["forward", "reverse"])
    return MinimalFan, values


# --- cover --------------------------------------------------------------------------------------


class MinimalCover(Minimal, CoverEntity):
    """A cover whose motor gets where it is sent within the call; stopped while it moves, it
    stays where it is (half-way, if it does not know)."""

    def move(self, position: int) -> None:
        values: dict[str, Any] = {"is_closed": position == 0}
        if self._attr_current_cover_position is not None:
            values["current_cover_position"] = position
        self.hold(is_opening=False, is_closing=False, **values)

    async def async_open_cover(self, **kwargs: Any) -> None:
        self.move(100)

    async def async_close_cover(self, **kwargs: Any) -> None:
        self.move(0)

    async def async_set_cover_position(self, **kwargs: Any) -> None:
        self.move(kwargs["position"])

    async def async_stop_cover(self, **kwargs: Any) -> None:
        if self._attr_is_opening or self._attr_is_closing:
            position = self._attr_current_cover_position
            self.move(PART_WAY if position is None else position)
        self.hold()

    async def async_open_cover_tilt(self, **kwargs: Any) -> None:
        self.hold(current_cover_tilt_position=100)

    async def async_close_cover_tilt(self, **kwargs: Any) -> None:
        self.hold(current_cover_tilt_position=0)

    async def async_set_cover_tilt_position(self, **kwargs: Any) -> None:
        self.hold(current_cover_tilt_position=kwargs["tilt_position"])

    async def async_stop_cover_tilt(self, **kwargs: Any) -> None:
        self.hold()


# Where a device that does not know its position stops when stopped mid-way.
PART_WAY = 50
TILT = (
    CoverEntityFeature.OPEN_TILT
    | CoverEntityFeature.CLOSE_TILT
    | CoverEntityFeature.SET_TILT_POSITION
    | CoverEntityFeature.STOP_TILT
)


def cover(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, CoverEntityFeature)
    position = rng.choice([0, 40, 100])
    values: dict[str, Any] = {"supported_features": features, "is_closed": position == 0}
    if rng.random() < 0.2:
        values[rng.choice(["is_opening", "is_closing"])] = True
    if features & CoverEntityFeature.SET_POSITION or rng.random() < 0.2:
        values["current_cover_position"] = position
    if features & TILT:
        values["current_cover_tilt_position"] = rng.choice([0, 50, 100])
    if rng.random() < 0.3:
        values["supported_speeds"] = subset(rng, ["slow", "fast"], 1)
    return MinimalCover, values


# --- climate ------------------------------------------------------------------------------------

CLIMATE_OPTIONS = {
    ClimateEntityFeature.FAN_MODE: ("fan_mode", ["auto", "low", "high"]),
    ClimateEntityFeature.PRESET_MODE: ("preset_mode", ["home", "away", "eco"]),
    ClimateEntityFeature.SWING_MODE: ("swing_mode", ["off", "vertical", "both"]),
    ClimateEntityFeature.SWING_HORIZONTAL_MODE: ("swing_horizontal_mode", ["off", "on"]),
}


DUAL = ClimateEntityFeature.TARGET_TEMPERATURE | ClimateEntityFeature.TARGET_TEMPERATURE_RANGE


class MinimalClimate(Minimal, ClimateEntity):
    """A thermostat that returns to its last mode when turned on."""

    last_mode: HVACMode | None = None

    async def async_set_hvac_mode(self, hvac_mode: HVACMode) -> None:
        if hvac_mode == HVACMode.OFF and self._attr_hvac_mode != HVACMode.OFF:
            self.last_mode = self._attr_hvac_mode
        self.hold(hvac_mode=hvac_mode)

    async def async_set_temperature(self, **kwargs: Any) -> None:
        if (mode := kwargs.get("hvac_mode")) is not None:
            await self.async_set_hvac_mode(mode)
        values = {}
        for key, attr in (
            ("temperature", "target_temperature"),
            ("target_temp_low", "target_temperature_low"),
            ("target_temp_high", "target_temperature_high"),
        ):
            if key in kwargs:
                values[attr] = kwargs[key]
        self.hold(**values)

    async def async_set_humidity(self, humidity: int) -> None:
        self.hold(target_humidity=humidity)

    async def async_set_fan_mode(self, fan_mode: str) -> None:
        self.hold(fan_mode=fan_mode)

    async def async_set_preset_mode(self, preset_mode: str) -> None:
        self.hold(preset_mode=preset_mode)

    async def async_set_swing_mode(self, swing_mode: str) -> None:
        self.hold(swing_mode=swing_mode)

    async def async_set_swing_horizontal_mode(self, swing_horizontal_mode: str) -> None:
        self.hold(swing_horizontal_mode=swing_horizontal_mode)

    async def async_turn_on(self) -> None:
        if self._attr_hvac_mode != HVACMode.OFF:
            return
        if self.last_mode is not None:
            await self.async_set_hvac_mode(self.last_mode)
            return
        try:
            await super().async_turn_on()
        except NotImplementedError:  # HA's default finds no mode: the device has its first
            await self.async_set_hvac_mode(next(m for m in self.hvac_modes if m != HVACMode.OFF))

    async def async_turn_off(self) -> None:
        await self.async_set_hvac_mode(HVACMode.OFF)


def climate(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, ClimateEntityFeature)
    if features & DUAL == DUAL:
        # A thermostat with both kinds of target is a device's own design (ecobee shows the one
        # its mode uses, the demo both); the twin models ecobee's, which no minimal entity does.
        features &= ~rng.choice(list(DUAL))
    modes = [HVACMode.OFF, *subset(rng, [m for m in HVACMode if m != HVACMode.OFF], 1)]
    values: dict[str, Any] = {
        "supported_features": features,
        "temperature_unit": UnitOfTemperature.CELSIUS,
        "hvac_modes": modes,
        "hvac_mode": rng.choice(modes),
        "current_temperature": maybe(rng, 20.5),
        "hvac_action": maybe(rng, rng.choice(["heating", "idle", "off"]), 0.3),
    }
    if rng.random() < 0.5:
        values["min_temp"], values["max_temp"] = 10.0, 30.0
    if rng.random() < 0.3:
        values["target_temperature_step"] = rng.choice([0.5, 1.0])
    if features & ClimateEntityFeature.TARGET_TEMPERATURE:
        values["target_temperature"] = 21.0
    if features & ClimateEntityFeature.TARGET_TEMPERATURE_RANGE:
        values["target_temperature_low"], values["target_temperature_high"] = 18.0, 24.0
    if features & ClimateEntityFeature.TARGET_HUMIDITY:
        values["target_humidity"] = 45
        values["current_humidity"] = maybe(rng, 50)
    for feature, (key, options) in CLIMATE_OPTIONS.items():
        if features & feature:
            chosen = subset(rng, options, 1)
            values[f"{key}s"] = chosen
            values[key] = rng.choice(chosen)
    return MinimalClimate, values


# --- lock ---------------------------------------------------------------------------------------


class MinimalLock(Minimal, LockEntity):
    """A lock that gets where it is sent within the call, out of any jam or motion."""

    def settle(self, locked: bool, opened: bool = False) -> None:
        moving = dict.fromkeys(LOCK_MOTIONS, False)
        self.hold(is_locked=locked, is_open=opened, **moving)

    async def async_lock(self, **kwargs: Any) -> None:
        self.settle(locked=True)

    async def async_unlock(self, **kwargs: Any) -> None:
        self.settle(locked=False)

    async def async_open(self, **kwargs: Any) -> None:
        self.settle(locked=False, opened=True)


LOCK_MOTIONS = ("is_jammed", "is_locking", "is_unlocking", "is_opening")


def lock(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    values = {
        "supported_features": flags(rng, LockEntityFeature),
        "code_format": rng.choice([None, None, r"^\d{4}$", r"^\w+$"]),
        "is_locked": rng.random() < 0.5,
        "is_open": False,
    }
    if rng.random() < 0.25:
        values[rng.choice(LOCK_MOTIONS)] = True
    return MinimalLock, values


# --- media_player -------------------------------------------------------------------------------


class MinimalPlayer(Minimal, MediaPlayerEntity):
    """A player that knows nothing of what it plays: it changes state and holds its settings."""

    def resting(self) -> MediaPlayerState:
        """Where the player rests when on and playing nothing: a screen on its home screen."""
        screen = self._attr_device_class in ("tv", "projector")
        return MediaPlayerState.ON if screen else MediaPlayerState.IDLE

    async def async_turn_on(self) -> None:
        if self._attr_state in (MediaPlayerState.OFF, MediaPlayerState.STANDBY):
            self.hold(state=self.resting())

    async def async_turn_off(self) -> None:
        self.hold(state=MediaPlayerState.OFF)

    async def async_media_play(self) -> None:
        self.hold(state=MediaPlayerState.PLAYING)

    async def async_media_pause(self) -> None:
        if self._attr_state in (MediaPlayerState.PLAYING, MediaPlayerState.BUFFERING):
            self.hold(state=MediaPlayerState.PAUSED)

    async def async_media_stop(self) -> None:
        if self._attr_state in PLAYS:
            self.hold(state=self.resting())

    async def async_media_next_track(self) -> None:
        self.hold()

    async def async_media_previous_track(self) -> None:
        self.hold()

    async def async_set_volume_level(self, volume: float) -> None:
        self.hold(volume_level=volume)

    async def async_mute_volume(self, mute: bool) -> None:
        self.hold(is_volume_muted=mute)

    async def async_select_source(self, source: str) -> None:
        if source not in (self._attr_source_list or ()):
            raise ServiceValidationError(f"no source {source}")
        self.hold(source=source)

    async def async_select_sound_mode(self, sound_mode: str) -> None:
        if sound_mode not in (self._attr_sound_mode_list or ()):
            raise ServiceValidationError(f"no sound mode {sound_mode}")
        self.hold(sound_mode=sound_mode)

    async def async_set_shuffle(self, shuffle: bool) -> None:
        self.hold(shuffle=shuffle)

    async def async_set_repeat(self, repeat: Any) -> None:
        self.hold(repeat=repeat)

    async def async_play_media(self, media_type: str, media_id: str, **kwargs: Any) -> None:
        # Queued media and announcements leave what plays as it is.
        if kwargs.get("announce") or kwargs.get("enqueue") in ("add", "next"):
            return
        self.hold(
            state=MediaPlayerState.PLAYING,
            media_content_type=media_type,
            media_content_id=media_id,
            media_title=None,
            media_artist=None,
        )


PLAYS = (MediaPlayerState.PLAYING, MediaPlayerState.PAUSED, MediaPlayerState.BUFFERING)


def media_player(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, MediaPlayerEntityFeature)
    # Grouping and browsing need more than a minimal player holds.
    features &= ~(
        MediaPlayerEntityFeature.GROUPING
        | MediaPlayerEntityFeature.BROWSE_MEDIA
        | MediaPlayerEntityFeature.MEDIA_ENQUEUE
        | MediaPlayerEntityFeature.SEARCH_MEDIA
    )
    values: dict[str, Any] = {
        "supported_features": features,
        "state": rng.choice(list(MediaPlayerState)),
        "device_class": rng.choice([None, "tv", "speaker", "receiver"]),
    }
    if values["state"] in PLAYS:
        values["media_title"], values["media_artist"] = "Blue in Green", maybe(rng, "Miles Davis")
    if features & MediaPlayerEntityFeature.VOLUME_SET:
        values["volume_level"] = 0.5
    if features & MediaPlayerEntityFeature.VOLUME_MUTE:
        values["is_volume_muted"] = False
    if features & MediaPlayerEntityFeature.SELECT_SOURCE:
        values["source_list"] = subset(rng, ["TV", "Radio", "Cassette"], 1)
        values["source"] = values["source_list"][0]
    if features & MediaPlayerEntityFeature.SELECT_SOUND_MODE:
        values["sound_mode_list"] = subset(rng, ["Music", "Movie", "Concert"], 1)
        values["sound_mode"] = values["sound_mode_list"][0]
    if features & MediaPlayerEntityFeature.SHUFFLE_SET:
        values["shuffle"] = False
    if features & MediaPlayerEntityFeature.REPEAT_SET:
        values["repeat"] = "off"
    return MinimalPlayer, values


# --- vacuum -------------------------------------------------------------------------------------


class MinimalVacuum(Minimal, StateVacuumEntity):
    """A robot: stopping or recalling it at the dock leaves it there; locate only beeps."""

    async def async_start(self) -> None:
        self.hold(activity=VacuumActivity.CLEANING)

    async def async_pause(self) -> None:
        if self._attr_activity == VacuumActivity.CLEANING:
            self.hold(activity=VacuumActivity.PAUSED)

    async def async_stop(self, **kwargs: Any) -> None:
        if self._attr_activity in RUNNING:
            self.hold(activity=VacuumActivity.IDLE)

    async def async_return_to_base(self, **kwargs: Any) -> None:
        if self._attr_activity != VacuumActivity.DOCKED:
            self.hold(activity=VacuumActivity.RETURNING)

    async def async_clean_spot(self, **kwargs: Any) -> None:
        self.hold(activity=VacuumActivity.CLEANING)

    async def async_locate(self, **kwargs: Any) -> None:
        self.hold()

    async def async_set_fan_speed(self, fan_speed: str, **kwargs: Any) -> None:
        if fan_speed not in (self._attr_fan_speed_list or ()):
            raise ServiceValidationError(f"no fan speed {fan_speed}")
        self.hold(fan_speed=fan_speed)

    async def async_send_command(self, command: str, params: Any = None, **kwargs: Any) -> None:
        self.hold()


RUNNING = (VacuumActivity.CLEANING, VacuumActivity.PAUSED, VacuumActivity.RETURNING)


def vacuum(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, VacuumEntityFeature) & ~VacuumEntityFeature.CLEAN_AREA
    values: dict[str, Any] = {
        "supported_features": features,
        "activity": rng.choice(list(VacuumActivity)),
    }
    if features & VacuumEntityFeature.FAN_SPEED:
        values["fan_speed_list"] = subset(rng, ["quiet", "standard", "max"], 1)
        values["fan_speed"] = values["fan_speed_list"][0]
    return MinimalVacuum, values


# --- valve --------------------------------------------------------------------------------------


class MinimalValve(Minimal, ValveEntity):
    """A valve that gets where it is sent within the call, and stops where it is."""

    def move(self, position: int) -> None:
        values: dict[str, Any] = {"is_closed": position == 0}
        if self._attr_reports_position:
            values["current_valve_position"] = position
        self.hold(is_opening=False, is_closing=False, **values)

    async def async_open_valve(self) -> None:
        self.move(100)

    async def async_close_valve(self) -> None:
        self.move(0)

    async def async_set_valve_position(self, position: int) -> None:
        self.move(position)

    async def async_stop_valve(self) -> None:
        if self._attr_is_opening or self._attr_is_closing:
            position = self._attr_current_valve_position
            self.move(PART_WAY if position is None else position)
        self.hold()


def valve(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, ValveEntityFeature)
    reports = bool(features & ValveEntityFeature.SET_POSITION) or rng.random() < 0.3
    position = rng.choice([0, 30, 100]) if reports else rng.choice([0, 100])
    values: dict[str, Any] = {
        "supported_features": features,
        "reports_position": reports,
        "is_closed": position == 0,
    }
    if reports:
        values["current_valve_position"] = position
    if rng.random() < 0.2:
        values[rng.choice(["is_opening", "is_closing"])] = True
        # A valve that reports its position shows is_closed from it; its own is the demo
        # valve's (a moving valve is not closed), the one the twin takes.
        values["is_closed"] &= not reports
    return MinimalValve, values


# --- water_heater -------------------------------------------------------------------------------


class MinimalWaterHeater(Minimal, WaterHeaterEntity):
    """A tank that refuses a target out of its range or a mode it lacks, and returns to its last
    mode when turned on (Home Assistant leaves both to the device)."""

    last_mode: str | None = None

    async def async_set_temperature(self, **kwargs: Any) -> None:
        temperature = kwargs["temperature"]
        if not self.min_temp <= temperature <= self.max_temp:
            raise ServiceValidationError(f"{temperature} is out of range")
        if (mode := kwargs.get("operation_mode")) is not None:
            if mode not in (self._attr_operation_list or ()):
                raise ServiceValidationError(f"no operation mode {mode}")
            await self.async_set_operation_mode(mode)
        self.hold(target_temperature=temperature)

    async def async_set_operation_mode(self, operation_mode: str) -> None:
        if operation_mode == "off" and self._attr_current_operation != "off":
            self.last_mode = self._attr_current_operation
        self.hold(current_operation=operation_mode)

    async def async_turn_away_mode_on(self) -> None:
        self.hold(is_away_mode_on=True)

    async def async_turn_away_mode_off(self) -> None:
        self.hold(is_away_mode_on=False)

    async def async_turn_on(self, **kwargs: Any) -> None:
        if self._attr_current_operation == "off":
            modes = [m for m in self._attr_operation_list or () if m != "off"]
            await self.async_set_operation_mode(self.last_mode or next(iter(modes), "on"))

    async def async_turn_off(self, **kwargs: Any) -> None:
        await self.async_set_operation_mode("off")


def water_heater(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, WaterHeaterEntityFeature)
    # Home Assistant shows operation_list only with OPERATION_MODE: a tank without it says none.
    operations = ["off", *subset(rng, ["eco", "electric", "heat_pump", "performance"], 1)]
    values: dict[str, Any] = {
        "supported_features": features,
        "temperature_unit": UnitOfTemperature.CELSIUS,
        "operation_list": (
            operations if features & WaterHeaterEntityFeature.OPERATION_MODE else None
        ),
        "current_operation": rng.choice(operations),
        "target_temperature": 50.0,
        "current_temperature": maybe(rng, 48.5),
    }
    if rng.random() < 0.5:
        values["min_temp"], values["max_temp"] = 40.0, 65.0
    if features & WaterHeaterEntityFeature.AWAY_MODE:
        values["is_away_mode_on"] = rng.random() < 0.5
    return MinimalWaterHeater, values


# --- humidifier ---------------------------------------------------------------------------------


class MinimalHumidifier(Minimal, HumidifierEntity):
    async def async_turn_on(self, **kwargs: Any) -> None:
        self.hold(is_on=True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        self.hold(is_on=False)

    async def async_set_humidity(self, humidity: int) -> None:
        self.hold(target_humidity=humidity)

    async def async_set_mode(self, mode: str) -> None:
        if mode not in (self._attr_available_modes or ()):
            raise ServiceValidationError(f"no mode {mode}")
        self.hold(mode=mode)


def humidifier(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, HumidifierEntityFeature)
    values: dict[str, Any] = {
        "supported_features": features,
        "is_on": rng.random() < 0.5,
        "target_humidity": maybe(rng, 45, 0.8),
        "current_humidity": maybe(rng, 50),
        "device_class": rng.choice([None, "humidifier", "dehumidifier"]),
        "action": maybe(rng, rng.choice(["humidifying", "drying", "idle"]), 0.3),
    }
    if rng.random() < 0.5:
        values["min_humidity"], values["max_humidity"] = 30, 70
    if features & HumidifierEntityFeature.MODES:
        values["available_modes"] = subset(rng, ["normal", "eco", "boost"], 1)
        values["mode"] = values["available_modes"][0]
    return MinimalHumidifier, values


# --- alarm_control_panel ------------------------------------------------------------------------


class MinimalAlarm(Minimal, AlarmControlPanelEntity):
    """A panel that takes any code (whether a code is right is the panel's business)."""

    async def _go(self, state: AlarmControlPanelState, code: str | None = None) -> None:
        self.hold(alarm_state=state)

    async_alarm_disarm = partialmethod(_go, AlarmControlPanelState.DISARMED)
    async_alarm_arm_home = partialmethod(_go, AlarmControlPanelState.ARMED_HOME)
    async_alarm_arm_away = partialmethod(_go, AlarmControlPanelState.ARMED_AWAY)
    async_alarm_arm_night = partialmethod(_go, AlarmControlPanelState.ARMED_NIGHT)
    async_alarm_arm_vacation = partialmethod(_go, AlarmControlPanelState.ARMED_VACATION)
    async_alarm_arm_custom_bypass = partialmethod(_go, AlarmControlPanelState.ARMED_CUSTOM_BYPASS)
    async_alarm_trigger = partialmethod(_go, AlarmControlPanelState.TRIGGERED)


def alarm_control_panel(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    values = {
        "supported_features": flags(rng, AlarmControlPanelEntityFeature),
        "code_format": rng.choice([None, CodeFormat.NUMBER, CodeFormat.TEXT]),
        "code_arm_required": rng.random() < 0.5,
        "alarm_state": rng.choice(list(AlarmControlPanelState)),
    }
    if rng.random() < 0.3:
        values["changed_by"] = rng.choice(["Keypad", "Anna"])
    return MinimalAlarm, values


# --- button and scene ---------------------------------------------------------------------------


class MinimalButton(Minimal, ButtonEntity):
    """A button whose press does nothing Home Assistant shows but the time of it."""

    async def async_press(self) -> None:
        return None


def button(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    return MinimalButton, {"device_class": rng.choice([None, "restart", "identify", "update"])}


class MinimalScene(Minimal, Scene):
    """A scene whose members are its integration's (no state of them shows in the scene)."""

    async def async_activate(self, **kwargs: Any) -> None:
        return None


def scene(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    return MinimalScene, {}


# --- lawn_mower ---------------------------------------------------------------------------------

MOWER_OUT = (LawnMowerActivity.MOWING, LawnMowerActivity.PAUSED, LawnMowerActivity.RETURNING)


class MinimalMower(Minimal, LawnMowerEntity):
    """A robot that pauses only while mowing, stays docked when sent home from the dock, and
    stops only when out."""

    async def async_start_mowing(self) -> None:
        self.hold(activity=LawnMowerActivity.MOWING)

    async def async_pause(self) -> None:
        if self.activity == LawnMowerActivity.MOWING:
            self.hold(activity=LawnMowerActivity.PAUSED)

    async def async_dock(self) -> None:
        if self.activity != LawnMowerActivity.DOCKED:
            self.hold(activity=LawnMowerActivity.RETURNING)

    async def async_stop(self) -> None:
        if self.activity in MOWER_OUT:
            self.hold(activity=LawnMowerActivity.IDLE)


def lawn_mower(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    return MinimalMower, {
        "supported_features": flags(rng, LawnMowerEntityFeature),
        "activity": rng.choice([None, *LawnMowerActivity]),
    }


# --- number and select --------------------------------------------------------------------------


class MinimalNumber(Minimal, NumberEntity):
    async def async_set_native_value(self, value: float) -> None:
        self.hold(native_value=value)


def number(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    low, high = rng.choice([(0.0, 100.0), (10.0, 60.0), (-5.0, 5.0), (0, 1)])
    values: dict[str, Any] = {
        "native_value": rng.choice([None, low, high, (low + high) / 2]),
    }
    if rng.random() < 0.7:
        values["mode"] = rng.choice(list(NumberMode))
    if rng.random() < 0.8:
        values["native_min_value"], values["native_max_value"] = low, high
    if rng.random() < 0.5:
        values["native_step"] = rng.choice([0.5, 1.0, 5.0])
    if rng.random() < 0.5:
        values["native_unit_of_measurement"] = rng.choice(["mm", "%", "min"])
    return MinimalNumber, values


class MinimalSelect(Minimal, SelectEntity):
    async def async_select_option(self, option: str) -> None:
        self.hold(current_option=option)


def select(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    options = subset(rng, ["Home", "Away", "Party", "always_on", "evening_only"])
    return MinimalSelect, {
        "options": options,
        "current_option": rng.choice([None, *options]),
    }


# --- siren --------------------------------------------------------------------------------------


class MinimalSiren(OnOff, SirenEntity):
    pass


def siren(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    features = flags(rng, SirenEntityFeature)
    values: dict[str, Any] = {"supported_features": features, "is_on": rng.random() < 0.3}
    if features & SirenEntityFeature.TONES:
        values["available_tones"] = rng.choice(
            [["Chime", "Fire alarm"], {1: "Chime", 2: "Fire alarm"}, ["Chime"]]
        )
    return MinimalSiren, values


# --- todo ---------------------------------------------------------------------------------------


class MinimalTodo(Minimal, TodoListEntity):
    """A list that keeps its items in the order made; a new item gets a fresh uid."""

    async def async_create_todo_item(self, item: TodoItem) -> None:
        item.uid = uuid.uuid4().hex
        self.hold(todo_items=[*self.todo_items, item])

    async def async_update_todo_item(self, item: TodoItem) -> None:
        self.hold(todo_items=[item if old.uid == item.uid else old for old in self.todo_items])

    async def async_delete_todo_items(self, uids: list[str]) -> None:
        self.hold(todo_items=[item for item in self.todo_items if item.uid not in uids])


TODO_ITEMS = [
    ("a1", "Milk", TodoItemStatus.NEEDS_ACTION, None, None),
    ("a2", "Eggs", TodoItemStatus.COMPLETED, None, "a dozen"),
    ("a3", "Tea", TodoItemStatus.NEEDS_ACTION, date(2026, 2, 1), None),
    (
        "c1",
        "Vacuum",
        TodoItemStatus.NEEDS_ACTION,
        datetime.fromisoformat("2026-02-01T08:00Z"),
        None,
    ),
    ("c2", "Milk", TodoItemStatus.COMPLETED, None, None),
]


def todo(rng: random.Random) -> tuple[type[Minimal], dict[str, Any]]:
    items = [
        TodoItem(uid=uid, summary=summary, status=status, due=due, description=description)
        for uid, summary, status, due, description in subset(rng, TODO_ITEMS)
    ]
    return MinimalTodo, {
        "supported_features": flags(rng, TodoListEntityFeature),
        "todo_items": items,
    }


# --- helpers and scripts (configured by the user) -----------------------------------------------


def input_boolean(rng: random.Random) -> dict[str, Any]:
    return {"initial": rng.random() < 0.5} if rng.random() < 0.7 else {}


def input_number(rng: random.Random) -> dict[str, Any]:
    low, high = rng.choice([(0, 100), (10, 30), (-5, 5), (0.5, 1.5)])
    config: dict[str, Any] = {"min": low, "max": high, "mode": rng.choice(["box", "slider"])}
    if rng.random() < 0.5:
        config["step"] = rng.choice([0.5, 1, 5])
    if rng.random() < 0.6:
        config["initial"] = rng.choice([low, high])
    if rng.random() < 0.3:
        config["unit_of_measurement"] = rng.choice(["°C", "min"])
    return config


def input_select(rng: random.Random) -> dict[str, Any]:
    options = subset(rng, ["Home", "Away", "Party", "always_on", "evening_only"], least=1)
    config: dict[str, Any] = {"options": options}
    if rng.random() < 0.5:
        config["initial"] = rng.choice(options)
    return config


def script(rng: random.Random) -> dict[str, Any]:
    """A script that finishes at once (the twin's scripts are opaque and end within the call)."""
    config: dict[str, Any] = {
        "sequence": [{"event": "homeflow_shape"}],
        "mode": rng.choice(["single", "restart", "queued", "parallel"]),
    }
    if config["mode"] in ("queued", "parallel") and rng.random() < 0.5:
        config["max"] = rng.choice([2, 3])
    return config


# A domain's shape generator: the minimal entity's class and the values it starts with.
Shape = Callable[[random.Random], tuple[type[Minimal], dict[str, Any]]]
SHAPES: dict[str, Shape] = {
    "climate": climate,
    "cover": cover,
    "fan": fan,
    "humidifier": humidifier,
    "light": light,
    "lock": lock,
    "media_player": media_player,
    "switch": switch,
    "vacuum": vacuum,
    "valve": valve,
    "water_heater": water_heater,
    # Added after the first eleven, so that theirs draw the same random shapes as before.
    "alarm_control_panel": alarm_control_panel,
    "button": button,
    "lawn_mower": lawn_mower,
    "number": number,
    "scene": scene,
    "select": select,
    "siren": siren,
    "todo": todo,
}
# A configured domain's generator: one entity's YAML configuration.
Config = Callable[[random.Random], dict[str, Any]]
CONFIGS: dict[str, Config] = {
    "input_boolean": input_boolean,
    "input_number": input_number,
    "input_select": input_select,
    "script": script,
}

"""The state a made home starts in: what its household has switched on, given the weather, the
time of day and where the people are, and each room's air as those devices have made it.

Device states are set through the home's own services, as a user would set them, so that they are
valid by construction (the domains check ranges and features and derive the attributes). The
rooms are set last, and `home.advance(0)` brings the sensors and readings in line with them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import physics
from ..catalog import load_catalog, slugify
from ..domains import DOMAINS, climate
from ..home import Home
from ..registry import EntityEntry
from ..room import RoomClimate
from ..state import State
from ..weather import city
from .household import Routine, is_home, part_of_day, room_activity

if TYPE_CHECKING:
    from .plan import HomePlan, PlannedDevice, Room

WINDOWLESS = frozenset(
    {"bathroom", "ensuite", "toilet", "walk_in_closet", "hallway", "landing", "laundry",
     "basement", "home_cinema", "garage"}
)  # fmt: skip
MAIN_LIGHTS = frozenset({"Ceiling Light", "Light", "Chandelier"})
HEAT_BELOW = 19.5  # °C indoors (before heating), with the outdoors below HEATING_SEASON
HEATING_SEASON = 16.0
COOL_ABOVE = 25.5  # °C indoors (before cooling), with the outdoors above COOLING_SEASON
COOLING_SEASON = 22.0
COLORS = ((255, 147, 41), (255, 80, 80), (120, 80, 255), (60, 200, 255), (90, 255, 120))


def set_initial_state(home: Home, plan: HomePlan, routine: Routine, rng: random.Random) -> None:
    """Set the devices of `plan`, just installed in `home`, then its rooms' air and readings."""
    _InitialState(home, plan, routine, rng).settle()


class _Comfort(NamedTuple):
    """What a room's heating or cooling is asked for, and the setpoints it would run at."""

    heat: bool
    cool: bool
    present: bool
    sleeping: bool
    heat_point: float
    cool_point: float


class _InitialState:
    """Where the household is and what it has switched on, applied through the home's services."""

    def __init__(self, home: Home, plan: HomePlan, routine: Routine, rng: random.Random) -> None:
        self.home = home
        self.plan = plan
        self.routine = routine
        self.rng = rng
        self.outdoor = outdoor = home.weather.at(home.now)
        offset = timedelta(hours=city(plan.city).utc_offset)
        local = datetime.fromtimestamp(home.now, UTC) + offset
        self.hour = local.hour + local.minute / 60
        self.phase = part_of_day(self.hour)
        sun, clouds = outdoor.sun_elevation, outdoor.cloud_cover
        self.dark = sun < 3 or (sun < 10 and clouds > 0.8)
        self.wet = outdoor.humidity >= 90 and clouds >= 0.8
        self.hot_sun = outdoor.temperature >= 26 and sun >= 20 and clouds < 0.5
        self.at_home = is_home(routine, self.phase, local.weekday() >= 5, rng)
        # Indoors lies between the outdoors and the comfort band; how far depends on the walls.
        outside = outdoor.temperature
        band = min(max(outside, 20.0), 24.0)
        self.indoor = band + (outside - band) * rng.uniform(0.15, 0.4)
        self.activity: dict[str, str] = {}
        self.temperature: dict[str, float] = {}
        self.humidity: dict[str, float] = {}
        for room in plan.rooms:
            area_id = room.area.area_id
            activity = self._activity(room)
            self.activity[area_id] = activity
            people = 0.0 if activity == "empty" else 0.5
            temperature = outside if room.outdoor else self.indoor + people + rng.uniform(-0.6, 0.6)
            self.temperature[area_id] = temperature
            self.humidity[area_id] = _relative_humidity(outdoor.humidity, outside, temperature)
        self.tv_on: set[str] = set()
        # Each area's entities with their device type, and the whole-home thermostats.
        self.entities: dict[str, list[tuple[EntityEntry, str]]] = {}
        self.central: list[EntityEntry] = []

    def _activity(self, room: Room) -> str:
        """awake, asleep or empty: who is in the room now."""
        if not self.at_home:
            return "empty"
        return room_activity(self.routine, room.kind, self.phase, self.hour, self.rng)

    # --- deciding ------------------------------------------------------------------------------

    def settle(self) -> None:
        """Set every device's state, then the rooms' air and the readings."""
        catalog = load_catalog()
        rooms = {room.area.area_id: room for room in self.plan.rooms}
        deciders = {
            "light": self._light,
            "fan": self._fan,
            "climate": self._climate,
            "cover": self._cover,
            "lock": self._lock,
            "media_player": self._media,
            "vacuum": self._vacuum,
            "water_heater": self._water_heater,
            "valve": self._valve,
            "humidifier": self._humidifier,
            "switch": self._switch,
            "alarm_control_panel": self._alarm,
            "lawn_mower": self._mower,
        }
        for device in self.plan.devices:
            slug = slugify(device.name)
            room = rooms[device.area_id]
            for spec in catalog[device.device_type].entities:
                entry = self.home.entities[f"{spec.domain}.{spec.object_id(slug)}"]
                self.entities.setdefault(device.area_id, []).append((entry, device.device_type))
                if (
                    physics.type_physics(device.device_type).role == "whole_home"
                    and spec.domain == "climate"
                ):
                    self.central.append(entry)
                decide = deciders.get(spec.domain)
                if decide is not None:
                    decide(entry, device, room)
        self._set_rooms()
        self.home.advance(0)

    def _call(self, entry: EntityEntry, service: str, data: dict[str, Any] | None = None) -> None:
        """Set a state as a user would: through the entity's own service."""
        self.home.call_service(entry.domain, service, data, {"entity_id": entry.entity_id})

    def _light(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """On at its level, warm in the evening and cool by day, sometimes in colour."""
        brightness = self._light_level(device.label, room)
        if brightness is None:
            return
        modes = entry.capabilities.get("supported_color_modes") or ()
        data: dict[str, Any] = {}
        if list(modes) != ["onoff"]:
            data["brightness_pct"] = brightness
        if "color_temp" in modes:
            warm = self.phase in ("evening", "night")
            kelvin = self.rng.choice((2200, 2400, 2700, 3000) if warm else (3500, 4000, 5000))
            low = entry.capabilities.get("min_color_temp_kelvin", kelvin)
            high = entry.capabilities.get("max_color_temp_kelvin", kelvin)
            data["color_temp_kelvin"] = min(max(kelvin, low), high)
        elif set(modes) & {"hs", "xy", "rgb", "rgbw", "rgbww"} and self.rng.random() < 0.4:
            data["rgb_color"] = self.rng.choice(COLORS)
        self._call(entry, "turn_on", data)

    def _light_level(self, label: str, room: Room) -> int | None:
        """The brightness (%) a light is on at, or None when it is off."""
        rng, phase = self.rng, self.phase
        activity = self.activity[room.area.area_id]
        if room.outdoor or label == "Porch Light":
            chance = {"evening": 0.5, "night": 0.2, "morning": 0.15}.get(phase, 0.0)
            chance = chance if self.dark else 0.0
        elif activity == "asleep":
            chance = 0.5 if label == "Night Light" else 0.0
        elif activity == "awake":
            if self.dark:
                chance = 0.85 if label in MAIN_LIGHTS else 0.55
            else:
                chance = 0.6 if room.kind in WINDOWLESS else 0.06
        else:
            chance = 0.04 if self.dark else 0.01
        if rng.random() >= chance:
            return None
        if activity == "asleep" or phase == "night":
            return rng.choice((5, 10, 20, 30))
        if phase == "evening":
            return rng.choice((40, 50, 60, 70, 80, 100))
        return rng.choice((60, 80, 100))

    def _fan(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Purifiers where people are, exhaust fans after a shower, fans in warm occupied rooms."""
        rng = self.rng
        activity = self.activity[room.area.area_id]
        role = physics.type_physics(device.device_type).role
        if role == "purifier":
            chance = 0.15 if activity == "empty" else 0.4
            if rng.random() < chance:
                if activity == "asleep":
                    self._call(entry, "turn_on", {"preset_mode": "sleep"})
                elif rng.random() < 0.5:
                    self._call(entry, "turn_on", {"preset_mode": "auto"})
                else:
                    self._call(entry, "turn_on", {"percentage": rng.choice((33, 67, 100))})
            return
        if role == "exhaust":
            chance = 0.5 if self.phase == "morning" else 0.15
            if activity == "awake" and rng.random() < chance:
                self._call(entry, "turn_on")
            return
        warm = COOL_ABOVE - (1.0 if device.device_type == "ceiling_fan_with_light" else 0.0)
        if activity == "empty" or self.temperature[room.area.area_id] < warm:
            return
        if rng.random() < (0.5 if activity == "asleep" else 0.7):
            step = float(entry.capabilities.get("percentage_step") or 25.0)
            speeds = max(1, round(100 / step))
            self._call(entry, "turn_on", {"percentage": round(step * rng.randint(1, speeds))})
            if _has(entry, "oscillate") and rng.random() < 0.5:
                self._call(entry, "oscillate", {"oscillating": True})

    def _climate(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Heat on cold days and cool on hot ones, at 19-24 °C; radiators heat through winter."""
        comfort = self._comfort(device.device_type, room.area.area_id)
        if device.device_type == "smart_thermostat":
            self._thermostat(entry, comfort)
        elif device.device_type == "radiator_thermostat":
            self._radiator(entry, comfort)
        else:
            self._air_conditioner(entry, device.device_type, room.area.area_id, comfort)

    def _comfort(self, device_type: str, area_id: str) -> _Comfort:
        """Heat or cool by the indoors and the season; a thermostat minds the whole home."""
        rng = self.rng
        activity = self.activity[area_id]
        outside = self.outdoor.temperature
        sleeping = activity == "asleep" or self.phase == "night"
        if physics.type_physics(device_type).role == "whole_home":
            indoor = self.indoor
            present = self.at_home
        else:
            indoor = self.temperature[area_id]
            present = activity != "empty"
        heat = indoor < HEAT_BELOW and outside < HEATING_SEASON
        cool = indoor > COOL_ABOVE and outside > COOLING_SEASON
        heat_point = rng.uniform(19.0, 20.0) if sleeping or not present else rng.uniform(20, 22)
        cool_point = rng.uniform(22.0, 24.0)
        return _Comfort(heat, cool, present, sleeping, heat_point, cool_point)

    def _thermostat(self, entry: EntityEntry, comfort: _Comfort) -> None:
        """Heat or cool as needed, else off or a wide auto band; away or sleep presets."""
        rng = self.rng
        if comfort.heat:
            self._set_target(entry, "heat", comfort.heat_point)
        elif comfort.cool:
            self._set_target(entry, "cool", comfort.cool_point if comfort.present else 24.0)
        elif rng.random() < 0.35:
            self._call(entry, "set_hvac_mode", {"hvac_mode": "off"})
        else:
            low = _on_step(rng.uniform(19.0, 20.5), entry.capabilities)
            high = _on_step(rng.uniform(23.5, 24.0), entry.capabilities)
            self._call(entry, "set_temperature", {"target_temp_low": low, "target_temp_high": high})
        if not self.at_home and rng.random() < 0.7:
            self._call(entry, "set_preset_mode", {"preset_mode": "away"})
        elif comfort.sleeping and rng.random() < 0.5:
            self._call(entry, "set_preset_mode", {"preset_mode": "sleep"})

    def _radiator(self, entry: EntityEntry, comfort: _Comfort) -> None:
        """Radiator valves heat through the cold months, and many are simply left on."""
        if comfort.heat or self.outdoor.temperature < 14 or self.rng.random() > 0.8:
            self._set_target(entry, "heat", comfort.heat_point)
        else:
            self._call(entry, "set_hvac_mode", {"hvac_mode": "off"})

    def _air_conditioner(
        self, entry: EntityEntry, device_type: str, area_id: str, comfort: _Comfort
    ) -> None:
        """Cool, heat or dry when the room needs it and someone runs it; fan and swing now and
        then."""
        rng = self.rng
        caps = entry.capabilities
        modes = caps.get("hvac_modes") or ()
        mode = self._air_conditioner_mode(device_type, modes, comfort, area_id)
        if mode is None:
            if self.home.states[entry.entity_id].state != "off":
                self._call(entry, "set_hvac_mode", {"hvac_mode": "off"})
            return
        if mode == "dry":
            self._call(entry, "set_hvac_mode", {"hvac_mode": "dry"})
        else:
            temperature = comfort.heat_point if mode == "heat" else comfort.cool_point
            self._set_target(entry, mode, temperature)
        for key, options in (("fan_mode", "fan_modes"), ("swing_mode", "swing_modes")):
            if caps.get(options) and _has(entry, key) and rng.random() < 0.3:
                self._call(entry, f"set_{key}", {key: rng.choice(caps[options])})

    def _air_conditioner_mode(
        self, device_type: str, modes: Iterable[str], comfort: _Comfort, area_id: str
    ) -> str | None:
        """cool, heat or dry when the room needs it and someone runs it; None: off."""
        modes = tuple(modes)
        chance = self.rng.random()
        running = 0.8 if comfort.present else 0.3
        if comfort.cool and "cool" in modes and chance < running:
            return "cool"
        heats = running * (0.75 if device_type == "heat_pump" else 0.5)
        if comfort.heat and "heat" in modes and chance < heats:
            return "heat"
        if self.humidity[area_id] > 68 and "dry" in modes and comfort.present and chance < 0.15:
            return "dry"
        return None

    def _set_target(self, entry: EntityEntry, mode: str, temperature: float) -> None:
        """Run in `mode` at `temperature`, on the device's step."""
        data = {"temperature": _on_step(temperature, entry.capabilities), "hvac_mode": mode}
        self._call(entry, "set_temperature", data)

    def _cover(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Shades by sun and sleep, windows open only on mild dry days, garage doors shut."""
        rng = self.rng
        kind = entry.device_class
        if kind == "garage":
            if self.at_home and not self.dark and rng.random() < 0.08:
                self._call(entry, "open_cover")
            return
        if kind == "window":
            mild = 16 <= self.outdoor.temperature <= 27 and not self.wet
            if mild and self.at_home and self.phase != "night" and rng.random() < 0.35:
                self._call(entry, "set_cover_position", {"position": rng.randint(2, 6) * 10})
            return
        position = self._shade_position(room)
        current = self.home.states[entry.entity_id].attributes.get("current_position")
        if position != current:
            if position == 0:
                self._call(entry, "close_cover")
            elif position == 100:
                self._call(entry, "open_cover")
            else:
                self._call(entry, "set_cover_position", {"position": position})
        if _has(entry, "set_tilt_position") and position and self.hot_sun and rng.random() < 0.6:
            self._call(entry, "set_cover_tilt_position", {"tilt_position": rng.randint(2, 5) * 10})

    def _shade_position(self, room: Room) -> int:
        """How far a blind, shade or curtain is open: closed at night and over sleepers,
        part-closed against a hot afternoon sun, open otherwise."""
        rng = self.rng
        chance = rng.random()
        if self.outdoor.sun_elevation < -2:
            return 0 if chance < 0.85 else 100
        if self.activity[room.area.area_id] == "asleep":
            return 0 if chance < 0.75 else 100
        if self.hot_sun and 11 <= self.hour < 19 and chance < 0.7:
            return rng.randint(1, 5) * 10
        if not self.at_home and chance < 0.25:
            return 0
        return 100 if chance < 0.85 else rng.randint(4, 8) * 10

    def _lock(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Locked at night and while away; the front door is often unlocked by day."""
        chance = 0.35 if device.label == "Front Door Lock" else 0.1
        if self.at_home and self.phase != "night" and self.rng.random() < chance:
            data = {"code": f"{self.rng.randrange(10000):04d}"}
            self._call(entry, "unlock", data if "code_format" in entry.capabilities else {})

    def _alarm(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Armed away while nobody is home, and mostly armed for the night; else disarmed."""
        data = {"code": f"{self.rng.randrange(10000):04d}"}
        if not self.at_home and self.rng.random() < 0.8:
            self._call(entry, "alarm_arm_away", data)
        elif self.phase == "night" and self.rng.random() < 0.6:
            mode = "alarm_arm_night" if _has(entry, "arm_night") else "alarm_arm_home"
            self._call(entry, mode, data)

    def _mower(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Docked, except some dry, mild days, when it is out mowing."""
        mild = 8 <= self.hour < 20 and self.outdoor.temperature >= 10 and not self.wet
        if mild and self.rng.random() < 0.3:
            self._call(entry, "start_mowing")

    def _media(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """TVs on some evenings (their soundbar and streaming box with them), music now and then."""
        area_id = room.area.area_id
        awake = self.activity[area_id] == "awake"
        if device.device_type == "smart_tv":
            if awake and self.rng.random() < self.routine.tv_on[self.phase].get(room.kind, 0.0):
                self._watch_tv(entry, area_id)
        elif device.device_type in ("soundbar", "streaming_box"):
            if area_id in self.tv_on and self.rng.random() < 0.6:
                self._join_tv(entry)
        elif awake and self.phase != "night" and self.rng.random() < 0.2:
            self._call(entry, "volume_set", {"volume_level": self.rng.randint(15, 50) / 100})
            self._call(entry, "media_play")

    def _watch_tv(self, entry: EntityEntry, area_id: str) -> None:
        """Turn a TV on, on one of its sources, and sometimes play."""
        rng = self.rng
        self.tv_on.add(area_id)
        self._call(entry, "turn_on")
        self._call(
            entry, "select_source", {"source": rng.choice(entry.capabilities["source_list"])}
        )
        self._call(entry, "volume_set", {"volume_level": rng.randint(10, 40) / 100})
        if rng.random() < 0.5:
            self._call(entry, "media_play")

    def _join_tv(self, entry: EntityEntry) -> None:
        """Turn a soundbar or streaming box on with the TV of its room, on its TV input."""
        rng = self.rng
        caps = entry.capabilities
        self._call(entry, "turn_on")
        sources = caps["source_list"]
        source = "TV" if "TV" in sources else rng.choice(sources)
        self._call(entry, "select_source", {"source": source})
        if "sound_mode_list" in caps:
            mode = rng.choice(caps["sound_mode_list"])
            self._call(entry, "select_sound_mode", {"sound_mode": mode})
        if _has(entry, "volume_set"):
            self._call(entry, "volume_set", {"volume_level": rng.randint(15, 50) / 100})
        if _has(entry, "play_media") and rng.random() < 0.7:
            self._call(entry, "media_play")

    def _vacuum(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Docked, except some mornings and days, mostly while nobody is home."""
        rng = self.rng
        chance = 0.06 if self.at_home else 0.35
        if self.phase in ("morning", "day") and rng.random() < chance:
            self._call(entry, "start")
            speeds = entry.capabilities.get("fan_speed_list")
            if speeds and rng.random() < 0.3:
                self._call(entry, "set_fan_speed", {"fan_speed": rng.choice(speeds)})

    def _water_heater(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """Eco by default; away mode while away, high demand some mornings."""
        rng = self.rng
        caps = entry.capabilities
        operations = [op for op in caps.get("operation_list") or () if op not in ("off", "eco")]
        chance = rng.random()
        if not self.at_home and self.phase == "day" and chance < 0.25:
            self._call(entry, "set_away_mode", {"away_mode": True})
        elif self.phase == "morning" and "high_demand" in operations and chance < 0.4:
            self._call(entry, "set_operation_mode", {"operation_mode": "high_demand"})
        elif operations and chance < 0.45:
            self._call(entry, "set_operation_mode", {"operation_mode": rng.choice(operations)})
        if rng.random() < 0.3:
            self._call(
                entry, "set_temperature", {"temperature": _on_step(rng.uniform(50, 60), caps)}
            )

    def _valve(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """The water main stays open; irrigation runs some dry mornings and evenings."""
        if device.device_type != "irrigation_valve":
            return
        watering = 5 <= self.hour < 8 or 19 <= self.hour < 22
        if watering and self.outdoor.temperature >= 12 and not self.wet and self.rng.random() < 0.4:
            self._call(entry, "open_valve")

    def _humidifier(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """On when the room is too dry (humidifier) or too damp (dehumidifier)."""
        rng = self.rng
        caps = entry.capabilities
        area_id = room.area.area_id
        humidity = self.humidity[area_id]
        dries = entry.device_class == "dehumidifier"
        needed = humidity > 60 if dries else humidity < 35
        if not needed or rng.random() >= (0.6 if dries else 0.7):
            return
        self._call(entry, "turn_on")
        target = 50 if dries else rng.choice((45, 50))
        low, high = caps.get("min_humidity", 0), caps.get("max_humidity", 100)
        self._call(entry, "set_humidity", {"humidity": min(max(target, low), high)})
        modes = caps.get("available_modes") or ()
        if "sleep" in modes and self.activity[area_id] == "asleep":
            self._call(entry, "set_mode", {"mode": "sleep"})

    def _switch(self, entry: EntityEntry, device: PlannedDevice, room: Room) -> None:
        """On by what it powers (see _switch_chance)."""
        if self.rng.random() < self._switch_chance(device.label, room):
            self._call(entry, "turn_on")

    def _switch_chance(self, label: str, room: Room) -> float:
        """How likely a plug or switch is on, by what it powers."""
        phase, home = self.phase, self.at_home
        awake = self.activity[room.area.area_id] == "awake"
        chances = {
            "Freezer Plug": 0.97,
            "Washing Machine Plug": 0.85,
            "Dryer Plug": 0.8,
            "Coffee Machine Plug": 0.6 if phase == "morning" and home else 0.1,
            "Kettle Plug": 0.15 if awake else 0.0,
            "Charger Plug": 0.5 if phase in ("evening", "night") else 0.2,
            "String Lights": 0.45 if self.dark and home and phase == "evening" else 0.02,
            "Heater Plug": 0.3 if self.outdoor.temperature < 14 and awake else 0.0,
            "Fountain Plug": 0.5 if not self.dark and self.outdoor.temperature > 10 else 0.0,
            "Monitor Plug": 0.85 if awake else 0.1,
            "Light Switch": 0.55 if self.dark and home and phase != "night" else 0.02,
        }
        return chances.get(label, 0.35)

    # --- the rooms -----------------------------------------------------------------------------

    def _set_rooms(self) -> None:
        """Each area's air and light as the devices now set have made it."""
        daylight = _daylight(self.outdoor.sun_elevation, self.outdoor.cloud_cover)
        for room in self.plan.rooms:
            self.home.rooms[room.area.area_id] = self._room_climate(room, daylight)

    def _room_climate(self, room: Room, daylight: float) -> RoomClimate:
        """Warmer or cooler towards the running heating or cooling, drier or wetter towards
        (de)humidifiers, lit by daylight through the shades and by the lamps that are on."""
        area_id = room.area.area_id
        entities = self.entities.get(area_id, [])
        effects = _device_effects(self.home.states, entities)
        lamps = physics.LIGHT_UTILISATION / physics.ROOM_AREA_M2 * effects.lumens
        if room.outdoor:
            outdoor = self.outdoor
            return RoomClimate(
                round(outdoor.temperature, 2),
                round(outdoor.humidity, 1),
                round(daylight + lamps, 1),
                physics.OUTDOOR_CO2,
                physics.OUTDOOR_PM25,
            )
        start = self.temperature[area_id]
        temperature = self._conditioned(entities, start)
        humidity = _relative_humidity(self.humidity[area_id], start, temperature)
        for state, dries in effects.humidifiers:
            target = state.attributes.get("humidity", humidity)
            humidity = target + self.rng.uniform(0, 8) * (1 if dries else -1)
        share = physics.SHADED_DAYLIGHT + (1 - physics.SHADED_DAYLIGHT) * effects.shade
        illuminance = lamps + daylight * physics.DAYLIGHT_FACTOR * share
        co2, pm25 = self._air_quality(room, effects)
        return RoomClimate(
            round(temperature, 2),
            round(min(max(humidity, 15.0), 95.0), 1),
            round(illuminance, 1),
            round(co2),
            round(pm25, 1),
        )

    def _conditioned(
        self, entities: Sequence[tuple[EntityEntry, str]], temperature: float
    ) -> float:
        """An indoor temperature after the room's own heating or cooling, else the home's
        thermostats (as the room physics has it), have run a while."""
        states = self.home.states
        climates = [entry for entry, _ in entities if entry.domain == "climate"]
        for entry in climates or self.central:
            temperature = _towards_target(states[entry.entity_id], temperature, self.rng)
        return temperature

    def _air_quality(self, room: Room, effects: _DeviceEffects) -> tuple[float, float]:
        """CO2 (ppm) and PM2.5 (µg/m³): stuffier where people are, cleaner where air moves."""
        rng = self.rng
        activity = self.activity[room.area.area_id]
        if effects.window_open:
            co2 = physics.OUTDOOR_CO2 + rng.uniform(0, 80)
        elif activity == "asleep":
            co2 = rng.uniform(750, 1300)
        elif activity == "awake":
            co2 = rng.uniform(550, 950)
        else:
            co2 = rng.uniform(430, 600)
        pm25 = rng.uniform(2, 5) if effects.purifying else rng.uniform(3, 12)
        if room.kind in ("kitchen", "kitchenette") and activity == "awake":
            pm25 += rng.uniform(5, 25)
        return co2, pm25


@dataclass(slots=True)
class _DeviceEffects:
    """What an area's devices, as they are set now, do to its air and light."""

    lumens: float = 0.0
    shade: float = 1.0  # the mean open share of its blinds, shades and curtains
    window_open: bool = False
    purifying: bool = False
    humidifiers: list[tuple[State, bool]] = field(default_factory=list)  # (state, dries)


def _device_effects(
    states: Mapping[str, State], entities: Sequence[tuple[EntityEntry, str]]
) -> _DeviceEffects:
    """What an area's lights, shades, windows, (de)humidifiers and purifiers do, as set now."""
    effects = _DeviceEffects()
    shades, shaded = 0.0, 0
    for entry, device_type in entities:
        state = states[entry.entity_id]
        if entry.domain == "light" and state.state == "on":
            brightness = state.attributes.get("brightness") or 255
            full = physics.full_lumens(physics.type_physics(device_type))
            effects.lumens += full * brightness / 255
        elif entry.domain == "cover" and entry.device_class in physics.SHADING_CLASSES:
            shades += state.attributes.get("current_position", 100) / 100
            shaded += 1
        elif entry.domain == "cover" and entry.device_class == "window":
            effects.window_open = effects.window_open or state.state == "open"
        elif entry.domain == "humidifier" and state.state == "on":
            effects.humidifiers.append((state, entry.device_class == "dehumidifier"))
        elif physics.type_physics(device_type).role == "purifier" and state.state == "on":
            effects.purifying = True
    if shaded:
        effects.shade = shades / shaded
    return effects


def _has(entry: EntityEntry, feature: str) -> bool:
    """Whether the entity has its domain's feature of that name."""
    flag = DOMAINS[entry.domain].features.get(feature, 0)
    return bool(flag) and entry.supported_features & flag == flag


def _on_step(value: float, caps: Mapping[str, Any]) -> float:
    """A target temperature on the device's step, within its min and max."""
    step = float(caps.get("target_temp_step") or 0.5)
    value = round(value / step) * step
    low, high = float(caps.get("min_temp", value)), float(caps.get("max_temp", value))
    return round(min(max(value, low), high), 1)


def _towards_target(state: State, temperature: float, rng: random.Random) -> float:
    """The room temperature after heating or cooling has run a while towards its target."""
    attributes = state.attributes
    low = attributes.get("target_temp_low") or attributes.get("temperature")
    high = attributes.get("target_temp_high") or attributes.get("temperature")
    if low is None or high is None:
        return temperature
    mode = state.state
    left = rng.uniform(0.0, 0.4)
    if mode in climate.HEATING_MODES and temperature < low:
        return float(low - (low - temperature) * left)
    if mode in climate.COOLING_MODES and temperature > high:
        return float(high + (temperature - high) * left)
    return temperature


def _relative_humidity(humidity: float, was: float, now: float) -> float:
    """Relative humidity after air at `was` °C warms or cools to `now` °C, keeping its water."""
    return humidity * physics.saturation_vapour(was) / physics.saturation_vapour(now)


def _daylight(elevation: float, clouds: float) -> float:
    """Outdoor daylight, lx, as the physics reckons it."""
    if elevation <= 0:
        return 0.0
    return 100000.0 * math.sin(math.radians(elevation)) * (1.0 - 0.75 * clouds)

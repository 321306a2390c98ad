"""The room physics: each area's air on the simulation clock, moved by the weather and the devices.

Every area is one well-mixed room of ROOM_AREA_M2 (volume V = ROOM_VOLUME_M3) with a window, a
constant OCCUPANTS people on average (no schedule yet), and the devices in it. An outdoor area
(a garden, balcony or terrace: `Area.outdoor`) is no room: its air is the outdoor air, at the
weather's temperature and humidity, OUTDOOR_CO2 and OUTDOOR_PM25, in full daylight, and its
devices do not change it (lamps still light it). Time runs in equal steps of at most `step`
seconds; within a step what the devices do is fixed and the outdoor conditions are those at the
step's start. Each linear relaxation is stepped exactly, x <- x_eq + (x - x_eq) e^(-k dt), so no
step size makes it overshoot or oscillate.

Ventilation, in air changes per hour:
    n = INFILTRATION_ACH + WINDOW_ACH * sum(window openings) + EXHAUST_M3_H / V * (exhaust fans on)
where a window's opening is its cover's position / 100 (device class window) and an exhaust fan is
a fan entity of a device type with the physics role exhaust.

Temperature T (°C), towards the outdoor T_o:
    dT/dt = k (T_o - T) + W (P_people + P_lights + P_sun)
    k = (1 + FAN_MIXING * m) / INSULATION_HOURS + VENTILATION_HEAT_SHARE * n
    W = 1 / ROOM_HEAT_CAPACITY_WH_PER_K                          (K/h per watt)
    INSULATION_HOURS = ROOM_HEAT_CAPACITY_WH_PER_K / ENVELOPE_CONDUCTANCE_W_PER_K
    VENTILATION_HEAT_SHARE = AIR_HEAT_WH_PER_M3_K * V / ROOM_HEAT_CAPACITY_WH_PER_K
    P_sun = SUN_APERTURE_M2 * s_heat * I,  I = 1000 sin(h) (1 - 0.75 c^3.4) W/m² (0 at night)
with m the running fans' speeds summed (0..1 each, at most 1 in all; a climate entity in fan_only
counts as a fan at full speed), h the sun's elevation, c the cloud
cover, lights' watts = lumens / LUMENS_PER_WATT, and s_heat = SHADED_SUN_HEAT + (1 -
SHADED_SUN_HEAT) f for the open fraction f of the area's blinds, shades, curtains and shutters
(1 without any). The figure aimed for: with the windows shut (n = INFILTRATION_ACH, no fan) the
room's time constant 1/k is about 60 hours, so from 20 °C with 0 °C outdoors an unheated room
loses some 5.5 °C in its first day (6.5 °C towards the outdoors, less what its occupants give)
and settles W P_people / k, about 2.7 °C, above the outdoors; a wide-open window brings 1/k down
to about 9 hours.

Then each climate entity that conditions the room and heats (heat, heat_cool, auto, below its
target or range) or cools (cool, heat_cool, auto, above it) moves T towards its target by at most
its capacity * dt and never past it. A climate entity conditions its own area. A whole-home
thermostat (physics role whole_home: central heating or cooling, with a radiator or vent in
every room) also conditions, at its full capacity in each, every indoor area whose radiator no
radiator thermostat of its own governs (role room_valve): such an area is served by the whole-home
thermostats on its floor (a zone per floor), or by all of the home's when its floor has none or it
has no floor (one zone). A room's own split AC, portable AC or heat pump works beside them (each
moves the room towards its own target, never past it), so a room whose AC is off is still heated
by the central heating; a room with a radiator thermostat is left to it. The
thermostat's own current_temperature and hvac_action still read only its own area. The capacity,
in °C/h, is the entity's `capacity` capability when it has one, else its device type's physics
`capacity`, else DEFAULT_CAPACITY.

Humidity, as absolute humidity a (g/m³) so that it follows temperature; relative humidity is
    RH = 100 a / a_s(T),  a_s(T) = 216.7 e_s(T) / (273.15 + T),
    e_s(T) = 6.112 exp(17.62 T / (243.12 + T)) hPa                 (Magnus)
    da/dt = n (a_o - a) + OCCUPANTS * PERSON_MOISTURE_G_H / V
then humidifiers (HUMIDIFIER_G_H) and dehumidifiers (DEHUMIDIFIER_G_H) that are on move a
towards their target humidity at that rate, an air conditioner in dry mode dries towards its
target humidity (DRY_MODE_TARGET without one) at DEHUMIDIFIER_G_H, and one that cools removes
AC_DRYING_G_H in proportion to the share of its capacity it used, never below AC_DRY_FLOOR % RH.
Above saturation the water condenses: a <= a_s(T).

CO2 (ppm): dC/dt = n (OUTDOOR_CO2 - C) + OCCUPANTS * PERSON_CO2_M3_H / V * 1e6.
PM2.5 (µg/m³): dP/dt = n (OUTDOOR_PM25 - P) - (PM25_DEPOSITION + r) P, where air purifiers (fan
entities of a device type with the physics role purifier) clean r = PURIFIER_CADR_M3_H / V * speed.

Illuminance (lx), at the end of each advance: daylight plus lamps,
    E = DAYLIGHT_FACTOR * 100000 sin(h) (1 - 0.75 c) * s_light
        + LIGHT_UTILISATION / ROOM_AREA_M2 * sum(lumens * brightness / 255)
with s_light = SHADED_DAYLIGHT + (1 - SHADED_DAYLIGHT) f and lumens the device type's physics
`lumens` (DEFAULT_LUMENS otherwise). An outdoor area has all the daylight: DAYLIGHT_FACTOR *
s_light is 1.

Devices with a clock: a water heater that is on heats its tank towards its target at
WATER_HEATING_K_H (by operation mode) and the tank loses heat to the room with a time constant of
TANK_LOSS_HOURS (its exact temperature lives in `hidden`); a robot vacuum `returning` docks
DOCKING_SECONDS after it set off (Home Assistant's demo vacuum) and one `cleaning` heads home
CLEANING_CYCLE_SECONDS after it started or resumed (a real robot's run; the demo cleans on), and
a robot lawn mower `returning` docks after DOCKING_SECONDS too (it mows on until sent home); a
cover `opening` or `closing` travels to fully open or closed at COVER_PERCENT_PER_SECOND (the demo
cover), and a valve gets there VALVE_SECONDS after it set off (the demo valve). These changes
happen at their moment: the physics runs up to it, the state changes then, and the physics runs on.

A weather entity that follows the outdoor weather (`hidden["follows_outdoor"]`, as HomeMaker's
does) shows the weather's conditions whenever the readings are written (twin.domains.weather).

A device type's physics parameters (lumens, capacity, role) are declared in its YAML
(`twin/device_types/`, read by `twin.catalog`); a device of no catalog type gets the defaults.

Readings are written once, at the end of an advance: sensors of device class temperature, humidity,
illuminance, carbon_dioxide and pm25 in an area show its value with as many decimals as their state
had (1 for temperature, 0 otherwise, when it was no number); climate, humidifier and fan entities
show current_temperature and current_humidity when they have those attributes, and hvac_action and
a humidifier's action follow them.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .catalog import DevicePhysics, load_catalog
from .domains import climate, cover, humidifier, lawn_mower, vacuum, valve, water_heater
from .domains import weather as weather_entity
from .errors import InvalidServiceDataError
from .outdoor import Outdoor
from .registry import EntityEntry
from .room import RoomClimate
from .service import EntityDraft
from .state import State

if TYPE_CHECKING:
    from .home import Home

# The room each area is taken to be.
ROOM_AREA_M2 = 16.0
ROOM_VOLUME_M3 = 40.0  # 16 m² under a 2.5 m ceiling
OCCUPANTS = 0.5  # people, on average: a household of two or three over five or six rooms

# Heat. A lived-in room stores its heat in the air, the furniture and the inner layer of its walls
# (ROOM_HEAT_CAPACITY) and loses it through its outer wall and window (ENVELOPE_CONDUCTANCE) and
# with the air that leaks out. With the windows shut that is a time constant of about 60 hours:
# an unheated room falls some 5-6 °C in its first day from 20 °C with 0 °C outdoors (a well-kept
# house of the 1990s or later; old, draughty ones are nearer 30 hours, passive houses over 100).
# A wide-open window brings it down to about 9 hours.
ROOM_HEAT_CAPACITY_WH_PER_K = 900.0
ENVELOPE_CONDUCTANCE_W_PER_K = 8.0  # about 10 m² of outer wall and a 2 m² window
INSULATION_HOURS = ROOM_HEAT_CAPACITY_WH_PER_K / ENVELOPE_CONDUCTANCE_W_PER_K  # 112.5 h
KELVIN_PER_WATT_HOUR = 1.0 / ROOM_HEAT_CAPACITY_WH_PER_K
AIR_HEAT_WH_PER_M3_K = 0.335  # 1.2 kg/m³ of air at 1.005 kJ/(kg K)
# The share of the room's heat that one air change carries away.
VENTILATION_HEAT_SHARE = AIR_HEAT_WH_PER_M3_K * ROOM_VOLUME_M3 / ROOM_HEAT_CAPACITY_WH_PER_K
FAN_MIXING = 0.2
PERSON_HEAT_W = 80.0

# Air exchange, in air changes per hour.
INFILTRATION_ACH = 0.5
WINDOW_ACH = 6.0
EXHAUST_M3_H = 100.0

# Sun and daylight.
SUN_APERTURE_M2 = 0.25  # window area x solar gain x the share facing the sun
SHADED_SUN_HEAT = 0.3  # of the sun's heat that closed interior blinds still let in
DAYLIGHT_FACTOR = 0.02
SHADED_DAYLIGHT = 0.05
SHADING_CLASSES = frozenset({"blind", "shade", "curtain", "shutter", "awning"})

# Lamps.
LIGHT_UTILISATION = 0.6
LUMENS_PER_WATT = 90.0
DEFAULT_LUMENS = 800.0

# Moisture, in grams of water per hour.
PERSON_MOISTURE_G_H = 50.0
HUMIDIFIER_G_H = 300.0
DEHUMIDIFIER_G_H = 400.0
AC_DRYING_G_H = 800.0  # a quarter of an air conditioner's cooling goes into condensing water
AC_DRY_FLOOR = 45.0  # % RH: air at 22 °C whose dew point is a cooling coil's 10 °C
DRY_MODE_TARGET = 50.0

# Air quality.
OUTDOOR_CO2 = 420.0
PERSON_CO2_M3_H = 0.018
OUTDOOR_PM25 = 8.0
PM25_DEPOSITION = 0.2
PURIFIER_CADR_M3_H = 250.0
# How fast a fan in a preset runs, as a share of full speed.
PRESET_SPEEDS = {"sleep": 0.25}
DEFAULT_PRESET_SPEED = 0.5

# Heating and cooling, in °C/h: the device's power over the room's heat capacity (1 kW is about
# 1.1 °C/h). Generous for a room's radiator or air conditioner, because the one heat store of the
# model warms as fast as the air a thermostat reads: a room reaches its target within an hour or
# two. A shut room loses about 1.2 °C/h at -50 °C outdoors and gains under 0.8 °C/h at 49 °C in
# full sun (the extremes of the built-in cities' weather), so every device holds its target.
CAPACITY = "capacity"
DEFAULT_CAPACITY = 6.0

# Hot-water tanks.
TANK_TEMPERATURE = "tank_temperature"
TANK_LOSS_HOURS = 72.0
TANK_AMBIENT = 20.0  # around a tank in no area
DEFAULT_WATER_HEATING_K_H = 15.0
WATER_HEATING_K_H = {"eco": 8.0, "heat_pump": 6.0, "electric": 20.0, "high_demand": 25.0}

# Devices that move on the clock.
DOCKING_SECONDS = 30.0
CLEANING_CYCLE_SECONDS = 3600.0
COVER_PERCENT_PER_SECOND = 10.0
VALVE_SECONDS = 2.0

# Sensor device class -> (position in a room's values, decimals when the state shows none).
READINGS = {
    "temperature": (0, 1),
    "humidity": (1, 0),
    "illuminance": (2, 0),
    "carbon_dioxide": (3, 0),
    "pm25": (4, 0),
}
# Units a temperature sensor may show other than °C, and how to get there.
TEMPERATURE_UNITS: dict[str, Callable[[float], float]] = {"°F": lambda c: c * 1.8 + 32.0}
# Domains whose entities may show the room's temperature and humidity as attributes.
GAUGE_DOMAINS = frozenset({"climate", "humidifier", "fan"})
CURRENT_TEMPERATURE = "current_temperature"
CURRENT_HUMIDITY = "current_humidity"
HVAC_ACTION = "hvac_action"


# --- what acts on each area and what reads it: built once per home -----------------------------


@dataclass(frozen=True, slots=True)
class _Sensor:
    """A sensor that shows one of its area's values, as its state had it shown."""

    entity_id: str
    value: int  # position in a room's values
    decimals: int
    convert: Callable[[float], float] | None


@dataclass(frozen=True, slots=True)
class _Area:
    """The entities of one area that move its air, and those that show it."""

    area_id: str
    outdoor: bool  # its air is the outdoor air
    climates: tuple[tuple[str, float], ...]  # that condition it: entity id, capacity in °C/h
    humidifiers: tuple[tuple[str, bool], ...]  # entity id, whether it dries
    fans: tuple[tuple[str, str], ...]  # entity id, "mixing", "exhaust" or "purifier"
    windows: tuple[str, ...]
    shades: tuple[str, ...]
    lights: tuple[tuple[str, float], ...]  # entity id, lumens at full brightness
    sensors: tuple[_Sensor, ...]
    gauges: tuple[str, ...]  # climate, humidifier and fan entities that may show the room


_AREA_PARTS = tuple(key for key in _Area.__dataclass_fields__ if key not in ("area_id", "outdoor"))


@dataclass(frozen=True, slots=True)
class _Index:
    """A home's areas and clocked devices, valid while its registries stay the same."""

    registries: tuple[object, ...]
    sizes: tuple[int, ...]
    areas: tuple[_Area, ...]
    tanks: tuple[tuple[str, int], ...]  # water heater, position of its area or -1
    timers: tuple[str, ...]  # vacuums, lawn mowers, covers and valves
    forecasts: tuple[str, ...]  # weather entities, which may show the outdoor weather

    def fits(self, home: Home) -> bool:
        """Whether the home's registries are still the ones this index was built from."""
        registries = _registries(home)
        return self.sizes == tuple(map(len, registries)) and all(
            mine is theirs for mine, theirs in zip(self.registries, registries, strict=True)
        )


_INDEXES: weakref.WeakKeyDictionary[Home, _Index] = weakref.WeakKeyDictionary()


def _registries(home: Home) -> tuple[dict[str, Any], ...]:
    """What an index is built from; none of it changes during an episode."""
    return (home.areas, home.devices, home.entities)


def _index(home: Home) -> _Index:
    """The home's index, from the cache unless its registries changed."""
    index = _INDEXES.get(home)
    if index is None or not index.fits(home):
        index = _build_index(home)
        _INDEXES[home] = index
    return index


def _build_index(home: Home) -> _Index:
    """Sort every entity into what it does to its area's air, or how it shows it."""
    by_area: dict[str, dict[str, list[Any]]] = {
        area_id: {key: [] for key in _AREA_PARTS} for area_id in home.areas
    }
    positions = {area_id: position for position, area_id in enumerate(home.areas)}
    tanks: list[tuple[str, int]] = []
    timers: list[str] = []
    forecasts: list[str] = []
    whole_home: list[tuple[str | None, tuple[str, float]]] = []  # floor, (entity id, capacity)
    valved: set[str | None] = set()  # the areas whose radiator a room thermostat governs
    kinds = {
        device_id: type_physics(device.device_type) for device_id, device in home.devices.items()
    }
    for entity_id, entry in home.entities.items():
        domain = entry.domain
        area_id = home.area_of(entity_id)
        if domain in ("vacuum", "lawn_mower", "cover", "valve"):
            timers.append(entity_id)
        if domain == "weather":
            forecasts.append(entity_id)
        if domain == "water_heater":
            tanks.append((entity_id, positions.get(area_id or "", -1)))
        kind = kinds.get(entry.device_id or "", _NO_PHYSICS)
        if domain == "climate" and kind.role == "room_valve":
            valved.add(area_id)
        if domain == "climate" and kind.role == "whole_home":
            area = home.areas.get(area_id or "")
            floor_id = area.floor_id if area is not None else None
            whole_home.append((floor_id, (entity_id, _capacity(entry, kind))))
        parts = by_area.get(area_id or "")
        if parts is None:
            continue
        if domain in GAUGE_DOMAINS:
            parts["gauges"].append(entity_id)
        if domain == "climate":
            parts["climates"].append((entity_id, _capacity(entry, kind)))
        elif domain == "humidifier":
            parts["humidifiers"].append((entity_id, entry.device_class == "dehumidifier"))
        elif domain == "fan":
            role = kind.role if kind.role in ("purifier", "exhaust") else "mixing"
            parts["fans"].append((entity_id, role))
        elif domain == "cover" and entry.device_class == "window":
            parts["windows"].append(entity_id)
        elif domain == "cover" and entry.device_class in SHADING_CLASSES:
            parts["shades"].append(entity_id)
        elif domain == "light":
            parts["lights"].append((entity_id, full_lumens(kind)))
        elif domain == "sensor" and entry.device_class in READINGS:
            value, decimals = READINGS[entry.device_class]
            convert = None
            if entry.device_class == "temperature":
                convert = TEMPERATURE_UNITS.get(entry.unit_of_measurement or "")
            shown = _decimals(home.states[entity_id].state)
            parts["sensors"].append(
                _Sensor(entity_id, value, decimals if shown is None else shown, convert)
            )
    for area_id, parts in by_area.items():
        area = home.areas[area_id]
        if not area.outdoor and area_id not in valved:
            own = parts["climates"]
            own += [serves for serves in _central(whole_home, area.floor_id) if serves not in own]
    registries = _registries(home)
    return _Index(
        registries,
        tuple(map(len, registries)),
        tuple(
            _Area(
                area_id,
                home.areas[area_id].outdoor,
                **{key: tuple(items) for key, items in parts.items()},
            )
            for area_id, parts in by_area.items()
        ),
        tuple(tanks),
        tuple(timers),
        tuple(forecasts),
    )


_NO_PHYSICS = DevicePhysics()


def type_physics(device_type: str | None) -> DevicePhysics:
    """A device type's physics parameters; the defaults for no type or one the catalog lacks."""
    kind = load_catalog().get(device_type or "")
    return kind.physics if kind is not None else _NO_PHYSICS


def full_lumens(kind: DevicePhysics) -> float:
    """A light's output at full brightness: its device type's, else DEFAULT_LUMENS."""
    return kind.lumens if kind.lumens is not None else DEFAULT_LUMENS


def _capacity(entry: EntityEntry, kind: DevicePhysics) -> float:
    """A climate entity's capacity, °C/h: its own, else its device type's, else the default."""
    capacity = _number(entry.capabilities.get(CAPACITY), None)
    if capacity is None or capacity <= 0:
        return kind.capacity if kind.capacity is not None else DEFAULT_CAPACITY
    return capacity


def _central(
    whole_home: list[tuple[str | None, tuple[str, float]]], floor_id: str | None
) -> list[tuple[str, float]]:
    """The whole-home thermostats that serve an indoor area: those on its floor (a zone per
    floor), else every one in the home (one zone)."""
    on_floor = [serves for floor, serves in whole_home if floor == floor_id and floor is not None]
    return on_floor or [serves for _, serves in whole_home]


def _decimals(text: str) -> int | None:
    """How many decimals a numeric state shows; None when it is no number."""
    try:
        float(text)
    except ValueError:
        return None
    _, dot, fraction = text.partition(".")
    return len(fraction) if dot and fraction.isdigit() else 0


# --- the clock -------------------------------------------------------------------------------


def advance(home: Home, seconds: float, step: float = 60.0) -> None:
    """Move `home` on by `seconds` in steps of at most `step` seconds; 0 only writes readings."""
    if not 0 <= seconds < math.inf:
        raise InvalidServiceDataError(f"seconds must be 0 or more, got {seconds}")
    if not 0 < step < math.inf:
        raise InvalidServiceDataError(f"step must be more than 0 seconds, got {step}")
    index = _index(home)
    if seconds:
        end = home.now + seconds
        tanks = _read_tanks(home, index)
        while True:
            due = min(
                (_due(home.states[entity_id]) for entity_id in index.timers), default=math.inf
            )
            until = min(max(due, home.now), end)
            if until > home.now:
                _run(home, index, until - home.now, step, tanks)
                home.now = until
            if due > end:
                break
            _happen(home, index)
        _write_tanks(home, tanks)
    _write_readings(home, index)


def _due(state: State) -> float:
    """When a device next changes by itself; infinity when it will not."""
    kind, activity = state.domain, state.state
    if kind in ("vacuum", "lawn_mower"):
        if activity == vacuum.RETURNING:
            return state.last_changed + DOCKING_SECONDS
        if kind == "vacuum" and activity == vacuum.CLEANING:
            return state.last_changed + CLEANING_CYCLE_SECONDS
    elif activity in (cover.STATE_OPENING, cover.STATE_CLOSING):
        if kind == "valve":
            return state.last_changed + VALVE_SECONDS
        position = _position(state)
        distance = 100.0 - position if activity == cover.STATE_OPENING else position
        return state.last_changed + distance / COVER_PERCENT_PER_SECOND
    return math.inf


def _happen(home: Home, index: _Index) -> None:
    """Make every device change that is due by now."""
    for entity_id in index.timers:
        state = home.states[entity_id]
        if _due(state) > home.now:
            continue
        draft = EntityDraft.of(home.entities[entity_id], state)
        if state.domain == "lawn_mower":
            draft.state = lawn_mower.DOCKED
        elif state.domain == "vacuum":
            if state.state == vacuum.RETURNING:
                draft.state = vacuum.DOCKED
            else:
                vacuum.return_to_base(draft, {})
        elif state.domain == "valve":
            opening = state.state == cover.STATE_OPENING
            (valve.open_valve if opening else valve.close_valve)(draft, {})
        else:
            opening = state.state == cover.STATE_OPENING
            (cover.open_cover if opening else cover.close_cover)(draft, {})
        home.write(draft)


# --- the air ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Air:
    """One area's air while it is stepped."""

    temperature: float
    vapour: float  # g/m³
    co2: float
    pm25: float


@dataclass(slots=True)
class _Drive:
    """What acts on one area's air while no device changes, per step of `hours`."""

    temperature_decay: float
    temperature_rate: float  # 1/h
    heat: float  # K/h from people and lamps
    sun_heat: float  # K/h per W/m² of sunshine
    exchange_decay: float  # of the difference from the outdoor air, for vapour and CO2
    vapour_gain: float  # g/m³ above the outdoor air, at equilibrium
    co2_equilibrium: float
    pm25_decay: float
    pm25_equilibrium: float
    # Climate entities: heats, cools, low and high target, K per step, g/m³ dried per K cooled.
    hvac: tuple[tuple[bool, bool, float, float, float, float], ...]
    # (De)humidifiers and dry modes: dries, target % RH (None: as far as it goes), g/m³ per step.
    moisture: tuple[tuple[bool, float | None, float], ...]
    daylight: float  # the share of outdoor daylight that reaches the room
    lamps: float  # lx


@dataclass(slots=True)
class _Tank:
    """A hot-water tank while it is stepped."""

    entity_id: str
    air: _Air | None
    target: float
    heating: float  # K per step, 0 when off
    decay: float
    temperature: float


def saturation_vapour(temperature: float) -> float:
    """Water vapour at saturation, g/m³, at `temperature` °C (the Magnus formula)."""
    pressure = 6.112 * math.exp(17.62 * temperature / (243.12 + temperature))
    return 216.7 * pressure / (273.15 + temperature)


def _run(home: Home, index: _Index, seconds: float, step: float, tanks: dict[str, float]) -> None:
    """Step every area's air (and the hot-water tanks) through `seconds`."""
    steps = max(1, math.ceil(seconds / step))
    interval = seconds / steps
    hours = interval / 3600.0
    start = home.now
    rooms = home.rooms
    airs = []
    drives = []
    for area in index.areas:
        room = rooms.get(area.area_id) or RoomClimate()
        airs.append(
            _Air(
                room.temperature,
                room.humidity / 100.0 * saturation_vapour(room.temperature),
                room.co2,
                room.pm25,
            )
        )
        drives.append(_drive(home.states, area, hours))
    work = [
        _tank(home.states[entity_id], airs, where, tanks[entity_id], hours)
        for entity_id, where in index.tanks
        if entity_id in tanks
    ]
    pairs = [
        (drive, air)
        for area, drive, air in zip(index.areas, drives, airs, strict=True)
        if not area.outdoor
    ]
    outdoors = [air for area, air in zip(index.areas, airs, strict=True) if area.outdoor]
    weather = home.weather
    for number in range(steps):
        outdoor = weather.at(start + number * interval)
        outside = outdoor.temperature
        outside_vapour = outdoor.humidity / 100.0 * saturation_vapour(outside)
        sunshine = _sunshine(outdoor)
        for drive, air in pairs:
            _step(drive, air, outside, outside_vapour, sunshine)
        for air in outdoors:
            air.temperature = outside  # what a tank out there loses heat to
        for tank in work:
            ambient = tank.air.temperature if tank.air is not None else TANK_AMBIENT
            water = ambient + (tank.temperature - ambient) * tank.decay
            if tank.heating and water < tank.target:
                water = min(water + tank.heating, tank.target)
            tank.temperature = water
    for tank in work:
        tanks[tank.entity_id] = tank.temperature
    outdoor = weather.at(start + seconds)
    daylight = _daylight(outdoor)
    for area, drive, air in zip(index.areas, drives, airs, strict=True):
        if area.outdoor:
            rooms[area.area_id] = RoomClimate(
                outdoor.temperature,
                outdoor.humidity,
                daylight + drive.lamps,
                OUTDOOR_CO2,
                OUTDOOR_PM25,
            )
            continue
        temperature = air.temperature
        rooms[area.area_id] = RoomClimate(
            temperature,
            100.0 * (air.vapour / saturation_vapour(temperature)),
            daylight * drive.daylight + drive.lamps,
            air.co2,
            air.pm25,
        )


def _step(drive: _Drive, air: _Air, outside: float, outside_vapour: float, sunshine: float) -> None:
    """One step of one area's air."""
    rate = drive.temperature_rate
    settled = outside + (drive.heat + drive.sun_heat * sunshine) / rate
    temperature = settled + (air.temperature - settled) * drive.temperature_decay
    cooled = 0.0
    for heats, cools, low, high, capacity, drying in drive.hvac:
        if heats and temperature < low:
            temperature = min(temperature + capacity, low)
        elif cools and temperature > high:
            change = min(capacity, temperature - high)
            temperature -= change
            cooled += change * drying
    saturated = saturation_vapour(temperature)
    settled = outside_vapour + drive.vapour_gain
    vapour = settled + (air.vapour - settled) * drive.exchange_decay
    if cooled:
        floor = AC_DRY_FLOOR / 100.0 * saturated
        if vapour > floor:
            vapour = max(vapour - cooled, floor)
    for dries, target, amount in drive.moisture:
        if dries:
            goal = 0.0 if target is None else target / 100.0 * saturated
            if vapour > goal:
                vapour = max(vapour - amount, goal)
        else:
            goal = saturated if target is None else target / 100.0 * saturated
            if vapour < goal:
                vapour = min(vapour + amount, goal)
    air.temperature = temperature
    air.vapour = min(vapour, saturated)
    air.co2 = drive.co2_equilibrium + (air.co2 - drive.co2_equilibrium) * drive.exchange_decay
    air.pm25 = drive.pm25_equilibrium + (air.pm25 - drive.pm25_equilibrium) * drive.pm25_decay


def _sunshine(outdoor: Outdoor) -> float:
    """Sunshine on a horizontal surface, W/m² (Kasten and Czeplak's cloud factor)."""
    if outdoor.sun_elevation <= 0:
        return 0.0
    clouds = 1.0 - 0.75 * math.pow(outdoor.cloud_cover, 3.4)
    return 1000.0 * math.sin(math.radians(outdoor.sun_elevation)) * clouds


def _daylight(outdoor: Outdoor) -> float:
    """Daylight on a horizontal surface outdoors, lx."""
    if outdoor.sun_elevation <= 0:
        return 0.0
    clouds = 1.0 - 0.75 * outdoor.cloud_cover
    return 100000.0 * math.sin(math.radians(outdoor.sun_elevation)) * clouds


def _drive(states: Mapping[str, State], area: _Area, hours: float) -> _Drive:
    """What the area's devices do to its air, as they are set now."""
    volume = ROOM_VOLUME_M3
    mixing = 0.0
    ventilation = INFILTRATION_ACH
    cleaning = 0.0
    for entity_id, role in area.fans:
        speed = _fan_speed(states[entity_id])
        if role == "purifier":
            cleaning += PURIFIER_CADR_M3_H / volume * speed
        elif role == "exhaust" and speed:
            ventilation += EXHAUST_M3_H / volume
        elif role == "mixing":
            mixing += speed
    for entity_id in area.windows:
        ventilation += WINDOW_ACH * _position(states[entity_id]) / 100.0
    hvac = []
    moisture = []
    for entity_id, capacity in area.climates:
        state = states[entity_id]
        mode = state.state
        if mode == climate.FAN_ONLY:
            mixing += 1.0
        elif mode == climate.DRY:
            target = state.attributes.get(climate.ATTR_HUMIDITY)
            moisture.append(
                (True, _number(target, DRY_MODE_TARGET), DEHUMIDIFIER_G_H / volume * hours)
            )
        elif mode in climate.HEATING_MODES or mode in climate.COOLING_MODES:
            low, high = _targets(state.attributes)
            if low is not None and high is not None:
                hvac.append(
                    (
                        mode in climate.HEATING_MODES,
                        mode in climate.COOLING_MODES,
                        low,
                        high,
                        capacity * hours,
                        AC_DRYING_G_H / volume / capacity,
                    )
                )
    for entity_id, dries in area.humidifiers:
        state = states[entity_id]
        if state.state == "on":
            rate = DEHUMIDIFIER_G_H if dries else HUMIDIFIER_G_H
            target = state.attributes.get(humidifier.ATTR_HUMIDITY)
            moisture.append((dries, _number(target, None), rate / volume * hours))
    lumens = sum(full * _light_share(states[entity_id]) for entity_id, full in area.lights)
    watts = OCCUPANTS * PERSON_HEAT_W + lumens / LUMENS_PER_WATT
    shade = 1.0
    if area.shades:
        opened = sum(_position(states[entity_id]) for entity_id in area.shades)
        shade = opened / (100.0 * len(area.shades))
    sun_share = SHADED_SUN_HEAT + (1.0 - SHADED_SUN_HEAT) * shade
    rate = (1.0 + FAN_MIXING * min(mixing, 1.0)) / INSULATION_HOURS
    rate += VENTILATION_HEAT_SHARE * ventilation
    pm25_rate = ventilation + PM25_DEPOSITION + cleaning
    return _Drive(
        temperature_decay=math.exp(-rate * hours),
        temperature_rate=rate,
        heat=watts * KELVIN_PER_WATT_HOUR,
        sun_heat=SUN_APERTURE_M2 * sun_share * KELVIN_PER_WATT_HOUR,
        exchange_decay=math.exp(-ventilation * hours),
        vapour_gain=OCCUPANTS * PERSON_MOISTURE_G_H / volume / ventilation,
        co2_equilibrium=OUTDOOR_CO2 + OCCUPANTS * PERSON_CO2_M3_H / volume * 1e6 / ventilation,
        pm25_decay=math.exp(-pm25_rate * hours),
        pm25_equilibrium=ventilation * OUTDOOR_PM25 / pm25_rate,
        hvac=tuple(hvac),
        moisture=tuple(moisture),
        daylight=DAYLIGHT_FACTOR * (SHADED_DAYLIGHT + (1.0 - SHADED_DAYLIGHT) * shade),
        lamps=LIGHT_UTILISATION / ROOM_AREA_M2 * lumens,
    )


def _number(value: Any, default: float | None) -> float | None:
    """A numeric attribute, else `default` (booleans are not numbers here)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return default


def _targets(attributes: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """A climate entity's target range, as derive_hvac_action reads it."""
    low = _number(attributes.get(climate.ATTR_TARGET_TEMP_LOW), None)
    high = _number(attributes.get(climate.ATTR_TARGET_TEMP_HIGH), None)
    if low is None or high is None:
        low = high = _number(attributes.get(climate.ATTR_TEMPERATURE), None)
    return low, high


def _fan_speed(state: State) -> float:
    """How fast a fan runs, 0..1: its percentage, else its preset's speed, else full."""
    if state.state != "on":
        return 0.0
    percentage = _number(state.attributes.get("percentage"), None)
    if percentage:
        return min(percentage, 100.0) / 100.0
    preset = state.attributes.get("preset_mode")
    if preset is None:
        return 1.0
    return PRESET_SPEEDS.get(preset, DEFAULT_PRESET_SPEED)


def _light_share(state: State) -> float:
    """The share of its full output a light gives: brightness / 255, full without a brightness."""
    if state.state != "on":
        return 0.0
    brightness = _number(state.attributes.get("brightness"), 255.0)
    return min(max(brightness or 0.0, 0.0), 255.0) / 255.0


def _position(state: State) -> float:
    """How open a cover or valve is, 0..100: its position, wherever the device keeps it."""
    position = _number(
        state.attributes.get(
            cover.ATTR_CURRENT_POSITION, state.hidden.get(cover.ATTR_CURRENT_POSITION)
        ),
        None,
    )
    if position is not None:
        return min(max(position, 0.0), 100.0)
    if state.state == cover.STATE_CLOSED:
        return 0.0
    if state.state == cover.STATE_OPEN:
        return 100.0
    return float(cover.PART_WAY)


# --- hot-water tanks -------------------------------------------------------------------------


def _read_tanks(home: Home, index: _Index) -> dict[str, float]:
    """Each water heater's exact tank temperature, where it has one."""
    tanks = {}
    for entity_id, _ in index.tanks:
        state = home.states[entity_id]
        temperature = _number(
            state.hidden.get(TANK_TEMPERATURE, state.attributes.get(CURRENT_TEMPERATURE)), None
        )
        if temperature is not None:
            tanks[entity_id] = temperature
    return tanks


def _tank(state: State, airs: list[_Air], where: int, temperature: float, hours: float) -> _Tank:
    """A water heater's tank as it is set now: on unless its operation mode is off."""
    target = _number(state.attributes.get(water_heater.ATTR_TEMPERATURE), None)
    rate = WATER_HEATING_K_H.get(state.state, DEFAULT_WATER_HEATING_K_H)
    return _Tank(
        state.entity_id,
        airs[where] if where >= 0 else None,
        target or 0.0,
        rate * hours if state.state != water_heater.STATE_OFF and target is not None else 0.0,
        math.exp(-hours / TANK_LOSS_HOURS),
        temperature,
    )


def _write_tanks(home: Home, tanks: dict[str, float]) -> None:
    """Keep each tank's exact temperature in `hidden` and show it to a tenth."""
    for entity_id, temperature in tanks.items():
        state = home.states[entity_id]
        draft = EntityDraft.of(home.entities[entity_id], state)
        draft.hidden[TANK_TEMPERATURE] = temperature
        if CURRENT_TEMPERATURE in draft.attributes:
            draft.attributes[CURRENT_TEMPERATURE] = _tenths(temperature)
        home.write(draft)


# --- readings --------------------------------------------------------------------------------


def _tenths(value: float) -> float:
    """A temperature as Home Assistant shows it, to a tenth (never -0.0)."""
    return round(value, 1) + 0.0


def _text(value: float, decimals: int) -> str:
    """A sensor state: the value with `decimals` decimals (never -0)."""
    return f"{round(value, decimals) + 0.0:.{decimals}f}"


def _write_readings(home: Home, index: _Index) -> None:
    """Bring sensors and the devices that show the room in line with each area's air."""
    states = home.states
    for area in index.areas:
        room = home.rooms.get(area.area_id)
        if room is None:
            continue
        values = (room.temperature, room.humidity, room.illuminance, room.co2, room.pm25)
        for sensor in area.sensors:
            value = values[sensor.value]
            if sensor.convert is not None:
                value = sensor.convert(value)
            text = _text(value, sensor.decimals)
            old = states[sensor.entity_id]
            if old.state != text:
                entry = home.entities[sensor.entity_id]
                home.write(EntityDraft(entry, text, dict(old.attributes), dict(old.hidden)))
        for entity_id in area.gauges:
            _show_room(home, states[entity_id], room)
    _show_weather(home, index)


def _show_weather(home: Home, index: _Index) -> None:
    """Show the outdoor weather now on the weather entities that follow it."""
    following = [
        home.states[entity_id]
        for entity_id in index.forecasts
        if home.states[entity_id].hidden.get(weather_entity.FOLLOWS_OUTDOOR)
    ]
    if not following:
        return
    condition, readings = weather_entity.reading(home.weather.at(home.now))
    for old in following:
        attributes = {**old.attributes, **readings}
        entry = home.entities[old.entity_id]
        home.write(EntityDraft(entry, condition, attributes, dict(old.hidden)))


def _show_room(home: Home, old: State, room: RoomClimate) -> None:
    """Show the room's temperature and humidity on a device that reports them."""
    attributes = old.attributes
    new: dict[str, Any] = {}
    if CURRENT_TEMPERATURE in attributes:
        new[CURRENT_TEMPERATURE] = _tenths(room.temperature)
    if CURRENT_HUMIDITY in attributes:
        shown = attributes[CURRENT_HUMIDITY]
        humidity = round(room.humidity) if isinstance(shown, int) else round(room.humidity, 1)
        new[CURRENT_HUMIDITY] = humidity
    merged = {**attributes, **new}
    domain = old.domain
    if domain == "climate" and HVAC_ACTION in attributes:
        merged[HVAC_ACTION] = climate.derive_hvac_action(old.state, merged)
    elif domain == "humidifier" and humidifier.ATTR_ACTION in attributes:
        merged[humidifier.ATTR_ACTION] = humidifier.action(
            old.state,
            home.entities[old.entity_id].device_class == "dehumidifier",
            merged.get(CURRENT_HUMIDITY),
            merged.get(humidifier.ATTR_HUMIDITY),
        )
    if merged != attributes:
        home.write(EntityDraft(home.entities[old.entity_id], old.state, merged, dict(old.hidden)))

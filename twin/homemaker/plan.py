"""Seeded procedural homes (paper 3.2.2): the plan of a home, its layout and devices, and its build.

A home is made in two steps. `plan_home` draws everything about it from the seed: its type
(studio, apartment, house, duplex, villa), its device count, its household, its floors and rooms
(ensuites and walk-in closets nested in their bedroom), its devices (drawn from the room priors in
`homemaker.yaml` over the catalog's device types, with a model of each), its city and its start
time. `build_home` makes the `Home` and gives it an initial state that fits the weather, the time
of day and the household (initial_state.py). `make_home` does both. The same arguments always
give the same home, states included; each part is drawn from its own random stream, so naming the
city or the time leaves the layout as it is.

`size` is a device count: an int asks for exactly that many devices (within the home type's
range in `homemaker.yaml`, from 5 for a studio to 150 for a villa); "small", "medium" and "large"
draw a count from the low, middle or high third of that range; None draws one of the three. A
larger count also makes a larger layout (more floors, guest rooms, a basement...).

`when` is a Unix timestamp, an aware datetime, or a naive datetime in the city's local standard
time; None draws a day of 2026 and a local time of day.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import NamedTuple

from ..catalog import load_catalog, slugify
from ..domains import weather
from ..errors import HomeDefinitionError
from ..home import Home
from ..registry import Area, Floor
from ..weather import Weather, cities
from ..weather import city as find_city
from .household import Household, draw_household
from .initial_state import set_initial_state
from .priors import HomeType, Priors, Slot, read_priors

SIZES = ("small", "medium", "large")
SIZE_WEIGHTS = (0.35, 0.4, 0.25)
TYPE_WEIGHTS = {"studio": 0.15, "apartment": 0.35, "house": 0.25, "duplex": 0.1, "villa": 0.15}
YEAR_START = datetime(2026, 1, 1)
DAYS_IN_YEAR = 365


@dataclass(frozen=True, slots=True)
class Room:
    """An area of the home and the kind of room it is."""

    area: Area
    kind: str

    @property
    def outdoor(self) -> bool:
        """Whether it is a garden, balcony or terrace: outdoors, in the weather."""
        return self.area.outdoor


@dataclass(frozen=True, slots=True)
class PlannedDevice:
    """A device to install: `label` is what it is in its room ("Floor Lamp"), without a number."""

    device_id: str
    name: str
    device_type: str
    area_id: str
    model: int
    label: str


@dataclass(frozen=True, slots=True)
class HomePlan:
    """A home before it is built: what `build_home` makes, and what `summary` counts."""

    seed: int
    name: str
    home_type: str
    size: str
    city: str
    when: float
    household: Household
    floors: tuple[Floor, ...]
    rooms: tuple[Room, ...]
    devices: tuple[PlannedDevice, ...]


@cache
def load_priors() -> Priors:
    """The priors in homemaker.yaml, read once; each of their home types needs a layout here."""
    priors = read_priors()
    if set(priors.home_types) != set(LAYOUTS):
        raise HomeDefinitionError(f"homemaker.yaml needs exactly the home types {sorted(LAYOUTS)}")
    return priors


def make_home(
    seed: int,
    home_type: str | None = None,
    size: int | str | None = None,
    city: str | None = None,
    when: datetime | float | None = None,
) -> Home:
    """A home drawn from `seed`, in its initial state (see the module docstring for the rest)."""
    return build_home(plan_home(seed, home_type, size, city, when))


def plan_home(
    seed: int,
    home_type: str | None = None,
    size: int | str | None = None,
    city: str | None = None,
    when: datetime | float | None = None,
) -> HomePlan:
    """Everything about a home, drawn from `seed`; arguments that are given are kept."""
    priors = load_priors()
    if isinstance(size, bool) or not (isinstance(size, int) or size in (None, *SIZES)):
        raise HomeDefinitionError(f"size must be a device count or one of {SIZES}, got {size!r}")
    kind = _draw_home_type(_stream(seed, "type"), priors, home_type, size)
    count = _draw_device_count(_stream(seed, "size"), kind, size)
    low, high = kind.devices
    scale = (count - low) / (high - low)
    household = draw_household(_stream(seed, "household"), priors.names, kind.adults, kind.children)
    layout = _Layout(_stream(seed, "layout"), priors, scale)
    LAYOUTS[kind.type_id](layout, household)
    devices = _place_devices(_stream(seed, "devices"), priors, tuple(layout.rooms), count)
    city_name = _draw_city(_stream(seed, "city"), city)
    return HomePlan(
        seed=seed,
        name=f"{household.surname} {kind.label}",
        home_type=kind.type_id,
        size=SIZES[min(2, int(3 * scale))],
        city=city_name,
        when=_draw_start_time(_stream(seed, "when"), city_name, when),
        household=household,
        floors=tuple(layout.floors),
        rooms=tuple(layout.rooms),
        devices=devices,
    )


def build_home(plan: HomePlan) -> Home:
    """The home of `plan`, in an initial state that fits its weather, time and household."""
    home = Home(plan.name, plan.when, Weather(plan.city, plan.seed))
    for floor in plan.floors:
        home.add_floor(floor)
    for room in plan.rooms:
        home.add_area(room.area)
    catalog = load_catalog()
    for device in plan.devices:
        catalog[device.device_type].install(
            home, device.device_id, device.name, device.area_id, device.model
        )
    weather.add_forecast(home)
    set_initial_state(home, plan, load_priors().routine, _stream(plan.seed, "state"))
    return home


def _stream(seed: int, part: str) -> random.Random:
    """An independent random stream for one part of the home (string seeds hash with SHA-512)."""
    return random.Random(f"homemaker:{seed}:{part}")


def _draw_home_type(
    rng: random.Random, priors: Priors, home_type: str | None, size: int | str | None
) -> HomeType:
    """The home type asked for, else one drawn from those that can have `size` devices."""
    kinds = priors.home_types
    if home_type is not None:
        if home_type not in kinds:
            raise HomeDefinitionError(
                f"Unknown home type {home_type!r}; choose one of: {', '.join(kinds)}"
            )
        return kinds[home_type]
    fitting = [kind for kind in kinds.values() if not isinstance(size, int) or _fits(kind, size)]
    if not fitting:
        ranges = ", ".join(f"{k.type_id} {k.devices[0]}-{k.devices[1]}" for k in kinds.values())
        raise HomeDefinitionError(f"No home type has {size} devices; device counts: {ranges}")
    weights = [TYPE_WEIGHTS[kind.type_id] for kind in fitting]
    return rng.choices(fitting, weights)[0]


def _fits(kind: HomeType, count: int) -> bool:
    """Whether a home of this type can have `count` devices."""
    return kind.devices[0] <= count <= kind.devices[1]


def _draw_device_count(rng: random.Random, kind: HomeType, size: int | str | None) -> int:
    """The count asked for, or one from the third of the type's range that the size names."""
    low, high = kind.devices
    if isinstance(size, int):
        if not _fits(kind, size):
            raise HomeDefinitionError(
                f"A {kind.type_id} has {low}-{high} devices, got size {size}; "
                f"ask for a count in that range or another home type"
            )
        return size
    name = size if size is not None else rng.choices(SIZES, SIZE_WEIGHTS)[0]
    third = (high - low) / 3
    start = SIZES.index(name)
    return rng.randint(round(low + start * third), round(low + (start + 1) * third))


def _draw_city(rng: random.Random, name: str | None) -> str:
    """The built-in city asked for (by any spelling of its name), else one drawn."""
    if name is None:
        return rng.choice(sorted(cities()))
    return find_city(name).name


def _draw_start_time(rng: random.Random, place: str, when: datetime | float | None) -> float:
    """The start time, as a Unix timestamp; naive datetimes are the city's local time."""
    offset = timedelta(hours=find_city(place).utc_offset)
    if when is None:
        day, minute = rng.randrange(DAYS_IN_YEAR), rng.randrange(24 * 60)
        when = YEAR_START + timedelta(days=day, minutes=minute)
    if isinstance(when, datetime):
        if when.tzinfo is None:
            when = (when - offset).replace(tzinfo=UTC)
        return when.timestamp()
    return float(when)


# --- layouts ----------------------------------------------------------------------------------


class _Layout:
    """Floors and rooms as a layout adds them, with unique names and area ids."""

    def __init__(self, rng: random.Random, priors: Priors, scale: float) -> None:
        self.rng = rng
        self.room_kinds = priors.rooms
        self.scale = scale
        self.floors: list[Floor] = []
        self.rooms: list[Room] = []
        self._names: set[str] = set()

    def chance(self, base: float, bonus: float = 0.0) -> bool:
        """True with probability `base`, plus `bonus` more in the largest homes."""
        return self.rng.random() < base + bonus * self.scale

    def scaled_count(self, low: int, high: int) -> int:
        """A number from low to high, larger in larger homes."""
        return min(high, low + int((high - low + 1) * self.scale * self.rng.uniform(0.6, 1.0)))

    def add_floor(self, floor_id: str, name: str, level: int) -> str:
        """Add a floor; its id is what rooms are added to."""
        self.floors.append(Floor(floor_id, name, level))
        return floor_id

    def add_room(
        self, kind: str, floor_id: str, name: str | None = None, parent: str | None = None
    ) -> str:
        """Add a room of `kind`; a name already taken gets a number ("Guest Room 2")."""
        room_kind = self.room_kinds[kind]
        base = name or room_kind.name
        unique, number = base, 2
        while unique in self._names:
            unique, number = f"{base} {number}", number + 1
        self._names.add(unique)
        area = Area(slugify(unique), unique, floor_id, parent, room_kind.outdoor)
        self.rooms.append(Room(area, kind))
        return area.area_id

    def add_bedrooms(self, floor: str, household: Household, guests: int, suite: float) -> None:
        """The master bedroom (maybe with an ensuite and a walk-in closet), children's rooms
        and guest rooms."""
        master = self.add_room("master_bedroom", floor)
        if self.chance(suite, 0.4):
            self.add_room("ensuite", floor, "Ensuite Bathroom", master)
        if self.chance(suite - 0.2, 0.4):
            self.add_room("walk_in_closet", floor, parent=master)
        for child in household.children:
            self.add_room("kids_room", floor, f"{child}'s Room")
        for _ in range(guests):
            self.add_room("bedroom", floor)


def _lay_out_studio(layout: _Layout, household: Household) -> None:
    """One room to live and sleep in, a kitchenette and a bathroom, maybe a balcony."""
    home = layout.add_floor("main_floor", "Main Floor", 0)
    if layout.chance(0.4, 0.3):
        layout.add_room("hallway", home, "Entrance")
    layout.add_room("studio", home)
    layout.add_room("kitchenette", home)
    layout.add_room("bathroom", home)
    if layout.chance(0.3, 0.3):
        layout.add_room("balcony", home)


def _lay_out_apartment(layout: _Layout, household: Household) -> None:
    """One floor: living room, kitchen, bedrooms, bathroom; larger ones add a study and more."""
    home = layout.add_floor("main_floor", "Main Floor", 0)
    if layout.chance(0.75, 0.25):
        layout.add_room("hallway", home)
    layout.add_room("living_room", home)
    layout.add_room("kitchen", home)
    if layout.chance(0.2, 0.5):
        layout.add_room("dining_room", home)
    layout.add_bedrooms(home, household, layout.scaled_count(0, 1), 0.25)
    if layout.chance(0.25, 0.5):
        layout.add_room("study", home)
    layout.add_room("bathroom", home)
    if layout.chance(0.1, 0.4):
        layout.add_room("toilet", home)
    if layout.chance(0.15, 0.35):
        layout.add_room("laundry", home)
    if layout.chance(0.6):
        layout.add_room("balcony", home)


def _lay_out_house(layout: _Layout, household: Household) -> None:
    """A ground floor to live on, the bedrooms upstairs (or on the one floor), a garden."""
    ground = layout.add_floor("ground_floor", "Ground Floor", 0)
    upstairs = (
        layout.add_floor("first_floor", "First Floor", 1) if layout.chance(0.3, 0.5) else ground
    )
    layout.add_room("hallway", ground)
    layout.add_room("living_room", ground)
    layout.add_room("kitchen", ground)
    if layout.chance(0.5, 0.5):
        layout.add_room("dining_room", ground)
    if layout.chance(0.35, 0.5):
        layout.add_room("study", ground if layout.chance(0.5) else upstairs)
    if layout.chance(0.35, 0.5):
        layout.add_room("toilet", ground)
    if layout.chance(0.45, 0.45):
        layout.add_room("laundry", ground)
    if layout.chance(0.4, 0.45):
        layout.add_room("garage", ground)
    if layout.chance(0.9):
        layout.add_room("garden", ground)
    if layout.chance(0.3, 0.4):
        layout.add_room("terrace", ground)
    if upstairs != ground:
        layout.add_room("landing", upstairs)
    layout.add_bedrooms(upstairs, household, layout.scaled_count(0, 2), 0.35)
    layout.add_room("bathroom", upstairs)
    if layout.chance(0.1, 0.5):
        layout.add_room("bathroom", upstairs, "Shower Room")
    if upstairs != ground and layout.chance(0.2):
        layout.add_room("balcony", upstairs)


def _lay_out_duplex(layout: _Layout, household: Household) -> None:
    """An apartment on two levels: living below, sleeping above, a roof terrace or balcony."""
    lower = layout.add_floor("lower_level", "Lower Level", 0)
    upper = layout.add_floor("upper_level", "Upper Level", 1)
    layout.add_room("hallway", lower)
    layout.add_room("living_room", lower)
    layout.add_room("kitchen", lower)
    if layout.chance(0.45, 0.5):
        layout.add_room("dining_room", lower)
    if layout.chance(0.45, 0.4):
        layout.add_room("toilet", lower)
    if layout.chance(0.3, 0.5):
        layout.add_room("study", lower)
    if layout.chance(0.3, 0.5):
        layout.add_room("laundry", lower)
    if layout.chance(0.1, 0.2):
        layout.add_room("garage", lower)
    if layout.chance(0.2, 0.2):
        layout.add_room("garden", lower)
    layout.add_room("landing", upper)
    layout.add_bedrooms(upper, household, layout.scaled_count(0, 1), 0.5)
    layout.add_room("bathroom", upper)
    if layout.chance(0.4):
        layout.add_room("terrace", upper, "Roof Terrace")
    elif layout.chance(0.6):
        layout.add_room("balcony", upper)


def _lay_out_villa(layout: _Layout, household: Household) -> None:
    """Two or three floors of suites, a garden and garage, maybe a basement with a cinema."""
    ground = layout.add_floor("ground_floor", "Ground Floor", 0)
    first = layout.add_floor("first_floor", "First Floor", 1)
    second = (
        layout.add_floor("second_floor", "Second Floor", 2) if layout.chance(0.2, 0.5) else None
    )
    basement = layout.add_floor("basement", "Basement", -1) if layout.chance(0.25, 0.55) else None
    layout.add_room("hallway", ground, "Entrance Hall")
    layout.add_room("living_room", ground)
    if layout.chance(0.3, 0.5):
        layout.add_room("living_room", ground, "Family Room")
    layout.add_room("kitchen", ground)
    layout.add_room("dining_room", ground)
    layout.add_room("study", ground)
    layout.add_room("toilet", ground)
    if basement is None or layout.chance(0.3):
        layout.add_room("laundry", ground)
    if layout.chance(0.8, 0.2):
        layout.add_room("garage", ground)
    layout.add_room("garden", ground)
    if layout.chance(0.6, 0.3):
        layout.add_room("terrace", ground)
    layout.add_room("landing", first)
    layout.add_bedrooms(first, household, layout.scaled_count(1, 2), 0.6)
    for area in [room.area for room in layout.rooms if room.kind == "bedroom"]:
        if layout.chance(0.3, 0.4):
            layout.add_room("ensuite", first, f"{area.name} Ensuite", area.area_id)
    layout.add_room("bathroom", first, "Family Bathroom")
    if layout.chance(0.4):
        layout.add_room("balcony", first)
    if second is not None:
        layout.add_room("landing", second, "Upper Landing")
        for _ in range(layout.scaled_count(1, 2)):
            layout.add_room("bedroom", second)
        layout.add_room("study", second, "Office")
        if household.children:
            layout.add_room("kids_room", second, "Playroom")
        layout.add_room("bathroom", second)
        if layout.chance(0.4):
            layout.add_room("terrace", second, "Roof Terrace")
    if basement is not None:
        layout.add_room("basement", basement)
        if layout.chance(0.5, 0.4):
            layout.add_room("home_cinema", basement)
        if layout.chance(0.4, 0.4):
            layout.add_room("gym", basement)


LAYOUTS = {
    "studio": _lay_out_studio,
    "apartment": _lay_out_apartment,
    "house": _lay_out_house,
    "duplex": _lay_out_duplex,
    "villa": _lay_out_villa,
}


# --- devices ----------------------------------------------------------------------------------


class _Pick(NamedTuple):
    """A device chosen for a room: the room's and slot's index, which copy, and its type."""

    room: int
    slot: int
    copy: int
    device_type: str


def _place_devices(
    rng: random.Random, priors: Priors, rooms: tuple[Room, ...], count: int
) -> tuple[PlannedDevice, ...]:
    """Exactly `count` devices, drawn from the room priors.

    Every possible device (each slot of each room, each of a slot's `max`) gets a key (see
    `_key`) and the devices with the largest keys are taken, so any count is met and the likely
    devices come first. A device whose `needs` is not there yet waits until it is.
    """
    offers: list[tuple[float, int, int, int]] = []
    for room_number, room in enumerate(rooms):
        for slot_number, slot in enumerate(priors.rooms[room.kind].slots):
            for copy in range(slot.max):
                offers.append((_key(rng, slot.p / 2**copy), room_number, slot_number, copy))
    offers.sort(reverse=True)
    chosen = _choose_devices(rng, priors, rooms, offers, count)
    if len(chosen) < count:
        raise HomeDefinitionError(
            f"The layout offers only {len(chosen)} devices, {count} were asked; "
            "ask for fewer or for a larger home type"
        )
    return _name_devices(rng, priors, rooms, sorted(chosen))


def _key(rng: random.Random, p: float) -> float:
    """ln(u) / ln(p): taking the keys above `a` takes each device with probability p^a, so small
    homes (a > 1) keep the likely devices and large ones (a < 1) add the rare."""
    if p >= 1:
        return math.inf
    return math.log(1.0 - rng.random()) / math.log(p)


def _choose_devices(
    rng: random.Random,
    priors: Priors,
    rooms: tuple[Room, ...],
    offers: list[tuple[float, int, int, int]],
    count: int,
) -> list[_Pick]:
    """Up to `count` devices from the offers, best key first: a `once` device once per home or
    floor, and a device that `needs` another in its room only once that one is taken."""
    chosen: list[_Pick] = []
    present: set[tuple[int, str | None]] = set()  # (room, label) of the devices taken
    once_taken: set[tuple[str, str]] = set()  # (label, scope) of the `once` devices taken
    waiting: list[_Pick] = []

    def slot_of(pick: _Pick) -> Slot:
        return priors.rooms[rooms[pick.room].kind].slots[pick.slot]

    def take(pick: _Pick) -> None:
        chosen.append(pick)
        present.add((pick.room, slot_of(pick).label or priors.labels[pick.device_type]))

    for _, room_number, slot_number, copy in offers:
        if len(chosen) == count:
            break
        room = rooms[room_number]
        slot = priors.rooms[room.kind].slots[slot_number]
        if slot.once is not None:
            scope = "" if slot.once == "home" else room.area.floor_id or ""
            once = (slot.label or priors.labels[slot.types[0]], scope)
            if once in once_taken:
                continue
            once_taken.add(once)
        pick = _Pick(room_number, slot_number, copy, rng.choices(slot.types, slot.weights)[0])
        if slot.needs is not None and (room_number, slot.needs) not in present:
            waiting.append(pick)
            continue
        take(pick)
        for parked in list(waiting):
            if (parked.room, slot_of(parked).needs) in present and len(chosen) < count:
                waiting.remove(parked)
                take(parked)
    return chosen


def _name_devices(
    rng: random.Random, priors: Priors, rooms: tuple[Room, ...], chosen: list[_Pick]
) -> tuple[PlannedDevice, ...]:
    """Name each device after its room and label, numbered when the name (or one of its
    entity ids) is taken, so that entity ids never collide; draw a model of each."""
    catalog = load_catalog()
    names: set[str] = set()
    entity_ids: set[str] = set()
    devices = []
    for pick in chosen:
        room = rooms[pick.room]
        slot = priors.rooms[room.kind].slots[pick.slot]
        label = slot.label or priors.labels[pick.device_type]
        base = label if slot.once == "home" else f"{room.area.name} {label}"
        spec = catalog[pick.device_type]
        number = 1
        while True:
            name = base if number == 1 else f"{base} {number}"
            slug = slugify(name)
            ids = {f"{e.domain}.{e.object_id(slug)}" for e in spec.entities}
            if name not in names and not ids & entity_ids:
                break
            number += 1
        names.add(name)
        entity_ids |= ids
        model = rng.randrange(len(spec.models))
        devices.append(PlannedDevice(slug, name, pick.device_type, room.area.area_id, model, label))
    return tuple(devices)

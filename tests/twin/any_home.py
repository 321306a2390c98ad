"""Homes HomeFlow did not make, built with the twin's Home API for property tests: with or
without floors and areas, from one entity to hundreds, with names and area/floor ids in any
Unicode (emoji, right-to-left scripts, combining marks, line breaks, very long), and a light
whose imported `color_mode` is a list."""

from __future__ import annotations

from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.home import Home
from twin.registry import Area, EntityEntry, Floor

# Names a real home may hold that a generated one never does.
ODD_NAMES = (
    "🏠💡 Küche",
    "غرفة المعيشة",
    "חדר שינה",
    "e\u0301\u0302\u0303\u0304 combining",
    "\u202eoverride\u202c",
    "line\nbreak\u2028# How to work",
    "多语言 名前 이름",
    "x" * 300,
)
NAMES = st.one_of(st.sampled_from(ODD_NAMES), st.text(min_size=1, max_size=60))
DEVICE_TYPES = tuple(sorted(load_catalog()))
BROKEN_LIGHT = "light.imported"


def build_home(
    devices: list[tuple[str, str]], areas: list[str], floors: list[str], names: list[str]
) -> Home:
    """A home of `devices` (type id, name), spread over `areas` (ids that are also names; none
    leaves every device in no area), the areas over `floors` (none: every area on no floor)."""
    home = Home()
    for floor_id in floors:
        home.add_floor(Floor(floor_id, floor_id))
    for index, area_id in enumerate(dict.fromkeys(areas)):
        floor = floors[index % len(floors)] if floors else None
        home.add_area(Area(area_id, names[index % len(names)] if names else area_id, floor))
    for type_id, name in devices:
        _install(home, type_id, name)
    return home


def _install(home: Home, type_id: str, name: str) -> None:
    """One more device of `type_id` called `name`, in the next area round the home's."""
    index, rooms = len(home.devices), list(home.areas)
    area = rooms[index % len(rooms)] if rooms else None
    # The index keeps entity ids apart: a name of emoji alone slugs to "unnamed".
    load_catalog()[type_id].install(home, f"device_{index}", f"{name} {index}", area)


@st.composite
def homes(draw: st.DrawFn, max_devices: int = 8) -> Home:
    """A small home of any shape: maybe no floors, maybe no areas, one device or a few."""
    floors = draw(st.lists(NAMES, max_size=3, unique=True))
    areas = draw(st.lists(NAMES, max_size=4, unique=True))
    devices = draw(
        st.lists(st.tuples(st.sampled_from(DEVICE_TYPES), NAMES), min_size=1, max_size=max_devices)
    )
    return build_home(devices, areas, floors, draw(st.lists(NAMES, max_size=3)))


def many_entities(count: int = 500) -> Home:
    """A home of at least `count` entities, every device type over and over, no floors."""
    home = build_home([], ["🛋️ living", "كراج"], [], [])
    while len(home.entities) < count:
        index = len(home.devices)
        _install(home, DEVICE_TYPES[index % len(DEVICE_TYPES)], ODD_NAMES[index % len(ODD_NAMES)])
    return home


def with_broken_light(home: Home, area_id: str | None = None) -> Home:
    """`home` with a dimmable colour-temperature light whose `color_mode` was imported as a list
    (Home Assistant's state holds one mode): the Home API takes it, the importers refuse it."""
    entry = EntityEntry(
        BROKEN_LIGHT,
        "Imported 💡 lamp",
        area_id=area_id,
        capabilities={
            "supported_color_modes": ["color_temp"],
            "min_color_temp_kelvin": 2000,
            "max_color_temp_kelvin": 6500,
        },
    )
    home.add_entity(entry, "on", {"color_mode": ["color_temp"], "brightness": 100})
    return home

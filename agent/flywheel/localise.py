"""A HomeMaker home in another language: its rooms and devices renamed as people there name them
in Home Assistant (names.yaml: "Wohnzimmer Stehlampe", "Lampadaire salon"), so that a request in
that language names what the home has. HomeMaker names in English; a blueprint in German is the
same home (the same seed, entity ids and states) with German names. The held-out share's names
(other English names, and languages the flywheel never speaks) are SmartHome-Bench's
out-of-distribution split's alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from twin.home import Home

from .sentences import SentenceError, Share

_NUMBERED = re.compile(r"^(.*?)(?: (\d+))?$")
_CHILD = re.compile(r"^(.+)'s Room$")


@dataclass(frozen=True)
class Words:
    """One language's names and joining words, from names.yaml."""

    code: str
    entity: str
    child: str
    conjunction: str
    please: str
    thanks: str
    rooms: dict[str, str]
    devices: dict[str, str]


def words(code: str, share: Share = "flywheel") -> Words:
    """The names of `code` in `share` (names.yaml's languages; its held-out ones, English's
    other names among them, are the benchmark's alone); SentenceError for another."""
    table = _table()
    held = table["held_out"]
    if code not in table["languages"] or (code in held) != (share == "held_out"):
        shared = [c for c in table["languages"] if c not in held]
        raise SentenceError(
            f"no {share} home names in {code!r}; the flywheel names homes in en, "
            f"{', '.join(shared)}; the benchmark's held-out names are {', '.join(held)}"
        )
    at = table["languages"].index(code)
    return Words(
        code,
        table["entity"][at],
        table["child"][at],
        table["and"][at],
        table["please"][at],
        table["thanks"][at],
        {k: v[at] for k, v in table["rooms"].items()},
        {k: v[at] for k, v in table["devices"].items()},
    )


def held_out_languages() -> tuple[str, ...]:
    """The languages the flywheel never speaks, whose names the benchmark's held-out split has."""
    return tuple(code for code in _table()["held_out"] if code != "en")


def localise(home: Home, code: str, share: Share = "flywheel") -> Home:
    """The home with its rooms and devices named in `code` (in place; English: unchanged, but
    in the held-out share, which has other English names). A device the table does not know
    keeps its name, in its renamed room if the name starts with the room's ("Badezimmer
    Climate Sensor Humidity")."""
    if code == "en" and share == "flywheel":
        return home
    table = words(code, share)
    english = {area_id: area.name for area_id, area in home.areas.items()}
    areas = {a: n for a, name in english.items() if (n := _room(table, name)) is not None}
    entities = {}
    for entity_id, entry in home.entities.items():
        area_id = entry.area_id or _device_area(home, entry.device_id)
        area = english.get(area_id or "")
        rest = entry.name[len(area) + 1 :] if area and entry.name.startswith(area + " ") else None
        known = _numbered(table.devices, rest if rest is not None else entry.name)
        room = areas.get(area_id or "") if rest is not None else None
        device = known or (rest if room else None)  # a sensor's "Climate Sensor Humidity"
        if device is None:
            continue
        if room:
            room = room if code in ("de", "en") else room[:1].lower() + room[1:]
            device = table.entity.format(area=room, device=device)
        entities[entity_id] = device[:1].upper() + device[1:]
    home.rename(areas, entities)
    return home


def _device_area(home: Home, device_id: str | None) -> str | None:
    device = home.devices.get(device_id or "")
    return device.area_id if device is not None else None


def _room(table: Words, name: str) -> str | None:
    child = _CHILD.match(name)
    if child is not None:
        return table.child.format(name=child.group(1))
    return _numbered(table.rooms, name)


def _numbered(known: dict[str, str], name: str) -> str | None:
    """A name translated, its number kept ("Guest Room 2" -> "Gästezimmer 2")."""
    match = _NUMBERED.match(name)
    assert match is not None
    base, number = match.groups()
    said = known.get(base)
    return None if said is None else f"{said} {number}" if number else said


@cache
def _table() -> dict[str, Any]:
    text = files("agent.flywheel").joinpath("names.yaml").read_text(encoding="utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data

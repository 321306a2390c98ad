"""A HomeMaker home in another language: its rooms and devices renamed as people there name them
in Home Assistant (names.yaml: "Wohnzimmer Stehlampe", "Lampadaire salon"), so that a request in
that language names what the home has. HomeMaker names in English; a blueprint in German is the
same home (the same seed, entity ids and states) with German names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from twin.home import Home

from .sentences import SentenceError

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


def words(code: str) -> Words:
    """The names of `code` (one of names.yaml's languages); SentenceError for another."""
    table = _table()
    if code not in table["languages"]:
        raise SentenceError(
            f"no home names in {code!r}; HomeFlow names homes in en, "
            f"{', '.join(table['languages'])}"
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


def localise(home: Home, code: str) -> Home:
    """The home with its rooms and devices named in `code` (in place; English: unchanged). A
    name the table does not know stays as it is."""
    if code == "en":
        return home
    table = words(code)
    english = {area_id: area.name for area_id, area in home.areas.items()}
    areas = {a: n for a, name in english.items() if (n := _room(table, name)) is not None}
    entities = {}
    for entity_id, entry in home.entities.items():
        area_id = entry.area_id or _device_area(home, entry.device_id)
        area = english.get(area_id or "")
        rest = entry.name[len(area) + 1 :] if area and entry.name.startswith(area + " ") else None
        device = _numbered(table.devices, rest if rest is not None else entry.name)
        if device is None:
            continue
        if rest is not None and area_id in areas:
            room = (
                areas[area_id] if code == "de" else areas[area_id][:1].lower() + areas[area_id][1:]
            )
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

"""The benchmark reads a home in Home Assistant under the twin's area and floor ids, whatever
ids Home Assistant gave them (the user's same-name areas, or new renamed ones), matched through
the registries; the user's own areas, floors and entities stay out of it."""

from __future__ import annotations

from typing import Any

import pytest

from agent.bench.ha import home_registries
from twin.home import Home
from twin.homemaker import make_home

ENTRY = "bench-entry"


@pytest.fixture(scope="module")
def home() -> Home:
    return make_home(7, "house", city="Oslo")


def served(home: Home, prefix: str) -> dict[str, list[dict[str, Any]]]:
    """`home`'s registries as Home Assistant might hold them, each area and floor id given
    `prefix`, beside a user's own floor, area and entity."""
    ids = {area_id: prefix + area_id for area_id in home.areas}
    floors = {floor_id: prefix + floor_id for floor_id in home.floors}
    user = {"area_id": "user_den", "floor_id": "user_loft"}
    return {
        "floor": [{"floor_id": f} for f in floors.values()] + [{"floor_id": "user_loft"}],
        "area": [
            {"area_id": ids[a.area_id], "floor_id": floors.get(a.floor_id or "")}
            for a in home.areas.values()
        ]
        + [user],
        "device": [
            {"id": d.device_id, "area_id": ids.get(d.area_id or "")} for d in home.devices.values()
        ],
        "entity": [
            {
                "entity_id": e.entity_id,
                "config_entry_id": ENTRY,
                "device_id": e.device_id,
                "area_id": ids.get(e.area_id or ""),
            }
            for e in home.entities.values()
        ]
        + [
            {"entity_id": "light.den", "config_entry_id": "user", "device_id": None, **user},
        ],
    }


@pytest.mark.parametrize("prefix", ["", "smarthome_bench_qt1_0000_", "user_"])
def test_areas_and_floors_read_back_under_the_twins_ids(home: Home, prefix: str) -> None:
    ours = home_registries(home, ENTRY, served(home, prefix))
    used_areas = {home.area_of(e) for e in home.entities} - {None}
    assert {a["area_id"] for a in ours["area"]} == used_areas
    for area in ours["area"]:
        assert area["floor_id"] == home.areas[area["area_id"]].floor_id
    assert {f["floor_id"] for f in ours["floor"]} == {
        home.areas[a].floor_id for a in used_areas if home.areas[a].floor_id
    }
    assert sorted(e["entity_id"] for e in ours["entity"]) == sorted(home.entities)
    for entity in ours["entity"]:
        if home.entities[entity["entity_id"]].area_id is not None:
            assert entity["area_id"] == home.entities[entity["entity_id"]].area_id

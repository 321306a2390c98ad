"""Helpers and scripts come in from every importer with the attributes Home Assistant gives them,
and run there: HA snapshots, synthetic-home inventories, home files and the live-HA mirror."""

from __future__ import annotations

import copy
from typing import Any

from twin.homefile import dump_home, import_ha_snapshot, load_home
from twin.mirror import Mirror

from .helpers import BOOLEAN, NUMBER, SCRIPT, SELECT
from .test_mirror import Clock, FakeLink, state

T0 = "2026-03-01T10:00:00+00:00"
# The states a Home Assistant 2026.10 with these helpers (from YAML) and a script shows.
STATES: dict[str, dict[str, Any]] = {
    BOOLEAN: {"state": "on", "attributes": {"editable": False, "icon": "mdi:account",
                                            "friendly_name": "Guest mode"}},
    NUMBER: {"state": "45.0", "attributes": {"initial": None, "editable": False, "min": 30.0,
                                             "max": 60.0, "step": 2.5, "mode": "slider",
                                             "unit_of_measurement": "%",
                                             "friendly_name": "Target humidity"}},
    SELECT: {"state": "Away", "attributes": {"options": ["Home", "Away", "Night"],
                                             "editable": True, "friendly_name": "House mode"}},
    SCRIPT: {"state": "off", "attributes": {"last_triggered": "2026-02-28T21:00:00.120000+00:00",
                                            "mode": "queued", "current": 0, "max": 10,
                                            "friendly_name": "Movie night"}},
}  # fmt: skip


def snapshot() -> dict[str, Any]:
    return {
        "entities": [
            {"entity_id": NUMBER, "unit_of_measurement": "%", "capabilities": {
                "min": 30.0, "max": 60.0, "step": 2.5, "mode": "slider"}},
            {"entity_id": SELECT, "capabilities": {"options": ["Home", "Away", "Night"]}},
        ],
        "states": [{"entity_id": entity_id, **copy.deepcopy(s)} for entity_id, s in STATES.items()],
    }  # fmt: skip


def shown(home: Any, entity_id: str) -> dict[str, Any]:
    current = home.states[entity_id]
    return {"state": current.state, "attributes": dict(current.attributes)}


def run_each(home: Any) -> None:
    """One call of each domain; the helpers act as Home Assistant's do."""
    home.call_service("input_boolean", "toggle", target={"entity_id": BOOLEAN})
    home.call_service("input_number", "increment", target={"entity_id": NUMBER})
    home.call_service("input_select", "select_next", target={"entity_id": SELECT})
    home.call_service("script", "turn_on", target={"entity_id": SCRIPT})
    assert [home.states[e].state for e in (BOOLEAN, NUMBER, SELECT, SCRIPT)] == [
        "off",
        "47.5",
        "Night",
        "off",
    ]
    assert home.states[SCRIPT].attributes["last_triggered"] != "2026-02-28T21:00:00.120000+00:00"


def test_a_snapshot_imports_them_as_home_assistant_shows_them() -> None:
    home, skipped = import_ha_snapshot(snapshot())
    assert skipped == []
    for entity_id, expected in STATES.items():
        assert shown(home, entity_id) == expected, entity_id
    assert home.entities[NUMBER].capabilities["max"] == 60.0
    assert load_home(dump_home(home)).states == home.states  # and a home file keeps them
    run_each(home)


def test_an_inventory_imports_them_from_their_arguments() -> None:
    inventory = {
        "entities": [
            {"id": BOOLEAN, "name": "Guest mode", "state": True, "attributes": {"editable": False}},
            {"id": NUMBER, "name": "Target humidity", "state": 45, "attributes": {
                "min": 30.0, "max": 60.0, "step": 2.5, "mode": "slider",
                "native_unit_of_measurement": "%"}},
            {"id": SELECT, "name": "House mode", "state": "Away", "attributes": {
                "options": ["Home", "Away", "Night"]}},
            {"id": SCRIPT, "name": "Movie night", "state": False, "attributes": {
                "mode": "queued", "current": 0, "max": 10, "last_triggered": None}},
        ]
    }  # fmt: skip
    home, skipped = import_ha_snapshot(inventory)
    assert skipped == []
    assert home.states[NUMBER].state == "45.0"
    assert home.entities[NUMBER].unit_of_measurement == "%"
    assert home.states[SCRIPT].state == "off"
    run_each(home)


async def test_the_mirror_mirrors_them() -> None:
    link = FakeLink()
    link.registries["entity"] = [
        {"entity_id": entity_id, "device_id": None, "area_id": "hall", "name": None,
         "original_name": s["attributes"]["friendly_name"], "entity_category": None}
        for entity_id, s in STATES.items()
    ]  # fmt: skip
    link.states_ = {
        entity_id: state(entity_id, s["state"], copy.deepcopy(s["attributes"]), T0)
        for entity_id, s in STATES.items()
    }
    mirror = Mirror(link, "Flat", clock=Clock())
    await mirror.sync()
    for entity_id, expected in STATES.items():
        assert shown(mirror.home, entity_id) == expected, entity_id
        assert mirror.home.area_of(entity_id) == "hall"
    run_each(mirror.home)

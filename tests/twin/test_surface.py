"""The read tools over a HomeView: a twin home read directly (TwinView) and read as Home
Assistant's states and registries (HomeAssistantView) gives the same answers."""

from __future__ import annotations

from typing import Any

import pytest

from twin.errors import TargetNotFoundError
from twin.home import Home
from twin.homemaker import make_home
from twin.registry import Area, Floor
from twin.surface import (
    NO_AREA,
    NO_FLOOR,
    AreaLayout,
    FloorLayout,
    HomeAssistantView,
    HomeView,
    TwinView,
    all_states,
    compact,
    describe,
    get_state,
    layout,
    list_entities,
    resolve,
)

SUN = {
    "entity_id": "sun.sun",
    "state": "above_horizon",
    "attributes": {"friendly_name": "Sun", "elevation": 12.5},
    "last_changed": "2026-01-01T12:00:00+00:00",
    "last_updated": "2026-01-01T12:00:00+00:00",
    "context": {"id": "01J0000000000000000000000"},
}


@pytest.fixture(scope="module")
def home() -> Home:
    """A generated house: floors, areas, devices and a dozen domains."""
    return make_home(3, "house")


def registries_of(home: Home) -> dict[str, list[dict[str, Any]]]:
    """The home's registries as Home Assistant's WebSocket API lists them (the fields read)."""
    return {
        "floor": [
            {"floor_id": f.floor_id, "name": f.name, "level": f.level} for f in home.floors.values()
        ],
        "area": [
            {"area_id": a.area_id, "name": a.name, "floor_id": a.floor_id}
            for a in home.areas.values()
        ],
        "device": [
            {
                "id": d.device_id,
                "name": d.name,
                "manufacturer": d.manufacturer,
                "model": d.model,
                "area_id": d.area_id,
            }
            for d in home.devices.values()
        ],
        "entity": [
            {"entity_id": e.entity_id, "device_id": e.device_id, "area_id": e.area_id}
            for e in home.entities.values()
        ],
    }


def as_home_assistant(home: Home) -> HomeAssistantView:
    """The home as the REST backend fetches it: state dicts and registry rows."""
    states = [dict(state.as_dict(), context={"id": "x"}) for state in home.states.values()]
    return HomeAssistantView(states, registries_of(home))


def test_both_views_list_the_same_entities(home: Home) -> None:
    twin, ha = TwinView(home), as_home_assistant(home)
    floor = next(iter(home.floors.values()))
    queries: list[dict[str, Any]] = [
        {},
        {"floor": floor.floor_id},
        {"floor": floor.name.upper()},
        {"area": "nowhere"},
        *({"domain": d} for d in {e.partition(".")[0] for e in home.states}),
        *({"area": a.name.lower()} for a in home.areas.values()),
    ]
    for query in queries:
        assert list_entities(ha, **query) == list_entities(twin, **query), query
    assert len(list_entities(twin)["entities"]) == len(home.states)


def test_both_views_give_the_same_states_manuals_and_layout(home: Home) -> None:
    twin, ha = TwinView(home), as_home_assistant(home)
    for entity_id in [*home.states, "light.nowhere", 7]:
        assert get_state(ha, entity_id) == get_state(twin, entity_id), entity_id
        assert describe(ha, entity_id) == describe(twin, entity_id), entity_id
    assert all_states(ha) == all_states(twin)
    assert layout(ha) == layout(twin)
    # The home's floors by level, then what is on no floor (the generated home's weather).
    assert [f.floor_id for f in layout(twin)] == [
        *(f.floor_id for f in sorted(home.floors.values(), key=lambda f: f.level)),
        None,
    ]


def test_compact_shows_the_key_attributes_of_the_domain(home: Home) -> None:
    light = next(s for e, s in home.states.items() if e.startswith("light.") and s.state == "on")
    item = compact(TwinView(home), light)
    assert item == {
        "entity_id": light.entity_id,
        "name": home.entities[light.entity_id].name,
        "area": home.area_of(light.entity_id),
        "state": "on",
        "brightness": light.attributes["brightness"],
    }
    assert compact(as_home_assistant(home), light) == item


def test_a_twin_view_reads_the_home_as_it_is_now(home: Home) -> None:
    work = home.copy()
    view: HomeView = TwinView(work)
    light = next(e for e in work.states if e.startswith("light."))
    saved = work.snapshot()
    work.call_service("light", "turn_off", {"entity_id": light})
    assert get_state(view, light)["state"] == "off"
    work.call_service("light", "turn_on", {"entity_id": light})
    work.restore(saved)
    assert get_state(view, light)["state"] == saved.states[light].state


def test_home_assistant_entities_the_twin_does_not_model() -> None:
    """An unregistered entity of a domain the twin lacks is listed in no area and has no manual;
    an entity without an area of its own is in its device's; a floor without a level is level 0."""
    registries: dict[str, list[dict[str, Any]]] = {
        "floor": [
            {"floor_id": "up", "name": "Loft", "level": 1},
            {"floor_id": "ground", "name": "Street", "level": None},
        ],
        "area": [
            {"area_id": "attic", "name": "Attic", "floor_id": None},
            {"area_id": "hall", "name": "Hall", "floor_id": "ground"},
        ],
        "device": [
            {"id": "d1", "name": None, "manufacturer": "Acme", "model": "P1", "area_id": "hall"}
        ],
        "entity": [{"entity_id": "switch.plug", "device_id": "d1", "area_id": None}],
    }
    plug = {**SUN, "entity_id": "switch.plug", "state": "on", "attributes": {}}
    view = HomeAssistantView([SUN, plug], registries)
    assert list_entities(view)["entities"] == [
        {"entity_id": "sun.sun", "name": "Sun", "area": None, "state": "above_horizon"},
        {"entity_id": "switch.plug", "name": "switch.plug", "area": "hall", "state": "on"},
    ]
    assert list_entities(view, floor="street")["entities"][0]["entity_id"] == "switch.plug"
    no_manual = describe(view, "sun.sun")
    assert no_manual["success"] is False
    assert no_manual["error"]["message"].startswith("No manual for sun.sun: ")
    assert describe(view, "switch.plug")["device"] == {"manufacturer": "Acme", "model": "P1"}
    assert get_state(view, "sun.sun") == {key: SUN[key] for key in SUN if key != "context"}
    assert layout(view) == (
        FloorLayout(
            "ground", "Street", (AreaLayout("hall", "Hall", (("switch.plug", "switch.plug"),)),)
        ),
        FloorLayout("up", "Loft", ()),
        FloorLayout(
            None,
            NO_FLOOR,
            (AreaLayout("attic", "Attic", ()), AreaLayout(None, NO_AREA, (("sun.sun", "Sun"),))),
        ),
    )


def test_resolve_takes_an_id_or_a_name_in_any_case() -> None:
    areas = {"hall": Area("hall", "Front Hall"), "den": Area("den", "Den")}
    assert resolve(areas, None, "area") is None
    assert resolve(areas, "hall", "area") == "hall"
    assert resolve(areas, "front HALL", "area") == "hall"
    with pytest.raises(TargetNotFoundError, match="No floor 'roof'; the home's floors: none"):
        resolve({}, "roof", "floor")
    with pytest.raises(TargetNotFoundError, match="the home's areas: den, hall"):
        resolve(areas, ["hall"], "area")
    assert resolve({"g": Floor("g", "Ground")}, "ground", "floor") == "g"

"""The mirror builds a home from Home Assistant's registries and states, and follows its events."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import pytest

from twin.conditions import compile_condition
from twin.errors import ServiceNotSupportedError
from twin.mirror import EVENT_TYPES, SYNC, Mirror, MirrorError
from twin.tools import run_tool
from twin.verifier import Verifier

T0 = "2026-03-01T10:00:00+00:00"
T1 = "2026-03-01T10:00:05.250000+00:00"
T2 = "2026-03-01T10:00:07+00:00"
REGISTRIES: dict[str, list[dict[str, Any]]] = {
    "floor": [{"floor_id": "ground", "name": "Ground", "level": 0, "aliases": [], "icon": None}],
    "area": [
        {"area_id": "kitchen", "name": "Kitchen", "floor_id": "ground", "icon": None},
        {"area_id": "hall", "name": "Hall", "floor_id": None, "icon": None},
    ],
    "device": [
        {
            "id": "d1",
            "name": "Ceiling",
            "name_by_user": None,
            "manufacturer": "Acme",
            "model": "L1",
            "area_id": "kitchen",
            "via_device_id": None,
        }
    ],
    "entity": [
        {"entity_id": "light.ceiling", "device_id": "d1", "area_id": None, "name": None,
         "original_name": "Ceiling", "entity_category": None, "platform": "hue"},
        {"entity_id": "person.alice", "device_id": None, "area_id": None, "name": None,
         "original_name": "Alice", "entity_category": None, "platform": "person"},
        {"entity_id": "input_boolean.guests", "device_id": None, "area_id": "hall",
         "name": "Guests", "original_name": None, "entity_category": None},
        {"entity_id": "light.disabled", "device_id": None, "area_id": None, "name": None,
         "original_name": None, "entity_category": None, "disabled_by": "user"},
    ],
}  # fmt: skip


def state(entity_id: str, value: str, attributes: dict[str, Any], at: str = T0) -> dict[str, Any]:
    """A state object as Home Assistant's APIs give it."""
    return {
        "entity_id": entity_id,
        "state": value,
        "attributes": attributes,
        "last_changed": at,
        "last_updated": at,
    }


STATES = {
    "light.ceiling": state(
        "light.ceiling",
        "on",
        {
            "brightness": 200,
            "color_mode": "hs",
            "hs_color": [30.0, 50.0],
            "supported_color_modes": ["hs"],
            "friendly_name": "Ceiling",
            "supported_features": 0,
        },
    ),
    "person.alice": state("person.alice", "home", {"friendly_name": "Alice", "source": "x"}),
    "sun.sun": state("sun.sun", "above_horizon", {"elevation": 31.5, "friendly_name": "Sun"}),
    "input_boolean.guests": state("input_boolean.guests", "off", {"friendly_name": "Guests"}),
}


def changed(entity_id: str, new: dict[str, Any] | None, fired: str = T1) -> dict[str, Any]:
    return {
        "event_type": "state_changed",
        "data": {"entity_id": entity_id, "old_state": None, "new_state": new},
        "time_fired": fired,
    }


def registry_event(kind: str, item_id: str, fired: str = T2) -> dict[str, Any]:
    key = "device_id" if kind == "device" else f"{kind}_id"
    return {
        "event_type": f"{kind}_registry_updated",
        "data": {"action": "update", key: item_id},
        "time_fired": fired,
    }


class FakeLink:
    """Home Assistant's data as its WebSocket API gives it; events from a queue."""

    def __init__(self) -> None:
        self.registries = copy.deepcopy(REGISTRIES)
        self.states_ = copy.deepcopy(STATES)
        self.events: asyncio.Queue[Mapping[str, Any] | None] = asyncio.Queue()
        self.subscribed: Sequence[str] = ()
        self.fetches = 0

    async def registry(self, kind: str) -> list[dict[str, Any]]:
        self.fetches += 1
        return copy.deepcopy(self.registries[kind])

    async def states(self) -> dict[str, dict[str, Any]]:
        return copy.deepcopy(self.states_)

    async def subscribe_events(
        self, event_types: Sequence[str]
    ) -> AsyncIterator[Mapping[str, Any] | None]:
        self.subscribed = event_types
        while True:
            yield await self.events.get()


class Clock:
    def __init__(self) -> None:
        self.now = 1772359200.0  # T0

    def __call__(self) -> float:
        self.now += 0.5
        return self.now


@pytest.fixture
def link() -> FakeLink:
    return FakeLink()


@pytest.fixture
async def mirror(link: FakeLink) -> Mirror:
    mirror = Mirror(link, "Flat", clock=Clock())
    await mirror.sync()
    return mirror


def as_dicts(mirror: Mirror) -> dict[str, dict[str, Any]]:
    """The mirror's states as Home Assistant's JSON (tuples as lists)."""
    states = {entity_id: s.as_dict() for entity_id, s in mirror.home.states.items()}
    for item in states.values():
        item["attributes"] = {
            key: list(value) if isinstance(value, tuple) else value
            for key, value in item["attributes"].items()
        }
    return states


async def test_sync_builds_the_home_with_every_domain(mirror: Mirror, link: FakeLink) -> None:
    home = mirror.home
    assert home.name == "Flat"
    assert set(home.floors) == {"ground"}
    assert set(home.areas) == {"kitchen", "hall"}
    assert home.devices["d1"].name == "Ceiling"
    assert home.area_of("light.ceiling") == "kitchen"
    assert home.area_of("input_boolean.guests") == "hall"
    assert home.entities["person.alice"].name == "Alice"
    assert mirror.skipped == ["light.disabled"]  # disabled: no state
    assert as_dicts(mirror) == link.states_  # exactly as Home Assistant has them
    assert home.states["light.ceiling"].attributes["hs_color"] == (30.0, 50.0)
    assert home.now == 1772359200.0


async def test_unmodelled_domains_are_readable_but_read_only(mirror: Mirror) -> None:
    home = mirror.home
    condition = compile_condition(
        'state("person.alice") == "home" and attr("sun.sun", "elevation") > 30'
        ' and state("input_boolean.guests") == "off"'
    )
    assert condition.holds(home)
    before = dict(home.states)
    with pytest.raises(ServiceNotSupportedError, match="sun entities are read-only"):
        home.call_service("sun", "turn_on", target={"entity_id": "sun.sun"})
    with pytest.raises(ServiceNotSupportedError, match="read-only"):
        home.call_service("person", "reload", target={"entity_id": "person.alice"}, strict=False)
    # Across domains they are skipped, as Home Assistant skips a domain without the service.
    home.call_service("homeassistant", "turn_on", target={"entity_id": "sun.sun"})
    assert home.states == before
    call = {"domain": "sun", "service": "toggle", "target": {"entity_id": "sun.sun"}}
    answer = run_tool(home, "call_service", call)
    assert answer["error"]["code"] == "service_not_supported"
    manual = run_tool(home, "describe", {"entity_id": "person.alice"})
    assert manual["services"] == {}
    assert manual["state"] == "home"


async def test_a_mirrored_helper_is_modelled(mirror: Mirror) -> None:
    """An input_boolean of the live home is the twin's own: its services run on the mirror."""
    home = mirror.home
    home.call_service("homeassistant", "turn_on", target={"entity_id": "input_boolean.guests"})
    assert home.states["input_boolean.guests"].state == "on"
    home.call_service("input_boolean", "toggle", target={"entity_id": "input_boolean.guests"})
    assert home.states["input_boolean.guests"].state == "off"


async def test_a_state_change_is_written_as_home_assistant_gives_it(
    mirror: Mirror, link: FakeLink
) -> None:
    attributes = {**STATES["light.ceiling"]["attributes"], "brightness": 90, "hs_color": [200, 10]}
    new = state("light.ceiling", "on", attributes, T1)
    new["last_changed"] = T0
    update = await mirror.apply(changed("light.ceiling", new))
    assert mirror.home.states["light.ceiling"].as_dict()["attributes"]["hs_color"] == (200, 10)
    assert mirror.home.states["light.ceiling"].last_changed == 1772359200.0
    assert (update.event_type, update.subject) == ("state_changed", "light.ceiling")
    assert update.changed_at == 1772359205.25  # Home Assistant's last_updated
    assert update.delay == update.applied_at - update.changed_at
    assert mirror.home.now == 1772359205.25
    # An older state (an event sent before the last sync fetched the states) is ignored.
    await mirror.apply(changed("light.ceiling", state("light.ceiling", "off", {}, T0)))
    assert mirror.home.states["light.ceiling"].state == "on"


async def test_entities_that_appear_and_go(mirror: Mirror, link: FakeLink) -> None:
    new = state("binary_sensor.door", "on", {"device_class": "door"}, T1)
    await mirror.apply(changed("binary_sensor.door", new))
    assert mirror.home.states["binary_sensor.door"].attributes == {"device_class": "door"}
    assert mirror.home.entities["binary_sensor.door"].device_class == "door"
    update = await mirror.apply(changed("person.alice", None, T2))
    assert "person.alice" not in mirror.home.entities
    assert "person.alice" not in mirror.home.states
    assert update.changed_at == 1772359207.0  # no new state: the event's time


@pytest.mark.parametrize(
    ("kind", "item_id", "edit", "check"),
    [
        ("area", "kitchen", lambda r: r["area"][0].update(name="Cookery"),
         lambda h: h.areas["kitchen"].name == "Cookery"),
        ("floor", "upper", lambda r: r["floor"].append({"floor_id": "upper", "name": "Upper",
                                                        "level": 1}),
         lambda h: h.floors["upper"].level == 1),
        ("device", "d1", lambda r: r["device"][0].update(name_by_user="Big Lamp", area_id="hall"),
         lambda h: h.devices["d1"].name == "Big Lamp" and h.area_of("light.ceiling") == "hall"),
        ("entity", "person.alice", lambda r: r["entity"][1].update(area_id="hall"),
         lambda h: h.area_of("person.alice") == "hall"),
    ],
)  # fmt: skip
async def test_registry_events_refetch_the_registries(
    mirror: Mirror, link: FakeLink, kind: str, item_id: str, edit: Any, check: Any
) -> None:
    states = as_dicts(mirror)
    edit(link.registries)
    fetches = link.fetches
    update = await mirror.apply(registry_event(kind, item_id))
    assert check(mirror.home)
    assert link.fetches == fetches + 4
    assert (update.event_type, update.subject) == (f"{kind}_registry_updated", item_id)
    assert update.changed_at == 1772359207.0
    assert as_dicts(mirror) == states


async def test_bad_use_is_a_typed_error(link: FakeLink) -> None:
    mirror = Mirror(link)
    with pytest.raises(MirrorError, match="sync"):
        mirror.home  # noqa: B018
    with pytest.raises(MirrorError, match="sync"):
        await mirror.apply(changed("light.ceiling", None))
    await mirror.sync()
    with pytest.raises(MirrorError, match="call_service"):
        await mirror.apply({"event_type": "call_service", "data": {}, "time_fired": T1})


async def test_follow_syncs_applies_and_syncs_again_after_a_reconnection(link: FakeLink) -> None:
    mirror = Mirror(link, clock=Clock())
    off = state("light.ceiling", "off", {"friendly_name": "Ceiling"}, T1)
    for event in (None, changed("light.ceiling", off), None):
        link.events.put_nowait(event)
    updates = mirror.follow()
    assert (await anext(updates)).event_type == SYNC
    assert link.subscribed == EVENT_TYPES
    assert (await anext(updates)).subject == "light.ceiling"
    assert mirror.home.states["light.ceiling"].state == "off"
    link.states_["person.alice"]["state"] = "not_home"  # missed while disconnected
    assert (await anext(updates)).event_type == SYNC
    assert mirror.home.states["person.alice"].state == "not_home"
    assert mirror.home.states["light.ceiling"].state == "on"  # the server's, not the event's
    await updates.aclose()


async def test_the_verifier_on_a_mirrored_home(mirror: Mirror) -> None:
    verifier = Verifier(
        mirror.home, ['state("light.ceiling") == "off"', 'state("person.alice") == "not_home"']
    )
    assert not verifier.step(mirror.home).done
    await mirror.apply(changed("light.ceiling", state("light.ceiling", "off", {}, T1)))
    assert [s.satisfied for s in verifier.step(mirror.home).conditions] == [True, False]
    away = state("person.alice", "not_home", {"friendly_name": "Alice"}, T2)
    await mirror.apply(changed("person.alice", away))
    report = verifier.step(mirror.home)
    assert report.done
    assert [s.newly_satisfied for s in report.conditions] == [False, True]


async def test_lists_scenes_buttons_and_events_are_mirrored_and_act(link: FakeLink) -> None:
    """The domains of things no room physics moves mirror as the rest: as Home Assistant shows
    them, and acting in the twin (a list's items are not in its state, so only its count)."""
    restart = {"friendly_name": "Restart", "device_class": "restart"}
    bell = {"friendly_name": "Bell", "device_class": "doorbell", "event_types": ["ring"]}
    link.states_ |= {
        "todo.shopping": state("todo.shopping", "2", {"friendly_name": "Shopping"}),
        "scene.movie": state("scene.movie", T0, {"entity_id": ["light.ceiling"]}),
        "button.bell_restart": state("button.bell_restart", "unknown", restart),
        "event.bell": state("event.bell", "2026-03-01T09:59:00.120+00:00", bell),
    }
    link.states_["todo.shopping"]["attributes"]["supported_features"] = 15
    link.states_["event.bell"]["attributes"]["event_type"] = "ring"
    mirror = Mirror(link, "Flat", clock=Clock())
    await mirror.sync()
    assert mirror.skipped == ["light.disabled"]
    assert as_dicts(mirror) == link.states_
    home = mirror.home
    assert home.entities["event.bell"].capabilities == {"event_types": ["ring"]}
    home.call_service("todo", "add_item", {"item": "Tea"}, {"entity_id": "todo.shopping"})
    home.call_service("button", "press", target={"entity_id": "button.bell_restart"})
    home.call_service("scene", "turn_on", target={"entity_id": "scene.movie"})
    assert home.state("todo.shopping").state == "3"
    assert home.state("button.bell_restart").state == T0  # the mirror's clock: the latest state
    assert home.state("scene.movie").state == T0
    pressed = state(
        "button.bell_restart", T1, {"friendly_name": "Restart", "device_class": "restart"}, T1
    )
    await mirror.apply(changed("button.bell_restart", pressed))
    assert mirror.home.state("button.bell_restart").state == T1

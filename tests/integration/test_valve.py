"""Valves: Home Assistant's valve services act on the twin, and HA shows the twin.

Every call goes through Home Assistant and, unchanged, to an independent twin; both must accept it
or refuse it alike, and Home Assistant's state, the integration's twin and the independent twin
must agree, types included. The twin settles a valve within a service call; one that is `opening`
or `closing` (from a home's initial state) gets there when the physics says, and Home Assistant
shows each change at once.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from homeassistant.components.valve import ValveEntity
from homeassistant.components.valve.const import DATA_COMPONENT
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import CONF_HOME, CONF_SOURCE, DOMAIN, SOURCE_IMPORT
from twin.home import Home
from twin.homefile import dump_home
from twin.service import EntityDraft

from .conftest import every_device_home
from .parity import assert_same, call_both, catalog_types, independent_twin

VALVE_TYPES = catalog_types("valve")
WATER_MAIN = "valve.water_main_shutoff"
IRRIGATION = "valve.irrigation_valve"
VALVES = [WATER_MAIN, IRRIGATION]
# Valves on their way, as a home's initial state may have them: (state, position they are at).
MOVING = {WATER_MAIN: ("closing", 100), IRRIGATION: ("opening", 20)}


def set_moving(home: Home, entity_id: str, motion: str, position: int) -> None:
    """Set a valve on its way open or closed from `position`."""
    draft = EntityDraft.of(home.entities[entity_id], home.states[entity_id])
    draft.state = motion
    draft.attributes["is_closed"] = position == 0
    if "current_position" in draft.attributes:
        draft.attributes["current_position"] = position
    else:
        draft.hidden["current_position"] = position
    home.write(draft)


class Valves:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A valve service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "valve", service, target, data)

    def shown(self, entity_id: str) -> tuple[str, bool, int | None]:
        """State, is_closed and current_position as Home Assistant shows them."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return state.state, state.attributes["is_closed"], state.attributes.get("current_position")

    def advance(self, seconds: float) -> None:
        """Move both twins' clocks on; the integration's tells Home Assistant what changed."""
        self.entry.runtime_data.advance(seconds)
        self.other.advance(seconds)
        assert_same(self.hass, self.entry, self.other, "valve")

    def set_moving(self, entity_id: str, motion: str, position: int) -> None:
        """Set a valve moving in both twins, as a reset to such a state would."""
        set_moving(self.other, entity_id, motion, position)
        self.entry.runtime_data.replace(self.other)
        assert_same(self.hass, self.entry, self.other, "valve")

    async def ha_toggle(self, entity_id: str) -> None:
        """Home Assistant's own ValveEntity toggle on the entity, and the twin's toggle."""
        await ValveEntity.async_toggle(self.hass.data[DATA_COMPONENT].get_entity(entity_id))
        self.other.call_service("valve", "toggle", {}, {"entity_id": entity_id})
        assert_same(self.hass, self.entry, self.other, "valve")


@pytest.fixture
async def valves(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Valves:
    """The loaded home's valves and their independent twin."""
    return Valves(hass, loaded_home)


@pytest.fixture
async def moving(hass: HomeAssistant) -> Valves:
    """`every_device_home` with the valves of MOVING on their way, set up."""
    home = every_device_home()
    for entity_id, (motion, position) in MOVING.items():
        set_moving(home, entity_id, motion, position)
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Moving Home",
        data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(home)},
        options={"physics": False},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return Valves(hass, entry)


# --- every device type --------------------------------------------------------------------------


async def test_every_valve_type_is_a_valve_entity(hass: HomeAssistant, valves: Valves) -> None:
    twin = valves.entry.runtime_data.home
    assert sorted(hass.states.async_entity_ids("valve")) == sorted(VALVES)
    types = {twin.devices[twin.entities[e].device_id].device_type for e in VALVES}
    assert sorted(types) == VALVE_TYPES
    assert valves.shown(IRRIGATION) == ("closed", True, 0)
    assert valves.shown(WATER_MAIN) == ("open", False, None)
    assert_same(hass, valves.entry, valves.other, "valve")


# --- every service, good and bad data -----------------------------------------------------------

SERVICE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("open_valve", {}),
    ("open_valve", {"position": 50}),
    ("close_valve", {}),
    ("set_valve_position", {"position": 30}),
    ("set_valve_position", {"position": "45"}),
    ("set_valve_position", {"position": 0}),
    ("set_valve_position", {"position": 100}),
    ("set_valve_position", {"position": 101}),
    ("set_valve_position", {"position": "half"}),
    ("set_valve_position", {}),
    ("stop_valve", {}),
    ("toggle", {}),
    ("toggle", {}),
    ("toggle", {"position": 1}),
]
STARTS: list[tuple[str, dict[str, Any]]] = [
    ("open_valve", {}),
    ("close_valve", {}),
    ("set_valve_position", {"position": 50}),
]


async def test_every_service_on_every_valve(valves: Valves) -> None:
    for service, data in SERVICE_CALLS:
        for entity_id in VALVES:
            # From open, closed and part-open (the water main sets no position: it stays put).
            for start, start_data in STARTS:
                await valves.call(start, entity_id, **start_data)
                await valves.call(service, entity_id, **data)


async def test_positions_and_toggles(valves: Valves) -> None:
    await valves.call("set_valve_position", IRRIGATION, position=30)
    assert valves.shown(IRRIGATION) == ("open", False, 30)
    # Never seen moving, a part-open valve toggles closed, as in Home Assistant.
    await valves.call("toggle", IRRIGATION)
    assert valves.shown(IRRIGATION) == ("closed", True, 0)
    # Home Assistant opens a valve that sets positions by setting 100.
    await valves.call("open_valve", IRRIGATION)
    assert valves.shown(IRRIGATION) == ("open", False, 100)
    await valves.call("stop_valve", IRRIGATION)  # settled: nothing to stop
    assert valves.shown(IRRIGATION) == ("open", False, 100)

    await valves.call("close_valve", WATER_MAIN)
    assert valves.shown(WATER_MAIN) == ("closed", True, None)
    await valves.call("toggle", WATER_MAIN)
    assert valves.shown(WATER_MAIN) == ("open", False, None)


REFUSED_CALLS: list[tuple[str, dict[str, Any], str, str]] = [
    ("set_valve_position", {"position": 101}, IRRIGATION, "invalid_data"),
    ("set_valve_position", {"position": -1}, IRRIGATION, "invalid_data"),
    ("set_valve_position", {"position": "half"}, IRRIGATION, "invalid_data"),
    ("set_valve_position", {}, IRRIGATION, "invalid_data"),
    ("close_valve", {"position": 0}, IRRIGATION, "invalid_data"),
    ("set_valve_position", {"position": 50}, WATER_MAIN, "service_not_supported"),
    ("stop_valve", {}, WATER_MAIN, "service_not_supported"),
]


async def test_refused_calls_change_nothing(hass: HomeAssistant, valves: Valves) -> None:
    for service, data, entity_id, code in REFUSED_CALLS:
        before = hass.states.get(entity_id)
        assert await valves.call(service, entity_id, **data) == code, (service, data, entity_id)
        assert hass.states.get(entity_id) is before


# --- moving valves ------------------------------------------------------------------------------


async def test_moving_valves_show_until_stopped_or_arrived(moving: Valves) -> None:
    assert moving.shown(IRRIGATION) == ("opening", False, 20)
    assert moving.shown(WATER_MAIN) == ("closing", False, None)
    assert_same(moving.hass, moving.entry, moving.other, "valve")

    # A valve gets where it was going 2 s after it set off.
    moving.advance(1)
    assert moving.shown(WATER_MAIN) == ("closing", False, None)
    await moving.call("stop_valve", IRRIGATION)
    assert moving.shown(IRRIGATION) == ("open", False, 20)
    moving.advance(1)
    assert moving.shown(WATER_MAIN) == ("closed", True, None)


async def test_a_moving_valve_that_cannot_stop_toggles_the_other_way(moving: Valves) -> None:
    await moving.call("toggle", WATER_MAIN)
    assert moving.shown(WATER_MAIN) == ("open", False, None)
    await moving.call("toggle", IRRIGATION)  # it can stop: it stops
    assert moving.shown(IRRIGATION) == ("open", False, 20)


async def test_home_assistants_own_toggle_rule_agrees_with_the_twins(moving: Valves) -> None:
    """The entity sends toggles to the twin; Home Assistant's ValveEntity would do the same."""
    for entity_id in VALVES:
        for _ in range(3):
            await moving.ha_toggle(entity_id)
    # Part-open after being seen moving, each goes back the other way.
    for motion in ("opening", "closing"):
        moving.set_moving(IRRIGATION, motion, 50)
        await moving.call("stop_valve", IRRIGATION)
        await moving.ha_toggle(IRRIGATION)


async def test_a_toggle_after_a_restart_remembers_the_last_direction(
    hass: HomeAssistant, moving: Valves
) -> None:
    """Home Assistant forgets what it saw when it restarts; the twin keeps it, and decides."""
    moving.set_moving(IRRIGATION, "closing", 60)
    await moving.call("stop_valve", IRRIGATION)
    assert moving.shown(IRRIGATION) == ("open", False, 60)
    assert await hass.config_entries.async_reload(moving.entry.entry_id)
    await hass.async_block_till_done()
    # It was closing when stopped, so it opens (HA's own rule, freshly started, would close it).
    await moving.call("toggle", IRRIGATION)
    assert moving.shown(IRRIGATION) == ("open", False, 100)


# --- many random calls --------------------------------------------------------------------------


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """A valve service and data, valid or not."""
    service = rng.choice(
        ["open_valve", "close_valve", "set_valve_position", "stop_valve", "toggle"]
    )
    if service == "set_valve_position":
        return service, {"position": rng.choice([0, 1, 30, 50, 99, 100, "60", -1, 101, "half"])}
    if rng.random() < 0.1:
        return service, {"position": 50}  # no such field here
    return service, {}


async def test_random_calls_keep_home_assistant_and_the_twins_equal(moving: Valves) -> None:
    """Calls, valves set moving and the clock moving on, in random order."""
    rng = random.Random(20261129)
    refused = calls = on_the_move = 0
    while calls < 400:
        roll = rng.random()
        if roll < 0.08:
            motion = rng.choice(["opening", "closing"])
            moving.set_moving(rng.choice(VALVES), motion, rng.choice([0, 20, 70, 100]))
        elif roll < 0.14:
            moving.advance(rng.choice([1, 2, 5]))
        else:
            service, data = random_call(rng)
            entity_id = rng.choice(VALVES)
            on_the_move += moving.other.states[entity_id].state in ("opening", "closing")
            refused += await moving.call(service, entity_id, **data) is not None
            calls += 1
    # Accepted and refused calls were tried, and calls on moving valves.
    assert 20 < refused < 200
    assert on_the_move >= 10

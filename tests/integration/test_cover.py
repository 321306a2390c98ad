"""Covers: Home Assistant's cover services act on the twin, and HA shows the twin.

Every call goes through Home Assistant and, unchanged, to an independent twin; both must accept it
or refuse it alike, and Home Assistant's state, the integration's twin and the independent twin
must agree, types included. The twin settles a cover within a service call; one that is `opening`
or `closing` (from a home's initial state) moves on until the physics brings it to its end, and
Home Assistant shows each change at once.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from homeassistant.components.cover import CoverEntity
from homeassistant.components.cover.const import DATA_COMPONENT
from homeassistant.core import HomeAssistant
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.homeflow.const import CONF_HOME, CONF_SOURCE, DOMAIN, SOURCE_IMPORT
from twin.home import Home
from twin.homefile import dump_home
from twin.service import EntityDraft

from .conftest import every_device_home
from .parity import assert_same, call_both, catalog_types, independent_twin

COVER_TYPES = catalog_types("cover")
ROLLER_BLIND = "cover.roller_blind"
VENETIAN = "cover.venetian_blind"
CURTAIN = "cover.curtain_motor"
SHADE = "cover.roller_shade"
GARAGE = "cover.garage_door_opener"
WINDOW = "cover.motorised_window"
COVERS = [ROLLER_BLIND, VENETIAN, CURTAIN, SHADE, GARAGE, WINDOW]
# Covers on their way, as a home's initial state may have them: (state, position they are at).
MOVING = {
    ROLLER_BLIND: ("opening", 40),
    CURTAIN: ("closing", 60),
    GARAGE: ("closing", 80),
    WINDOW: ("opening", 0),
}

# State, is_closed, current_position and current_tilt_position.
Shown = tuple[str, bool, int | None, int | None]


def set_moving(home: Home, entity_id: str, motion: str, position: int) -> None:
    """Set a cover on its way open or closed from `position`."""
    draft = EntityDraft.of(home.entities[entity_id], home.states[entity_id])
    draft.state = motion
    draft.attributes["is_closed"] = position == 0
    if "current_position" in draft.attributes:
        draft.attributes["current_position"] = position
    else:
        draft.hidden["current_position"] = position
    home.write(draft)


class Covers:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A cover service both ways; None if accepted, else the (agreed) error code."""
        target = {"entity_id": entity_id}
        return await call_both(self.hass, self.entry, self.other, "cover", service, target, data)

    def shown(self, entity_id: str) -> Shown:
        """What Home Assistant shows of a cover."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        attributes = state.attributes
        return (
            state.state,
            attributes["is_closed"],
            attributes.get("current_position"),
            attributes.get("current_tilt_position"),
        )

    def advance(self, seconds: float) -> None:
        """Move both twins' clocks on; the integration's tells Home Assistant what changed."""
        self.entry.runtime_data.advance(seconds)
        self.other.advance(seconds)
        assert_same(self.hass, self.entry, self.other, "cover")

    def set_moving(self, entity_id: str, motion: str, position: int) -> None:
        """Set a cover moving in both twins, as a reset to such a state would."""
        set_moving(self.other, entity_id, motion, position)
        self.entry.runtime_data.replace(self.other)
        assert_same(self.hass, self.entry, self.other, "cover")

    async def ha_toggle(self, entity_id: str) -> None:
        """Home Assistant's own CoverEntity toggle on the entity, and the twin's toggle."""
        await CoverEntity.async_toggle(self.hass.data[DATA_COMPONENT].get_entity(entity_id))
        self.other.call_service("cover", "toggle", {}, {"entity_id": entity_id})
        assert_same(self.hass, self.entry, self.other, "cover")


@pytest.fixture
async def covers(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Covers:
    """The loaded home's covers and their independent twin."""
    return Covers(hass, loaded_home)


@pytest.fixture
async def moving(hass: HomeAssistant) -> Covers:
    """`every_device_home` with the covers of MOVING on their way, set up."""
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
    return Covers(hass, entry)


# --- every device type --------------------------------------------------------------------------


async def test_every_cover_type_is_a_cover_entity(hass: HomeAssistant, covers: Covers) -> None:
    twin = covers.entry.runtime_data.home
    assert sorted(hass.states.async_entity_ids("cover")) == sorted(COVERS)
    types = {twin.devices[twin.entities[e].device_id].device_type for e in COVERS}
    assert sorted(types) == COVER_TYPES
    speeds = hass.states.get(WINDOW).attributes["supported_speeds"]
    assert speeds == ["silent", "fast", "default"]
    assert_same(hass, covers.entry, covers.other, "cover")


# --- every service, good and bad data -----------------------------------------------------------

SERVICE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("open_cover", {}),
    ("open_cover", {"speed": "silent"}),
    ("open_cover", {"speed": "turbo"}),
    ("open_cover", {"position": 50}),
    ("close_cover", {}),
    ("close_cover", {"speed": "fast"}),
    ("close_cover", {"speed": 3}),
    ("set_cover_position", {"position": 40}),
    ("set_cover_position", {"position": "70"}),
    ("set_cover_position", {"position": 0}),
    ("set_cover_position", {"position": 100, "speed": "default"}),
    ("set_cover_position", {"position": 30, "speed": "turbo"}),
    ("set_cover_position", {"position": 101}),
    ("set_cover_position", {"position": "half"}),
    ("set_cover_position", {}),
    ("stop_cover", {}),
    ("stop_cover", {"position": 1}),
    ("toggle", {}),
    ("toggle", {}),
    ("open_cover_tilt", {}),
    ("close_cover_tilt", {}),
    ("stop_cover_tilt", {}),
    ("set_cover_tilt_position", {"tilt_position": 30}),
    ("set_cover_tilt_position", {"tilt_position": -5}),
    ("set_cover_tilt_position", {"position": 30}),
    ("toggle_cover_tilt", {}),
    ("toggle_cover_tilt", {}),
]
STARTS: list[tuple[str, dict[str, Any]]] = [
    ("open_cover", {}),
    ("close_cover", {}),
    ("set_cover_position", {"position": 50}),
]


async def test_every_service_on_every_cover(covers: Covers) -> None:
    for service, data in SERVICE_CALLS:
        for entity_id in COVERS:
            # From open, closed and part-open (a garage door sets no position: it stays put).
            for start, start_data in STARTS:
                await covers.call(start, entity_id, **start_data)
                await covers.call(service, entity_id, **data)


async def test_positions_and_speeds(covers: Covers) -> None:
    await covers.call("set_cover_position", ROLLER_BLIND, position=40)
    assert covers.shown(ROLLER_BLIND) == ("open", False, 40, None)
    # Never seen moving, a part-open cover toggles closed, as in Home Assistant.
    await covers.call("toggle", ROLLER_BLIND)
    assert covers.shown(ROLLER_BLIND) == ("closed", True, 0, None)
    await covers.call("toggle", ROLLER_BLIND)
    assert covers.shown(ROLLER_BLIND) == ("open", False, 100, None)

    await covers.call("open_cover", WINDOW, speed="silent")
    assert covers.shown(WINDOW) == ("open", False, 100, None)
    await covers.call("set_cover_position", WINDOW, position=25, speed="fast")
    assert covers.shown(WINDOW) == ("open", False, 25, None)
    # Home Assistant drops a speed for a cover that has none.
    assert await covers.call("close_cover", ROLLER_BLIND, speed="turbo") is None
    assert covers.shown(ROLLER_BLIND) == ("closed", True, 0, None)

    await covers.call("open_cover", GARAGE)
    assert covers.shown(GARAGE) == ("open", False, None, None)
    await covers.call("stop_cover", GARAGE)  # settled: nothing to stop
    assert covers.shown(GARAGE) == ("open", False, None, None)
    await covers.call("toggle", GARAGE)
    assert covers.shown(GARAGE) == ("closed", True, None, None)


async def test_tilting(covers: Covers) -> None:
    await covers.call("set_cover_tilt_position", VENETIAN, tilt_position=30)
    assert covers.shown(VENETIAN) == ("open", False, 100, 30)
    await covers.call("toggle_cover_tilt", VENETIAN)
    assert covers.shown(VENETIAN) == ("open", False, 100, 0)
    await covers.call("toggle_cover_tilt", VENETIAN)
    assert covers.shown(VENETIAN) == ("open", False, 100, 100)
    await covers.call("close_cover_tilt", VENETIAN)
    await covers.call("stop_cover_tilt", VENETIAN)
    assert covers.shown(VENETIAN) == ("open", False, 100, 0)
    await covers.call("open_cover_tilt", VENETIAN)
    await covers.call("close_cover", VENETIAN)
    assert covers.shown(VENETIAN) == ("closed", True, 0, 100)


REFUSED_CALLS: list[tuple[str, dict[str, Any], str, str]] = [
    ("open_cover", {"speed": "turbo"}, WINDOW, "validation_error"),
    ("set_cover_position", {"position": 50, "speed": "slow"}, WINDOW, "validation_error"),
    ("set_cover_position", {"position": 101}, ROLLER_BLIND, "invalid_data"),
    ("set_cover_position", {"position": "half"}, ROLLER_BLIND, "invalid_data"),
    ("set_cover_position", {}, ROLLER_BLIND, "invalid_data"),
    ("set_cover_tilt_position", {"tilt_position": 120}, VENETIAN, "invalid_data"),
    ("close_cover", {"tilt_position": 0}, VENETIAN, "invalid_data"),
    ("set_cover_position", {"position": 50}, GARAGE, "service_not_supported"),
    ("open_cover_tilt", {}, ROLLER_BLIND, "service_not_supported"),
    ("set_cover_tilt_position", {"tilt_position": 10}, CURTAIN, "service_not_supported"),
    ("toggle_cover_tilt", {}, SHADE, "service_not_supported"),
    ("stop_cover_tilt", {}, WINDOW, "service_not_supported"),
]


async def test_refused_calls_change_nothing(hass: HomeAssistant, covers: Covers) -> None:
    for service, data, entity_id, code in REFUSED_CALLS:
        before = hass.states.get(entity_id)
        assert await covers.call(service, entity_id, **data) == code, (service, data, entity_id)
        assert hass.states.get(entity_id) is before


# --- moving covers ------------------------------------------------------------------------------


async def test_moving_covers_show_until_stopped_or_arrived(moving: Covers) -> None:
    assert moving.shown(ROLLER_BLIND) == ("opening", False, 40, None)
    assert moving.shown(CURTAIN) == ("closing", False, 60, None)
    assert moving.shown(GARAGE) == ("closing", False, None, None)
    assert_same(moving.hass, moving.entry, moving.other, "cover")

    await moving.call("stop_cover", ROLLER_BLIND)
    assert moving.shown(ROLLER_BLIND) == ("open", False, 40, None)
    await moving.call("set_cover_position", WINDOW, position=20)
    assert moving.shown(WINDOW) == ("open", False, 20, None)
    # A toggle stops a moving cover that can stop.
    await moving.call("toggle", GARAGE)
    assert moving.shown(GARAGE) == ("open", False, None, None)

    # The curtain closes at 10 % a second: not there after 5 s, closed after 6.
    moving.advance(5)
    assert moving.shown(CURTAIN) == ("closing", False, 60, None)
    moving.advance(1)
    assert moving.shown(CURTAIN) == ("closed", True, 0, None)


async def test_home_assistants_own_toggle_rule_agrees_with_the_twins(moving: Covers) -> None:
    """The entity sends toggles to the twin; Home Assistant's CoverEntity would do the same."""
    for entity_id in COVERS:
        for _ in range(3):
            await moving.ha_toggle(entity_id)
    # Part-open after being seen moving, each goes back the other way.
    for entity_id, (motion, _) in MOVING.items():
        moving.set_moving(entity_id, motion, 50)
        await moving.call("stop_cover", entity_id)
        await moving.ha_toggle(entity_id)


async def test_a_toggle_after_a_restart_remembers_the_last_direction(
    hass: HomeAssistant, moving: Covers
) -> None:
    """Home Assistant forgets what it saw when it restarts; the twin keeps it, and decides."""
    await moving.call("stop_cover", CURTAIN)
    assert moving.shown(CURTAIN) == ("open", False, 60, None)
    assert await hass.config_entries.async_reload(moving.entry.entry_id)
    await hass.async_block_till_done()
    # It was closing when stopped, so it opens (HA's own rule, freshly started, would close it).
    await moving.call("toggle", CURTAIN)
    assert moving.shown(CURTAIN) == ("open", False, 100, None)


# --- many random calls --------------------------------------------------------------------------

MOVES = ["open_cover", "close_cover", "set_cover_position", "stop_cover", "toggle"]
TILTS = [
    "open_cover_tilt",
    "close_cover_tilt",
    "stop_cover_tilt",
    "set_cover_tilt_position",
    "toggle_cover_tilt",
]


def random_call(rng: random.Random) -> tuple[str, dict[str, Any], str]:
    """A cover service, data (valid or not) and a cover; tilts mostly go to the one that tilts."""
    position = rng.choice([0, 1, 30, 50, 99, 100, "60", -1, 101, "half"])
    speed = rng.choice(["silent", "fast", "default", "turbo"])
    if rng.random() < 0.7:
        service, entity_id = rng.choice(MOVES), rng.choice(COVERS)
    else:
        service = rng.choice(TILTS)
        entity_id = VENETIAN if rng.random() < 0.7 else rng.choice(COVERS)
    data: dict[str, Any] = {}
    if service in ("open_cover", "close_cover"):
        data = rng.choice([{}, {}, {"speed": speed}])
    elif service == "set_cover_position":
        data = rng.choice([{"position": position}, {"position": position, "speed": speed}])
    elif service == "set_cover_tilt_position":
        data = {"tilt_position": position}
    elif rng.random() < 0.1:
        data = {"position": 50}  # no such field here
    return service, data, entity_id


async def test_random_calls_keep_home_assistant_and_the_twins_equal(moving: Covers) -> None:
    """Calls, covers set moving and the clock moving on, in random order."""
    rng = random.Random(20261129)
    refused = calls = on_the_move = 0
    while calls < 400:
        roll = rng.random()
        if roll < 0.06:
            motion = rng.choice(["opening", "closing"])
            moving.set_moving(rng.choice(COVERS), motion, rng.choice([0, 20, 70, 100]))
        elif roll < 0.12:
            moving.advance(rng.choice([1, 3, 8, 15]))
        else:
            service, data, entity_id = random_call(rng)
            on_the_move += moving.other.states[entity_id].state in ("opening", "closing")
            refused += await moving.call(service, entity_id, **data) is not None
            calls += 1
    # Accepted and refused calls were tried, and calls on moving covers.
    assert 20 < refused < 200
    assert on_the_move >= 10

"""The home model and Home Assistant's service layer: registries, targets, errors, snapshots."""

from __future__ import annotations

import pytest

from twin.errors import (
    EntityNotFoundError,
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    TargetNotFoundError,
)
from twin.home import Home
from twin.registry import Area, Device, EntityEntry, Floor


@pytest.fixture
def home() -> Home:
    """Two floors; a kitchen with a kettle plug, a bedroom with an ensuite, a hall switch."""
    home = Home("Test home")
    home.add_floor(Floor("ground", "Ground floor", 0))
    home.add_floor(Floor("upstairs", "Upstairs", 1))
    home.add_area(Area("kitchen", "Kitchen", "ground"))
    home.add_area(Area("hall", "Hall", "ground"))
    home.add_area(Area("bedroom", "Bedroom", "upstairs"))
    home.add_area(Area("ensuite", "Ensuite", "upstairs", parent_id="bedroom"))
    home.add_device(Device("kettle", "Kettle", "Acme", "K1", "kitchen"))
    home.add_device(Device("hallswitch", "Hall switch", "Acme", "S1", "hall"))
    home.add_device(Device("towel", "Towel rail", "Acme", "T1", "ensuite"))
    home.add_entity(EntityEntry("switch.kettle", "Kettle", device_id="kettle"), "off")
    home.add_entity(
        EntityEntry("sensor.kettle_power", "Kettle power", "kettle", unit_of_measurement="W"),
        "0.0",
    )
    home.add_entity(
        EntityEntry(
            "switch.kettle_child_lock", "Kettle child lock", "kettle", entity_category="config"
        ),
        "off",
    )
    # The hall switch's device is in the hall, but the entity itself was moved to the kitchen.
    home.add_entity(
        EntityEntry("switch.hall", "Hall switch", device_id="hallswitch", area_id="kitchen"), "off"
    )
    home.add_entity(EntityEntry("switch.towel_rail", "Towel rail", device_id="towel"), "off")
    home.add_entity(EntityEntry("switch.bedroom_fan", "Bedroom fan", area_id="bedroom"), "off")
    return home


def on(home: Home) -> set[str]:
    return {s.entity_id for s in home.states.values() if s.state == "on"}


def test_state_carries_entity_attributes(home: Home) -> None:
    power = home.state("sensor.kettle_power")
    assert power.attributes == {"unit_of_measurement": "W", "friendly_name": "Kettle power"}
    assert power.as_dict()["last_changed"] == "2026-01-01T00:00:00+00:00"
    assert home.area_of("switch.kettle") == "kitchen"
    assert home.area_of("switch.hall") == "kitchen"


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ({"entity_id": "switch.kettle"}, {"switch.kettle"}),
        ({"entity_id": ["switch.kettle", "switch.hall"]}, {"switch.kettle", "switch.hall"}),
        ({"entity_id": "switch.kettle, SWITCH.HALL"}, {"switch.kettle", "switch.hall"}),
        (
            {"entity_id": "all"},
            {
                "switch.kettle",
                "switch.hall",
                "switch.towel_rail",
                "switch.bedroom_fan",
                "switch.kettle_child_lock",
            },
        ),
        # An area holds the entities placed in it and those of its devices that name no area;
        # config entities are only reached by id.
        ({"area_id": "kitchen"}, {"switch.kettle", "switch.hall"}),
        ({"area_id": "hall"}, set()),
        # Home Assistant has no nested areas: the ensuite is not part of the bedroom target.
        ({"area_id": "bedroom"}, {"switch.bedroom_fan"}),
        ({"floor_id": "upstairs"}, {"switch.bedroom_fan", "switch.towel_rail"}),
        ({"device_id": "kettle"}, {"switch.kettle"}),
        (
            {"device_id": ["kettle"], "entity_id": "switch.kettle_child_lock"},
            {"switch.kettle", "switch.kettle_child_lock"},
        ),
    ],
)
def test_targets_resolve_as_home_assistant_does(
    home: Home, target: dict[str, object], expected: set[str]
) -> None:
    result = home.call_service("switch", "turn_on", target=target)
    assert set(result.entity_ids) == expected
    assert on(home) == expected


def test_target_keys_may_be_in_data(home: Home) -> None:
    home.call_service("switch", "turn_on", {"area_id": "kitchen"})
    assert on(home) == {"switch.kettle", "switch.hall"}


@pytest.mark.parametrize(
    ("domain", "service", "data", "error", "message"),
    [
        (
            "switch",
            "fly",
            {"entity_id": "switch.kettle"},
            ServiceNotFoundError,
            "switch offers: turn_on, turn_off, toggle",
        ),
        ("garage", "open", {"entity_id": "switch.kettle"}, ServiceNotFoundError, "no domain"),
        ("switch", "turn_on", {"entity_id": "switch.nope"}, EntityNotFoundError, "switch.nope"),
        (
            "switch",
            "turn_on",
            {"entity_id": "not an id"},
            InvalidServiceDataError,
            "not a valid value for dictionary value @ data['entity_id']",
        ),
        (
            "switch",
            "turn_on",
            {"entity_id": "switch.kettle", "speed": 3},
            InvalidServiceDataError,
            "extra keys not allowed @ data['speed']",
        ),
        ("switch", "turn_on", {"area_id": "loft"}, TargetNotFoundError, "No area with id 'loft'"),
        ("switch", "turn_on", {"floor_id": "attic"}, TargetNotFoundError, "No floor"),
        ("switch", "turn_on", {"device_id": "x"}, TargetNotFoundError, "No device"),
        ("switch", "turn_on", {"label_id": "x"}, TargetNotFoundError, "Labels"),
        ("switch", "turn_on", {}, InvalidServiceDataError, "needs a target"),
        ("switch", "turn_on", {"entity_id": "none"}, InvalidServiceDataError, "needs a target"),
        (
            "switch",
            "turn_on",
            {"entity_id": "sensor.kettle_power"},
            ServiceNotSupportedError,
            "not a switch entity",
        ),
        (
            "homeassistant",
            "restart",
            {"entity_id": "switch.kettle"},
            ServiceNotFoundError,
            "turn_on, turn_off, toggle",
        ),
    ],
)
def test_bad_calls_raise_typed_errors_and_change_nothing(
    home: Home,
    domain: str,
    service: str,
    data: dict[str, object],
    error: type[Exception],
    message: str,
) -> None:
    before = dict(home.states)
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        home.call_service(domain, service, data)
    assert home.states == before


def test_one_unknown_entity_stops_the_whole_call(home: Home) -> None:
    with pytest.raises(EntityNotFoundError):
        home.call_service("switch", "turn_on", {"entity_id": ["switch.kettle", "switch.nope"]})
    assert on(home) == set()


def test_clock_stamps_changes_like_home_assistant(home: Home) -> None:
    home.now += 60
    (changed,) = home.call_service("switch", "turn_on", {"entity_id": "switch.kettle"}).changed
    assert changed.last_changed == changed.last_updated == home.now
    home.now += 60
    # Turning on what is on writes nothing, as Home Assistant skips identical states.
    result = home.call_service("switch", "turn_on", {"entity_id": "switch.kettle"})
    assert result.entity_ids == ("switch.kettle",)
    assert result.changed == ()
    assert home.state("switch.kettle").last_updated == home.now - 60


def test_cross_domain_services_skip_domains_without_them(home: Home) -> None:
    result = home.call_service(
        "homeassistant", "turn_on", target={"entity_id": ["switch.kettle", "sensor.kettle_power"]}
    )
    assert result.entity_ids == ("switch.kettle",)
    home.call_service("homeassistant", "toggle", target={"area_id": "kitchen"})
    assert on(home) == {"switch.hall"}


def test_snapshot_restore_and_copy_are_independent(home: Home) -> None:
    saved = home.snapshot()
    fork = home.copy()
    home.call_service("switch", "turn_on", {"entity_id": "all"})
    home.now += 10
    assert on(fork) == set()
    fork.call_service("switch", "turn_on", {"entity_id": "switch.towel_rail"})
    assert home.state("switch.towel_rail").state == "on"
    home.restore(saved)
    assert on(home) == set()
    assert home.now == saved.now
    assert on(fork) == {"switch.towel_rail"}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda h: h.add_floor(Floor("ground", "Again")), "already a floor"),
        (lambda h: h.add_area(Area("attic", "Attic", "roof")), "No floor with id 'roof'"),
        (lambda h: h.add_area(Area("nook", "Nook", parent_id="x")), "No area with id 'x'"),
        (lambda h: h.add_device(Device("d", "D", area_id="x")), "No area"),
        (lambda h: h.add_entity(EntityEntry("switch.Bad", "Bad"), "off"), "not a valid entity"),
        (lambda h: h.add_entity(EntityEntry("sun.sun", "Sun"), "above_horizon"), "not modelled"),
        (lambda h: h.add_entity(EntityEntry("switch.kettle", "Again"), "off"), "already"),
        (lambda h: h.add_entity(EntityEntry("switch.x", "X", device_id="y"), "off"), "No device"),
    ],
)
def test_bad_definitions_are_refused(home: Home, build: object, message: str) -> None:
    with pytest.raises(HomeDefinitionError, match=message):
        build(home)  # type: ignore[operator]

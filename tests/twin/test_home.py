"""The home model and Home Assistant's service layer: registries, targets, errors, snapshots."""

from __future__ import annotations

import copy
import json
import pickle
import re
from typing import Any

import pytest

from twin.catalog import load_catalog
from twin.errors import (
    EntityNotFoundError,
    HomeDefinitionError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    ServiceNotSupportedError,
    ServiceValidationError,
    TargetNotFoundError,
    TwinError,
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
    "change",
    [
        lambda attributes: attributes.__setitem__("friendly_name", "Hacked"),
        lambda attributes: attributes.update(friendly_name="Hacked"),
        lambda attributes: attributes.pop("friendly_name"),
        lambda attributes: attributes.setdefault("brightness", 999),
        lambda attributes: attributes.clear(),
        lambda attributes: attributes.__delitem__("friendly_name"),
        lambda attributes: attributes.__ior__({"friendly_name": "Hacked"}),
    ],
)
def test_a_states_attributes_cannot_be_changed_in_place(home: Home, change: Any) -> None:
    """Only a service call changes the twin: attributes (shared with snapshots) and the hidden
    memory are read-only, so a restore gives back exactly what was saved."""
    saved = home.snapshot()
    state = home.state("switch.kettle")
    for attributes in (state.attributes, state.hidden):
        with pytest.raises(TypeError, match="read-only"):
            change(attributes)
    home.restore(saved)
    assert home.state("switch.kettle").attributes["friendly_name"] == "Kettle"


def test_read_only_attributes_pickle_copy_and_serialise_as_dicts(home: Home) -> None:
    state = home.state("sensor.kettle_power")
    assert pickle.loads(pickle.dumps(state)) == state
    assert copy.deepcopy(state).attributes == state.attributes
    assert json.loads(json.dumps(state.attributes)) == dict(state.attributes)
    mutable = dict(state.attributes)
    mutable["friendly_name"] = "Copy"
    assert state.attributes["friendly_name"] == "Kettle power"


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


# --- strict=False: Home Assistant's own way ------------------------------------------------------


@pytest.fixture
def appliances() -> Home:
    """Two humidifiers with different modes, three fans (one without speeds), a plug."""
    catalog = load_catalog()
    home = Home("Appliances")
    home.add_floor(Floor("ground", "Ground floor", 0))
    home.add_area(Area("kitchen", "Kitchen", "ground"))
    home.add_area(Area("hall", "Hall", "ground"))
    catalog["humidifier"].install(home, "hum", "Humidifier", "kitchen")
    catalog["dehumidifier"].install(home, "dehum", "Dehumidifier", "hall")
    catalog["tower_fan"].install(home, "tower", "Tower fan", "kitchen")
    catalog["pedestal_fan"].install(home, "pedestal", "Pedestal fan", "hall")
    catalog["bathroom_exhaust_fan"].install(home, "exhaust", "Exhaust fan", "hall")
    catalog["smart_plug"].install(home, "plug", "Plug", "kitchen")
    return home


@pytest.mark.parametrize(
    "target",
    [
        {"entity_id": ["switch.kettle", "switch.nope"]},
        {"entity_id": "switch.kettle, light.nope"},
        {"entity_id": ["switch.kettle", "sensor.kettle_power"]},
        {"area_id": ["loft", "kitchen"]},
        {"device_id": ["kettle", "x"], "floor_id": "attic"},
        {"entity_id": "switch.kettle", "label_id": "cosy"},
    ],
)
def test_lenient_calls_skip_what_they_cannot_find(home: Home, target: dict[str, object]) -> None:
    """Unknown ids and entities of another domain are skipped, as Home Assistant skips them."""
    with pytest.raises(TwinError):
        home.call_service("switch", "turn_on", target=target)
    assert on(home) == set()
    result = home.call_service("switch", "turn_on", target=target, strict=False)
    assert "switch.kettle" in result.entity_ids
    assert "switch.kettle" in on(home)


@pytest.mark.parametrize(
    "target",
    [
        {"entity_id": "none"},
        {"entity_id": []},
        {"entity_id": "switch.nope"},
        {"area_id": "hall"},
        {"floor_id": "attic"},
    ],
)
def test_a_lenient_call_that_reaches_nothing_does_nothing(
    home: Home, target: dict[str, object]
) -> None:
    before = dict(home.states)
    assert home.call_service("switch", "toggle", target=target, strict=False).entity_ids == ()
    assert home.states == before


@pytest.mark.parametrize(
    ("domain", "service", "fields", "error"),
    [
        ("switch", "turn_on", {}, InvalidServiceDataError),
        ("switch", "turn_on", {"entity_id": "switch.kettle", "speed": 3}, InvalidServiceDataError),
        ("switch", "turn_on", {"entity_id": "not an id"}, InvalidServiceDataError),
        ("switch", "fly", {"entity_id": "switch.kettle"}, ServiceNotFoundError),
        ("sensor", "turn_on", {"entity_id": "sensor.kettle_power"}, ServiceNotFoundError),
        ("homeassistant", "turn_on", {"entity_id": "all"}, InvalidServiceDataError),
        ("homeassistant", "turn_on", {"entity_id": "none"}, InvalidServiceDataError),
        ("homeassistant", "restart", {}, ServiceNotFoundError),
    ],
)
def test_lenient_calls_still_refuse_bad_calls(
    home: Home, domain: str, service: str, fields: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        home.call_service(domain, service, fields, strict=False)
    assert on(home) == set()


def test_lenient_domains_and_services_ignore_case(home: Home) -> None:
    home.call_service("SWITCH", "Turn_On", {"entity_id": "SWITCH.KETTLE"}, strict=False)
    assert on(home) == {"switch.kettle"}


def test_each_entity_takes_a_lenient_call_on_its_own(appliances: Home) -> None:
    """The humidifier has a sleep mode and changes; the dehumidifier has none and says so."""
    target = {"entity_id": ["humidifier.dehumidifier", "humidifier.humidifier"]}
    with pytest.raises(ServiceValidationError, match=r"humidifier\.dehumidifier"):
        appliances.call_service("humidifier", "set_mode", {"mode": "sleep"}, target)
    assert appliances.state("humidifier.humidifier").attributes["mode"] == "auto"
    with pytest.raises(ServiceValidationError, match=r"humidifier\.dehumidifier"):
        appliances.call_service("humidifier", "set_mode", {"mode": "sleep"}, target, strict=False)
    assert appliances.state("humidifier.humidifier").attributes["mode"] == "sleep"
    assert appliances.state("humidifier.dehumidifier").attributes["mode"] == "set"


def test_the_first_of_several_errors_is_home_assistants(appliances: Home) -> None:
    """entity_id all: the entities in the order they were added; named ones: the order of the
    set Home Assistant builds from the domain's entities, in the order they were added."""
    with pytest.raises(ServiceValidationError, match=r"humidifier\.humidifier"):
        appliances.call_service(
            "humidifier", "set_mode", {"mode": "turbo"}, strict=False, target={"entity_id": "all"}
        )
    order: set[str] = set()
    for entity_id in ("humidifier.humidifier", "humidifier.dehumidifier"):
        order.add(entity_id)
    with pytest.raises(ServiceValidationError, match=re.escape(f"for {next(iter(order))},")):
        appliances.call_service(
            "humidifier",
            "set_mode",
            {"mode": "turbo"},
            strict=False,
            target={"entity_id": ["humidifier.dehumidifier", "humidifier.humidifier"]},
        )


def test_a_named_entity_without_the_feature_stops_a_lenient_call(appliances: Home) -> None:
    """Explicitly named, the exhaust fan (no speeds) refuses before any fan changes; reached
    through its area it is skipped."""
    named = {"entity_id": ["fan.pedestal_fan", "fan.exhaust_fan"]}
    with pytest.raises(ServiceNotSupportedError, match=r"fan\.exhaust_fan"):
        appliances.call_service("fan", "set_percentage", {"percentage": 50}, named, strict=False)
    assert appliances.state("fan.pedestal_fan").state == "off"
    result = appliances.call_service(
        "fan", "set_percentage", {"percentage": 50}, {"area_id": "hall"}, strict=False
    )
    assert result.entity_ids == ("fan.pedestal_fan",)
    assert appliances.state("fan.pedestal_fan").attributes["percentage"] == 50


def test_lenient_cross_domain_calls_act_per_domain(appliances: Home) -> None:
    """homeassistant.turn_on: each domain its own call; the plug refuses a percentage, the fan
    takes it all the same."""
    target = {"entity_id": ["switch.plug", "fan.tower_fan", "sensor.plug_power", "vacuum.nope"]}
    with pytest.raises(InvalidServiceDataError, match=r"switch\.turn_on"):
        appliances.call_service(
            "homeassistant", "turn_on", {"percentage": 50}, target, strict=False
        )
    assert appliances.state("fan.tower_fan").attributes["percentage"] == 50
    assert appliances.state("switch.plug").state == "off"
    result = appliances.call_service("homeassistant", "turn_on", target=target, strict=False)
    assert result.entity_ids == ("fan.tower_fan", "switch.plug")
    assert appliances.call_service("homeassistant", "toggle", {}, strict=False).entity_ids == ()


def test_lenient_cross_domain_calls_name_what_an_area_reaches(appliances: Home) -> None:
    """homeassistant.turn_on names the hall's fans to fan.turn_on, so a fan that cannot be turned
    on refuses the fans' call, where fan.turn_on on the hall skips it; the dehumidifier's own
    call goes ahead."""
    appliances.add_entity(EntityEntry("fan.old", "Old fan", area_id="hall"), "off")
    hall = {"area_id": "hall"}
    with pytest.raises(ServiceNotSupportedError, match=r"fan\.old"):
        appliances.call_service("homeassistant", "turn_on", target=hall, strict=False)
    assert on(appliances) == {"humidifier.dehumidifier"}
    result = appliances.call_service("fan", "turn_on", target=hall, strict=False)
    assert set(result.entity_ids) == {"fan.pedestal_fan", "fan.exhaust_fan"}


def test_an_error_before_any_entity_comes_before_those_of_several_entities(
    appliances: Home,
) -> None:
    """Two fans refuse the preset, each on its own, after the plug refused the key outright:
    Home Assistant raises the plug's error, though fan comes before switch."""
    target = {"entity_id": ["fan.tower_fan", "fan.pedestal_fan", "switch.plug"]}
    with pytest.raises(InvalidServiceDataError, match=r"switch\.turn_on"):
        appliances.call_service(
            "homeassistant", "turn_on", {"preset_mode": "turbo"}, target, strict=False
        )
    with pytest.raises(ServiceValidationError):
        appliances.call_service(
            "homeassistant",
            "turn_on",
            {"preset_mode": "turbo"},
            {"entity_id": ["fan.tower_fan", "fan.pedestal_fan"]},
            strict=False,
        )


# --- one path: resolve, plan, apply, in either mode -----------------------------------------------


@pytest.mark.parametrize(
    ("domain", "service", "target"),
    [
        ("switch", "turn_on", {"entity_id": "switch.kettle"}),
        ("switch", "toggle", {"area_id": "kitchen"}),
        ("switch", "turn_on", {"floor_id": "upstairs"}),
        ("switch", "turn_off", {"entity_id": "all"}),
        ("homeassistant", "toggle", {"device_id": ["kettle", "towel"]}),
    ],
)
def test_strict_and_lenient_calls_take_one_path_and_agree_where_home_assistant_does(
    home: Home, monkeypatch: pytest.MonkeyPatch, domain: str, service: str, target: dict[str, Any]
) -> None:
    """Both modes resolve, plan and apply (a lenient homeassistant.* call plans each domain's
    call the same way); where Home Assistant acts as the strict twin does, they agree."""
    steps: list[str] = []
    applied: list[bool] = []
    resolve, plan, apply = Home.resolve, Home.plan, Home.apply

    def traced_apply(self: Home, plan: Any) -> Any:
        steps.append("apply")
        applied.append(plan.strict)
        return apply(self, plan)

    monkeypatch.setattr(
        Home, "resolve", lambda *a, **k: steps.append("resolve") or resolve(*a, **k)
    )
    monkeypatch.setattr(Home, "plan", lambda *a: steps.append("plan") or plan(*a))
    monkeypatch.setattr(Home, "apply", traced_apply)
    lenient = home.copy()
    strict_result = home.call_service(domain, service, target=target)
    assert steps == ["resolve", "plan", "apply"]
    steps.clear()
    lenient_result = lenient.call_service(domain, service, target=target, strict=False)
    assert steps[:2] == ["resolve", "plan"]
    assert steps[2:] == ["resolve", "plan"] * (len(steps[2:]) // 2) + ["apply"]
    assert applied == [True, False]
    assert set(lenient_result.entity_ids) == set(strict_result.entity_ids) != set()
    assert lenient.states == home.states


def test_the_modes_differ_only_where_home_assistant_adjusts(home: Home) -> None:
    """An unknown id in the target: strict refuses it while resolving; lenient skips it, and the
    plan acts on the rest, as Home Assistant does."""
    target = {"entity_id": ["switch.kettle", "switch.nope"]}
    with pytest.raises(EntityNotFoundError):
        home.resolve("switch", "turn_on", target=target)
    plan = home.plan(home.resolve("switch", "turn_on", target=target, strict=False))
    assert [entry.entity_id for step in plan.steps for entry in step.entries] == ["switch.kettle"]
    assert not plan.strict
    assert home.apply(plan).entity_ids == ("switch.kettle",)
    assert on(home) == {"switch.kettle"}


def test_planning_changes_nothing_and_a_plan_applies_once_resolved(home: Home) -> None:
    before = dict(home.states)
    call = home.resolve("switch", "turn_on", target={"area_id": "kitchen"})
    assert call.selection.indirect == ("sensor.kettle_power", "switch.hall", "switch.kettle")
    plan = home.plan(call)
    assert home.states == before
    assert home.apply(plan).entity_ids == ("switch.hall", "switch.kettle")
    assert on(home) == {"switch.kettle", "switch.hall"}

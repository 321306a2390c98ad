"""The agent's tools on homes HomeFlow did not make (tests/twin/any_home.py): no floors, no
areas, one entity or 500, names in any Unicode, a light whose imported `color_mode` is a list.
Every call gives a JSON result, a success or a typed error that changed nothing, never an
exception nor an `internal_error`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from tests.twin.any_home import BROKEN_LIGHT, homes, many_entities, with_broken_light
from twin.auditor import DEFAULT_POLICY
from twin.domains import domain_of
from twin.errors import InvalidEntityStateError
from twin.home import Home
from twin.tools import call_service, describe, get_state, list_entities, pyexec, run_tool

LIGHT_DATA = ({}, {"brightness": 30}, {"color_temp_kelvin": 3000}, {"flash": "short"})


def calls(home: Home) -> list[tuple[str, dict[str, Any]]]:
    """Every tool on every entity and place of the home, as a model could call it: each
    service of each entity's domain without data, each area and floor by id and by name."""
    made: list[tuple[str, dict[str, Any]]] = [("list_entities", {})]
    for area in home.areas.values():
        made += [("list_entities", {"area": area.area_id}), ("list_entities", {"area": area.name})]
        target = {"area_id": area.area_id}
        made.append(("call_service", {"domain": "light", "service": "turn_on", "target": target}))
    for floor in home.floors.values():
        made.append(("list_entities", {"floor": floor.name}))
        target = {"floor_id": floor.floor_id}
        made.append(
            ("call_service", {"domain": "homeassistant", "service": "toggle", "target": target})
        )
    for entity_id, entry in home.entities.items():
        made += [("get_state", {"entity_id": entity_id}), ("describe", {"entity_id": entity_id})]
        for service in domain_of(entry.domain).services:
            target = {"entity_id": entity_id}
            made.append(
                ("call_service", {"domain": entry.domain, "service": service, "target": target})
            )
        code = f"call_service({entry.domain!r}, 'turn_on', entity_id={entity_id!r})\n"
        code += f"print(state({entity_id!r}))"
        made.append(("pyexec", {"code": code}))
    return made


def check_every_call(home: Home) -> list[dict[str, Any]]:
    """Run `calls(home)` through run_tool, with and without the auditor: each result is JSON,
    and each failure a typed error that left the home as it was. The failures, in order."""
    failures = []
    for name, arguments in calls(home):
        for policy in (None, DEFAULT_POLICY):
            before = dict(home.states)
            result = run_tool(home, name, json.dumps(arguments), policy)
            assert json.loads(json.dumps(result)) == result
            if result.get("success", True) is False:
                code = result["error"]["code"]
                assert code != "internal_error", (name, arguments, result)
                assert result["error"]["message"]
                assert home.states == before, (name, arguments)
                failures.append(result)
    return failures


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes())
def test_every_tool_gives_a_result_on_any_home(home: Home) -> None:
    check_every_call(home)
    listed = list_entities(home)["entities"]
    assert [item["entity_id"] for item in listed] == sorted(home.entities)
    assert {item["name"] for item in listed} == {entry.name for entry in home.entities.values()}


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(homes(max_devices=3))
def test_a_light_with_a_list_for_color_mode_is_a_typed_error_on_any_home(home: Home) -> None:
    home = with_broken_light(home)
    failures = check_every_call(home)
    on_the_light = [f for f in failures if BROKEN_LIGHT in f["error"]["message"]]
    assert on_the_light
    assert {f["error"]["code"] for f in on_the_light} <= {"invalid_state", "entity_not_found"}


def test_the_color_mode_list_light_through_every_tool() -> None:
    """Reads show the light as it is; every light service, direct, through run_tool, pyexec, the
    auditor and Home Assistant's lenient path, refuses it as invalid_state naming color_mode."""
    home = with_broken_light(Home())
    before = dict(home.states)
    assert [item["entity_id"] for item in list_entities(home)["entities"]] == [BROKEN_LIGHT]
    assert get_state(home, BROKEN_LIGHT)["attributes"]["color_mode"] == ["color_temp"]
    assert set(describe(home, BROKEN_LIGHT)["services"]) == {"turn_on", "turn_off", "toggle"}
    target = {"entity_id": BROKEN_LIGHT}
    for service in ("turn_on", "turn_off", "toggle"):
        for data in LIGHT_DATA if service != "turn_off" else ({},):
            for policy in (None, DEFAULT_POLICY):
                result = call_service(home, "light", service, target, data, policy)
                assert result["error"]["code"] == "invalid_state", result
                assert "color_mode" in result["error"]["message"]
            arguments = {"domain": "light", "service": service, "target": target, "data": data}
            assert run_tool(home, "call_service", arguments)["error"]["code"] == "invalid_state"
    code = f"call_service('light', 'turn_on', entity_id={BROKEN_LIGHT!r})"
    assert pyexec(home, code)["error"]["code"] == "invalid_state"
    with pytest.raises(InvalidEntityStateError, match="color_mode"):
        home.call_service("light", "turn_on", target=target, strict=False)
    assert home.states == before


def test_a_valid_light_beside_the_broken_one_still_changes_through_the_area() -> None:
    """Home Assistant's lenient path: each entity takes the call on its own, so the valid light
    in the area turns on and the broken one's typed error is raised afterwards."""
    home = many_entities(60)
    area = next(iter(home.areas))
    lights = [e for e in home.entities if e.startswith("light.") and home.area_of(e) == area]
    home.call_service("light", "turn_off", target={"entity_id": lights})
    with_broken_light(home, area)
    with pytest.raises(InvalidEntityStateError):
        home.call_service("light", "turn_on", target={"area_id": area}, strict=False)
    assert lights
    assert all(home.states[e].state == "on" for e in lights)
    assert home.states[BROKEN_LIGHT].attributes["color_mode"] == ["color_temp"]


def test_every_tool_on_a_home_of_500_entities() -> None:
    home = many_entities(500)
    assert len(list_entities(home)["entities"]) == len(home.entities) >= 500
    check_every_call(home)

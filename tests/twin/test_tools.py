"""The five tools over a twin home: result shapes, filters, errors, schemas and the dispatcher."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import pytest

from twin.auditor import CONFIRMING_POLICY, DEFAULT_POLICY
from twin.catalog import load_catalog
from twin.home import Home
from twin.homefile import load_home
from twin.manual import describe as manual_describe
from twin.surface import jsonable
from twin.tools import (
    TOOL_NAMES,
    TOOL_SCHEMAS,
    call_service,
    describe,
    get_state,
    list_entities,
    pyexec,
    run_tool,
)

BULB = "light.kitchen_bulb"
AC = "climate.bedroom_ac"
FRONT_DOOR = "lock.front_door"


@pytest.fixture
def home() -> Home:
    """The demo home (kitchen, living room, bedroom with an ensuite) with a colour bulb in the
    kitchen, an air conditioner in the bedroom and a front door lock in the living room."""
    home = load_home(files("twin.examples") / "demo_home.yaml")
    catalog = load_catalog()
    catalog["color_bulb"].install(home, "bulb", "Kitchen bulb", "kitchen")
    catalog["split_air_conditioner"].install(home, "ac", "Bedroom AC", "bedroom")
    catalog["smart_door_lock"].install(home, "door", "Front door", "living_room")
    return home


def ids(result: dict[str, Any]) -> list[str]:
    return [item["entity_id"] for item in result["entities"]]


def roundtrips(result: dict[str, Any]) -> bool:
    """The result is what JSON gives back: no tuples, only JSON types."""
    return bool(json.loads(json.dumps(result)) == result)


def test_list_entities_lists_every_entity_sorted_and_compact(home: Home) -> None:
    result = list_entities(home)
    assert ids(result) == sorted(home.states)
    kettle = next(item for item in result["entities"] if item["entity_id"] == "switch.kettle_plug")
    assert kettle == {
        "entity_id": "switch.kettle_plug",
        "name": "Kettle Plug",
        "area": "kitchen",
        "state": "on",
    }
    by_id = {item["entity_id"]: item for item in result["entities"]}
    assert by_id[AC]["current_temperature"] == 22.0
    assert by_id[AC]["temperature"] == 24.0
    assert "brightness" not in by_id[BULB]  # off: no brightness to show
    assert by_id["sensor.outdoor_temperature"]["unit_of_measurement"] == "°C"
    assert by_id["sensor.outdoor_temperature"]["area"] is None
    assert roundtrips(result)


def test_list_entities_filters_by_area_floor_and_domain(home: Home) -> None:
    assert ids(list_entities(home, area="bedroom")) == [
        AC,
        "sensor.bedroom_ac_inside_temperature",
        "sensor.bedside_plug_power",
        "switch.bedside_plug",
    ]
    assert ids(list_entities(home, area="Ensuite")) == ["switch.towel_rail"]  # by name
    assert ids(list_entities(home, floor="upstairs", domain="switch")) == [
        "switch.bedside_plug",
        "switch.towel_rail",
    ]
    assert ids(list_entities(home, floor="ground floor", domain="light")) == [BULB]
    assert list_entities(home, domain="vacuum") == {"entities": []}


@pytest.mark.parametrize(("area", "floor"), [("attic", None), (None, "cellar"), (3, None)])
def test_list_entities_refuses_unknown_areas_and_floors(home: Home, area: Any, floor: Any) -> None:
    result = list_entities(home, area=area, floor=floor)
    assert result["success"] is False
    assert result["error"]["code"] == "target_not_found"
    assert "kitchen" in result["error"]["message"] or "ground" in result["error"]["message"]


def test_get_state_is_home_assistants_state_object(home: Home) -> None:
    call_service(home, "light", "turn_on", {"entity_id": BULB}, {"hs_color": [120, 50]})
    state = get_state(home, BULB)
    assert list(state) == ["entity_id", "state", "attributes", "last_changed", "last_updated"]
    assert state["state"] == "on"
    assert state["attributes"]["hs_color"] == [120.0, 50.0]  # a tuple in the twin, a list here
    assert state["attributes"]["friendly_name"] == "Kitchen bulb"
    assert state["last_changed"] == "2026-01-01T07:30:00+00:00"
    assert roundtrips(state)


@pytest.mark.parametrize("entity_id", ["light.attic", 42, None])
def test_get_state_and_describe_refuse_unknown_entities(home: Home, entity_id: Any) -> None:
    for result in (get_state(home, entity_id), describe(home, entity_id)):
        assert result["success"] is False
        assert result["error"]["code"] == "entity_not_found"


def test_describe_is_the_device_manual(home: Home) -> None:
    result = describe(home, AC)
    assert result == manual_describe(home, AC)
    assert result["services"]["set_temperature"]["fields"]["temperature"]["max"] == 30.0
    assert roundtrips(result)


def test_call_service_returns_the_changed_states(home: Home) -> None:
    result = call_service(home, "light", "turn_on", {"area_id": "kitchen"}, {"brightness": 120})
    assert result == {
        "success": True,
        "changed": [
            {
                "entity_id": BULB,
                "name": "Kitchen bulb",
                "area": "kitchen",
                "state": "on",
                "brightness": 120,
            }
        ],
    }
    again = call_service(home, "light", "turn_on", {"entity_id": BULB}, {"brightness": 120})
    assert again == {"success": True, "changed": []}
    in_data = call_service(home, "switch", "turn_off", data={"entity_id": "switch.kettle_plug"})
    assert in_data["changed"][0]["state"] == "off"


@pytest.mark.parametrize(
    ("domain", "service", "target", "data", "code"),
    [
        ("light", "turn_on", {"entity_id": "light.attic"}, None, "entity_not_found"),
        ("light", "turn_on", {"area_id": "attic"}, None, "target_not_found"),
        ("light", "dance", {"entity_id": BULB}, None, "service_not_found"),
        ("shell_command", "run", {"entity_id": BULB}, None, "service_not_found"),
        ("climate", "set_humidity", {"entity_id": AC}, {"humidity": 40}, "service_not_supported"),
        ("light", "turn_on", {"entity_id": BULB}, {"brightness_pct": 140}, "invalid_data"),
        ("light", "turn_on", {"entity_id": BULB}, {"effect": "disco"}, "validation_error"),
        ("light", "turn_on", None, None, "invalid_data"),
        ("light", "turn_on", "light.kitchen_bulb", None, "invalid_data"),
        ("light", "turn_on", {"entity_id": BULB}, [1, 2], "invalid_data"),
        (None, "turn_on", {"entity_id": BULB}, None, "service_not_found"),
    ],
)
def test_call_service_errors_change_nothing(
    home: Home, domain: Any, service: Any, target: Any, data: Any, code: str
) -> None:
    before = dict(home.states)
    result = call_service(home, domain, service, target, data)
    assert result["success"] is False
    assert result["error"]["code"] == code
    assert result["error"]["message"]
    assert home.states == before


def test_call_service_with_a_policy_refuses_what_the_auditor_forbids(home: Home) -> None:
    door = {"entity_id": FRONT_DOOR}
    unlock = call_service(home, "lock", "unlock", door, policy=CONFIRMING_POLICY)
    assert unlock["error"]["code"] == "confirmation_required"
    assert home.state(FRONT_DOOR).state == "locked"
    shell = call_service(home, "shell_command", "run", policy=DEFAULT_POLICY)
    assert shell["error"]["code"] == "forbidden_domain"
    restart = call_service(home, "homeassistant", "restart", policy=DEFAULT_POLICY)
    assert restart["error"]["code"] == "forbidden_service"
    # The home's own errors keep the home's codes.
    unknown = call_service(
        home, "light", "turn_on", {"entity_id": "light.x"}, policy=DEFAULT_POLICY
    )
    assert unknown["error"]["code"] == "entity_not_found"
    # Without a policy the home alone decides: unlocking is a valid call.
    assert call_service(home, "lock", "unlock", {"entity_id": FRONT_DOOR})["success"] is True


def test_pyexec_returns_output_calls_and_errors(home: Home) -> None:
    code = (
        'call_service("light", "turn_on", {"rgb_color": (255, 0, 0)}, entity_id=bulb)\n'
        "print(state(bulb))"
    )
    code = f'bulb = "{BULB}"\n{code}'
    result = pyexec(home, code)
    assert result == {
        "success": True,
        "output": "on\n",
        "calls": [
            {
                "domain": "light",
                "service": "turn_on",
                "target": {"entity_id": BULB},
                "data": {"rgb_color": [255, 0, 0]},
            }
        ],
    }
    failed = pyexec(home, 'call_service("switch", "turn_off", entity_id="switch.kettle_plug")\n1/0')
    assert failed["success"] is False
    assert failed["error"]["code"] == "code_error"
    assert "ZeroDivisionError" in failed["error"]["message"]
    assert home.state("switch.kettle_plug").state == "on"  # undone
    assert len(failed["calls"]) == 1
    restricted = pyexec(home, "import os")
    assert restricted["error"]["code"] == "restricted_code"
    assert pyexec(home, 42)["error"]["code"] == "code_error"  # type: ignore[arg-type]
    odd = pyexec(home, 'call_service("light", "turn_on", {"x": entity("light.kitchen_bulb")})')
    assert odd["success"] is False
    assert roundtrips(odd)  # the odd object in the call is shown by its repr


def test_pyexec_with_a_policy_stops_forbidden_calls(home: Home) -> None:
    code = 'call_service("lock", "unlock", entity_id="lock.front_door")'
    result = pyexec(home, code, policy=CONFIRMING_POLICY)
    assert result["error"]["code"] == "confirmation_required"
    assert home.state(FRONT_DOOR).state == "locked"


def test_tool_schemas_are_openai_tools() -> None:
    assert TOOL_NAMES == ("list_entities", "get_state", "describe", "call_service", "pyexec")
    for schema in TOOL_SCHEMAS:
        assert schema["type"] == "function"
        function = schema["function"]
        assert function["description"]
        parameters = function["parameters"]
        assert parameters["type"] == "object"
        assert set(parameters["required"]) <= set(parameters["properties"])
        for field in parameters["properties"].values():
            assert field["type"]
            assert field["description"]
    assert json.loads(json.dumps(TOOL_SCHEMAS)) == list(TOOL_SCHEMAS)


def test_run_tool_dispatches_every_tool(home: Home) -> None:
    assert run_tool(home, "list_entities", {"area": "ensuite"}) == list_entities(home, "ensuite")
    assert run_tool(home, "list_entities") == list_entities(home)
    assert run_tool(home, "list_entities", {"area": None, "domain": "switch"}) == list_entities(
        home, domain="switch"
    )
    assert run_tool(home, "get_state", {"entity_id": AC}) == get_state(home, AC)
    assert run_tool(home, "describe", '{"entity_id": "climate.bedroom_ac"}') == describe(home, AC)
    result = run_tool(
        home,
        "call_service",
        json.dumps(
            {
                "domain": "switch",
                "service": "turn_off",
                "target": {"entity_id": ["switch.kettle_plug"]},
            }
        ),
    )
    assert result["changed"][0]["entity_id"] == "switch.kettle_plug"
    assert run_tool(home, "pyexec", {"code": "print(1 + 1)"})["output"] == "2\n"
    refused = run_tool(
        home,
        "call_service",
        {"domain": "lock", "service": "unlock", "target": {"entity_id": FRONT_DOOR}},
        policy=CONFIRMING_POLICY,
    )
    assert refused["error"]["code"] == "confirmation_required"


@pytest.mark.parametrize(
    ("name", "arguments", "code", "message"),
    [
        ("open_door", {}, "unknown_tool", "the tools are: list_entities"),
        (None, {}, "unknown_tool", "No tool None"),
        (["get_state"], {}, "unknown_tool", "No tool ['get_state']"),
        ("get_state", "[" * 100_000, "invalid_arguments", "not JSON"),
        ("get_state", "{entity_id: x}", "invalid_arguments", "not JSON"),
        ("get_state", "[1]", "invalid_arguments", "must be an object, got list"),
        ("get_state", {}, "invalid_arguments", "entity_id is required"),
        ("get_state", {"entity_id": 7}, "invalid_arguments", "entity_id must be string"),
        ("get_state", {"entity_id": AC, "all": True}, "invalid_arguments", "unknown argument all"),
        ("list_entities", {"area": ["a"]}, "invalid_arguments", "must be string or null"),
        (
            "call_service",
            {"domain": "light", "service": "turn_on", "target": {"brightness": 9}},
            "invalid_arguments",
            "unknown argument target.brightness",
        ),
        (
            "call_service",
            {"domain": "light", "service": "turn_on", "target": {"entity_id": [BULB, 3]}},
            "invalid_arguments",
            "target.entity_id[1] must be string, got integer",
        ),
        (
            "call_service",
            {"domain": "light", "service": "turn_on", "data": "bright"},
            "invalid_arguments",
            "data must be object or null, got string",
        ),
        ("pyexec", {"code": True}, "invalid_arguments", "code must be string, got boolean"),
    ],
)
def test_run_tool_refuses_what_does_not_fit_the_schemas(
    home: Home, name: Any, arguments: Any, code: str, message: str
) -> None:
    before = dict(home.states)
    result = run_tool(home, name, arguments)
    assert result["success"] is False
    assert result["error"]["code"] == code
    assert message in result["error"]["message"]
    assert home.states == before


def test_jsonable_turns_python_values_into_json_ones() -> None:
    assert jsonable({"a": (1, 2), 3: {4}, "b": [None, True, 1.5]}) == {
        "a": [1, 2],
        "3": [4],
        "b": [None, True, 1.5],
    }
    assert jsonable(object).startswith("<class")


def test_a_failure_the_twin_did_not_foresee_is_an_error_result_and_undone(
    home: Home, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The tool boundary: a bug inside a tool (here, a service that changes a state and then
    breaks) comes back as internal_error with the home as it was, and is logged."""
    before = dict(home.states)
    real = Home.call_service

    def breaks(self: Home, *args: Any, **kwargs: Any) -> Any:
        real(self, "switch", "turn_on", None, {"entity_id": "switch.kettle_plug"})
        raise RuntimeError("a bug")

    monkeypatch.setattr(Home, "call_service", breaks)
    arguments = {"domain": "light", "service": "turn_on", "target": {"entity_id": BULB}}
    result = run_tool(home, "call_service", json.dumps(arguments))
    assert result["success"] is False
    assert result["error"]["code"] == "internal_error"
    assert "RuntimeError" in result["error"]["message"]
    assert home.states == before
    assert "Tool call_service failed" in caplog.text

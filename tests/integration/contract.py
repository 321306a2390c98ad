"""The tool contract every backend keeps: the twin's results, call for call.

A script of tool calls on a home (reads, successes and refusals of each kind) runs through a
backend and through TwinBackend on an independent twin of the same home; the results must be
identical but for timestamps and the texts of error messages, and so must the states and the
layout. A backend may see entities the twin lacks (a server's own); they are left out.
"""

from __future__ import annotations

import re
from typing import Any

from agent.backends import Backend
from agent.backends.twin import TwinBackend
from twin.home import Home
from twin.surface import FloorLayout

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")
# The codes of the script's call_service calls, in order: a success, refusals of each kind...
CALL_CODES = [
    None,
    "invalid_data",
    None,
    None,
    "entity_not_found",
    "entity_not_found",
    "target_not_found",
    "entity_not_found",
    "service_not_found",
    "invalid_arguments",
]


def script(home: Home) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls, on the home's first light and switch, its areas and first floor."""
    entities = sorted(home.states)
    light = next(e for e in entities if e.startswith("light."))
    switch = next(e for e in entities if e.startswith("switch."))
    area = home.area_of(light)
    floor = next(iter(home.floors.values()))
    return [
        *(("list_entities", {"domain": d}) for d in sorted({e.split(".")[0] for e in entities})),
        *(("list_entities", {"area": a.name.upper()}) for a in home.areas.values()),
        ("list_entities", {"floor": floor.floor_id, "domain": "light"}),
        ("list_entities", {"area": "nowhere"}),
        *(("get_state", {"entity_id": e}) for e in entities),
        *(("describe", {"entity_id": e}) for e in entities),
        ("get_state", {"entity_id": "light.nowhere"}),
        ("describe", {"entity_id": "light.nowhere"}),
        ("call_service", {"domain": "light", "service": "turn_on", "target": {"entity_id": light},
                          "data": {"brightness_pct": 40}}),
        ("call_service", {"domain": "light", "service": "turn_on", "target": {"entity_id": light},
                          "data": {"brightness_pct": 140}}),
        ("call_service", {"domain": "light", "service": "turn_off", "target": {"area_id": area}}),
        ("call_service", {"domain": "switch", "service": "toggle",
                          "target": {"entity_id": [switch]}}),
        ("call_service", {"domain": "switch", "service": "turn_on",
                          "target": {"entity_id": "switch.nowhere"}}),
        ("call_service", {"domain": "switch", "service": "turn_off",
                          "target": {"entity_id": f"{switch}, SWITCH.nowhere"}}),
        ("call_service", {"domain": "switch", "service": "turn_off",
                          "target": {"area_id": "nowhere"}}),
        ("call_service", {"domain": "switch", "service": "turn_off",
                          "data": {"entity_id": ["switch.nowhere"]}}),
        ("call_service", {"domain": "switch", "service": "launch",
                          "target": {"entity_id": switch}}),
        ("call_service", {"domain": "light", "service": "turn_on", "target": "kitchen"}),
        ("get_state", {"entity_id": light}),
        ("get_state", {"entity_id": switch}),
        ("pyexec", {"code": "print(1)"}),
    ]  # fmt: skip


def normal(result: Any) -> Any:
    """`result` with timestamps, and error messages, replaced by placeholders."""
    if isinstance(result, dict):
        if result.get("success") is False:
            return {"success": False, "code": result["error"]["code"]}
        return {key: normal(value) for key, value in result.items()}
    if isinstance(result, list):
        return [normal(item) for item in result]
    if isinstance(result, str) and TIMESTAMP.match(result):
        return "<time>"
    return result


def ours(layout: tuple[FloorLayout, ...], entities: set[str]) -> list[Any]:
    """A layout with only the given entities, and no areas or floors left empty by that."""
    kept = []
    for floor in layout:
        areas = [
            (area.area_id, area.name, [e for e in area.entities if e[0] in entities])
            for area in floor.areas
        ]
        areas = [area for area in areas if area[2] or area[0] is not None]
        if areas or floor.floor_id is not None:
            kept.append((floor.floor_id, floor.name, areas))
    return kept


async def assert_keeps_the_contract(backend: Backend, home: Home) -> None:
    """Run the script through `backend` and through a twin backend on `home`, an independent
    twin of the backend's home, and compare every result, then the states and the layout."""
    twin = TwinBackend(home, pyexec=False)
    entities = set(home.states)
    assert backend.tool_schemas == twin.tool_schemas
    codes = []
    for name, arguments in script(home):
        expected = normal(await twin.run_tool(name, arguments))
        if name == "call_service":
            codes.append(expected.get("code"))
        result = await backend.run_tool(name, arguments)
        if name == "list_entities" and "entities" in result:
            result["entities"] = [e for e in result["entities"] if e["entity_id"] in entities]
        assert normal(result) == expected, (name, arguments)
    assert codes == CALL_CODES
    states = await backend.states()
    assert normal({e: states[e] for e in entities}) == normal(await twin.states())
    assert ours(await backend.layout(), entities) == ours(await twin.layout(), entities)

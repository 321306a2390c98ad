"""The agent's tools give the same results on a real Home Assistant as on the twin.

The same scripted tool calls run through HomeAssistantBackend, on the server of test_real_server
(its fixtures are reused), and through TwinBackend, on an independent twin of the same home (the
server's own export, through the homeflow.export_snapshot action). Only timestamps and the texts
of error messages may differ; the server also has entities of its own (its backup sensors), which
are left out where a result lists every entity.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from agent.backends import FloorLayout
from agent.backends.home_assistant import HomeAssistantBackend, HomeAssistantError
from agent.backends.twin import TwinBackend
from scripts.hass_server import HASS_PORT
from tests.integration import test_real_server as real
from twin.home import Home
from twin.homefile import load_home

# The server and the sockets it needs: test_real_server's fixtures (pytest finds them by name).
served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
URL = f"http://127.0.0.1:{HASS_PORT}"  # as the server sees itself; reached through its bridge
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$")


@pytest.fixture(scope="module")
def independent(served_api: real.Api) -> Home:
    """The server's home, exported and loaded as a twin that the server never touches."""
    (entry,) = served_api.get("/api/config/config_entries/entry?domain=homeflow")
    path = "/api/services/homeflow/export_snapshot?return_response"
    answer = served_api.post(path, {"config_entry_id": entry["entry_id"], "format": "home_file"})
    return load_home(answer["service_response"]["home"])


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


async def test_the_tools_agree_on_home_assistant_and_on_the_twin(
    served_api: real.Api, independent: Home
) -> None:
    twin = TwinBackend(independent, pyexec=False)
    entities = sorted(independent.states)
    light = next(e for e in entities if e.startswith("light."))
    switch = next(e for e in entities if e.startswith("switch."))
    area = independent.area_of(light)
    floor = next(iter(independent.floors.values()))
    calls: list[tuple[str, dict[str, Any]]] = [
        *(("list_entities", {"domain": d}) for d in sorted({e.split(".")[0] for e in entities})),
        *(("list_entities", {"area": a.name.upper()}) for a in independent.areas.values()),
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
    async with HomeAssistantBackend(URL, served_api.token,
                                    unix_socket="\0" + served_api.server.bridge) as ha:  # fmt: skip
        assert ha.tool_schemas == twin.tool_schemas
        codes = []
        for name, arguments in calls:
            expected = normal(await twin.run_tool(name, arguments))
            if name == "call_service":
                codes.append(expected.get("code"))
            served = await ha.run_tool(name, arguments)
            if name == "list_entities" and "entities" in served:
                served["entities"] = [e for e in served["entities"] if e["entity_id"] in entities]
            assert normal(served) == expected, (name, arguments)
        # The script's calls go as planned: a success, refusals of each kind, a success...
        assert codes == [
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
        states = await ha.states()
        assert normal({e: states[e] for e in entities}) == normal(await twin.states())
        layout = await ha.layout()
        assert ours(layout, set(entities)) == ours(await twin.layout(), set(entities))
        assert ha._ws is not None
        await ha._ws.close()  # as a restarting server drops it: the backend connects again
        assert await ha.layout() == layout
        assert served_api.token not in repr(ha)


async def test_a_refused_token_is_an_error_that_does_not_show_it(served_api: real.Api) -> None:
    bridge = "\0" + served_api.server.bridge
    token = "not-a-token-" + "x" * 20
    async with HomeAssistantBackend(URL, token, unix_socket=bridge) as ha:
        with pytest.raises(HomeAssistantError, match="refused the token") as refused:
            await ha.states()
        with pytest.raises(HomeAssistantError, match="refused the token") as refused_ws:
            await ha.layout()
    for shown in (str(refused.value), str(refused_ws.value), repr(ha)):
        assert token not in shown

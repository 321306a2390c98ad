"""The twin backend: the tool surface in-process."""

from __future__ import annotations

import asyncio

from agent.backends.twin import TwinBackend
from twin.homemaker import make_home


def test_tools_run_on_the_twin() -> None:
    home = make_home(1, "studio")
    backend = TwinBackend(home)
    switch_or_light = next(e for e in home.entities if e.startswith(("light.", "switch.")))
    domain = switch_or_light.split(".")[0]
    result = asyncio.run(
        backend.run_tool(
            "call_service",
            {"domain": domain, "service": "toggle", "target": {"entity_id": switch_or_light}},
        )
    )
    assert result["success"] is True
    states = asyncio.run(backend.states())
    assert states[switch_or_light]["state"] == home.states[switch_or_light].state


def test_pyexec_can_be_left_out() -> None:
    backend = TwinBackend(make_home(1, "studio"), pyexec=False)
    assert [s["function"]["name"] for s in backend.tool_schemas] == [
        "list_entities",
        "get_state",
        "describe",
        "call_service",
    ]
    result = asyncio.run(backend.run_tool("pyexec", {"code": "print(1)"}))
    assert result["error"]["code"] == "unknown_tool"
    assert "pyexec" not in result["error"]["message"].split(": ")[1]

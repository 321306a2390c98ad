"""`homeflow chat --backend ha`: an agent acts on a real Home Assistant, the chat's verifier reads
a live mirror of it and sees the change.

The server is test_real_server's (its fixtures are reused); the policy is a two-step script (a
call, then a reply), since what is under test is the chat's plumbing, not a model.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from agent.backends.home_assistant import HomeAssistantBackend
from agent.chat import ha_session
from agent.policies import AssistantMessage, Message, ToolCall
from tests.integration import test_real_server as real
from tests.integration.test_mirror import URL
from twin.home import Home

served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations


class TurnOn:
    """Turns one light on, then says so."""

    def __init__(self, light: str) -> None:
        self.light = light

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        if messages[-1]["role"] == "tool":
            return AssistantMessage("The light is on.")
        arguments = {"domain": "light", "service": "turn_on", "target": {"entity_id": self.light}}
        return AssistantMessage("", (ToolCall("call_1", "call_service", arguments),))


async def test_the_chat_acts_on_home_assistant_and_verifies_its_mirror(
    served_api: real.Api,
) -> None:
    light = next(
        s["entity_id"]
        for s in served_api.get("/api/states")
        if s["entity_id"].startswith("light.") and s["state"] == "off"
    )
    seen: list[Home] = []

    def make_policy(home: Home) -> TurnOn:
        seen.append(home)
        return TurnOn(light)

    output = io.StringIO()
    backend = HomeAssistantBackend(
        URL, served_api.token, unix_socket="\0" + served_api.server.bridge
    )
    end = await ha_session(
        backend,
        make_policy,
        [f'state("{light}") == "on"'],
        io.StringIO("turn on the light\n"),
        Console(file=output, width=200, highlight=False),
    )

    shown = output.getvalue()
    assert end == "user_done"
    assert served_api.state(light)["state"] == "on"
    assert light in seen[0].states  # the policy's choices come from the mirror
    assert "→ call_service" in shown
    assert "agent> The light is on." in shown
    assert f'verify ✓ state("{light}") == "on"' in shown
    assert "verify: done" in shown

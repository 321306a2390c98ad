"""The agent's tools give the same results on a real Home Assistant as on the twin.

The contract's scripted tool calls run through HomeAssistantBackend, on the server of
test_real_server (its fixtures are reused), and through TwinBackend, on an independent twin of
the same home (the server's own export, through the homeflow.export_snapshot action).
"""

from __future__ import annotations

import pytest

from agent.backends.home_assistant import HomeAssistantBackend, HomeAssistantRequestError
from scripts.hass_server import HASS_PORT
from tests.integration import test_real_server as real
from tests.integration.contract import assert_keeps_the_contract
from twin.auditor import CONFIRMING_POLICY
from twin.home import Home
from twin.homefile import load_home

# The server and the sockets it needs: test_real_server's fixtures (pytest finds them by name).
served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
URL = f"http://127.0.0.1:{HASS_PORT}"  # as the server sees itself; reached through its bridge
LOCK = "lock.front_door_lock"


@pytest.fixture(scope="module")
def independent(served_api: real.Api) -> Home:
    """The server's home, exported and loaded as a twin that the server never touches."""
    (entry,) = served_api.get("/api/config/config_entries/entry?domain=homeflow")
    path = "/api/services/homeflow/export_snapshot?return_response"
    answer = served_api.post(path, {"config_entry_id": entry["entry_id"], "format": "home_file"})
    return load_home(answer["service_response"]["home"])


async def test_the_tools_agree_on_home_assistant_and_on_the_twin(
    served_api: real.Api, independent: Home
) -> None:
    async with HomeAssistantBackend(URL, served_api.token,
                                    unix_socket="\0" + served_api.server.bridge) as ha:  # fmt: skip
        await assert_keeps_the_contract(ha, independent)
        layout = await ha.layout()
        assert ha._ws is not None
        await ha._ws.close()  # as a restarting server drops it: the backend connects again
        assert await ha.layout() == layout
        assert served_api.token not in repr(ha)


async def test_a_refused_token_is_an_error_that_does_not_show_it(served_api: real.Api) -> None:
    bridge = "\0" + served_api.server.bridge
    token = "not-a-token-" + "x" * 20
    async with HomeAssistantBackend(URL, token, unix_socket=bridge) as ha:
        with pytest.raises(HomeAssistantRequestError, match="refused the token") as refused:
            await ha.states()
        with pytest.raises(HomeAssistantRequestError, match="refused the token") as refused_ws:
            await ha.layout()
    for shown in (str(refused.value), str(refused_ws.value), repr(ha)):
        assert token not in shown


async def test_the_auditor_runs_on_the_client(served_api: real.Api) -> None:
    """Forbidden actions are never sent; with the confirming policy an unlock waits for the
    user's yes, then goes through (and the door is locked again for the other tests)."""
    door = {"target": {"entity_id": LOCK}}
    unlock = {"domain": "lock", "service": "unlock", **door}
    bridge = "\0" + served_api.server.bridge
    async with HomeAssistantBackend(
        URL, served_api.token, unix_socket=bridge, policy=CONFIRMING_POLICY
    ) as ha:
        shell = await ha.run_tool("call_service", {"domain": "shell_command", "service": "rm"})
        assert shell["error"]["code"] == "forbidden_domain"
        area, floor = next(
            (a.area_id, f.floor_id)
            for f in await ha.layout()
            for a in f.areas
            if LOCK in dict(a.entities)
        )
        assert area is not None
        assert floor is not None
        for target in (door["target"], {"area_id": area}, {"floor_id": floor}):
            asked = await ha.run_tool("call_service", {**unlock, "target": target})
            assert asked["error"]["code"] == "confirmation_required", target
        assert (await ha.states())[LOCK]["state"] == "locked"
        ha.confirmation.hear("Ja")
        done = await ha.run_tool("call_service", unlock)
        assert [state["state"] for state in done["changed"]] == ["unlocked"]
        ha.confirmation.hear("lock it again")
        relock = await ha.run_tool("call_service", {"domain": "lock", "service": "lock", **door})
        assert relock["success"] is True

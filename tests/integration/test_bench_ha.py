"""`homeflow bench run --backend ha`: SmartHome-Bench instances played on a real Home Assistant
score as on the twin (the teacher 100%, the no-op 0%), every home removed afterwards; a home that
Home Assistant holds under other ids is refused. Home Assistant offers no pyexec, so where the
teacher's style makes the twin's calls as one script it makes them one by one there.

The server is test_real_server's (its fixtures are reused); its own HomeFlow home is removed
first, so that the instances' homes are the only ones.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent.backends.home_assistant import HomeAssistantRequestError
from agent.bench.evaluate import NOOP, TEACHER, evaluate
from agent.bench.ha import ENTRIES, Server, add_home, play_on_server, remove_home
from agent.bench.instances import BenchInstance, generate_bench
from agent.episode import EpisodeLimits
from agent.flywheel.runner import read_records
from agent.policies.teacher import TeacherPolicy
from tests.integration import test_real_server as real
from tests.integration.test_mirror import URL

served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations


@pytest.fixture(scope="module")
def instances() -> list[BenchInstance]:
    """One instance each of QT1, QT2 and QT3."""
    return generate_bench(3)


@pytest.fixture(scope="module")
def server(served_api: real.Api) -> Server:
    """The server with no HomeFlow home."""
    for entry in homes(served_api):
        served_api.server.call("DELETE", f"{ENTRIES}/entry/{entry}", token=served_api.token)
    return Server(URL, served_api.token, unix_socket="\0" + served_api.server.bridge)


def homes(api: real.Api) -> list[str]:
    """The server's HomeFlow config entries' ids."""
    return [entry["entry_id"] for entry in api.get(f"{ENTRIES}/entry?domain=homeflow")]


def test_policies_score_on_home_assistant_as_on_the_twin(
    server: Server, served_api: real.Api, instances: list[BenchInstance], tmp_path: Path
) -> None:
    for policy, success in ((TEACHER, True), (NOOP, False)):
        twin = evaluate(instances, tmp_path / f"twin-{policy}", policy, progress=False)
        ha = evaluate(instances, tmp_path / policy, policy, progress=False, server=server)
        assert twin.complete
        assert ha.complete
        on_twin, on_ha = (scores(outcome.records) for outcome in (twin, ha))
        assert on_ha == on_twin
        assert calls(ha.records) == calls(twin.records)
        assert {key: score[0] for key, score in on_ha.items()} == {
            instance.id: success for instance in instances
        }
        assert homes(served_api) == []
    # Resumable through the same runner, on the same Home Assistant at another address (as
    # bench/ha_agent.py's fresh server has): nothing left to do, nothing done again.
    moved = Server("http://homeassistant.local:8123", server.token, unix_socket=server.unix_socket)
    again = evaluate(instances, tmp_path / NOOP, NOOP, progress=False, server=moved)
    assert again.fresh == []
    assert len(read_records(tmp_path / NOOP)) == len(instances)


def scores(records: list[dict[str, Any]]) -> dict[object, tuple[object, ...]]:
    """Each instance's success, turns, end and collateral changes."""
    return {r["id"]: (r["success"], r["turns"], r["end_reason"], r["collateral"]) for r in records}


def calls(records: list[dict[str, Any]]) -> dict[object, int]:
    """Each instance's tool calls, a pyexec script's counted as the calls it writes (one per
    line, as the teacher makes them one by one where there is no pyexec)."""
    return {
        record["id"]: sum(
            _one_by_one(call)
            for message in record["trajectory"]["messages"]
            for call in message.get("tool_calls") or []
        )
        for record in records
    }


def _one_by_one(call: dict[str, Any]) -> int:
    if call["function"]["name"] != "pyexec":
        return 1
    return json.loads(call["function"]["arguments"])["code"].count("call_service(")


def test_a_home_held_under_other_ids_is_refused_and_removed(
    server: Server, served_api: real.Api, instances: list[BenchInstance]
) -> None:
    blueprint = instances[0].blueprint

    async def clash() -> None:
        async with server.backend() as backend:
            other = await add_home(backend, "Clashing Home", blueprint.home())
            try:
                policy = TeacherPolicy(blueprint.task, blueprint.seed)
                await play_on_server(server, "clash", blueprint, policy, EpisodeLimits())
            finally:
                await remove_home(backend, other)

    with pytest.raises(
        HomeAssistantRequestError,
        match=r"other ids.* there \(\w+\.\w+_2 is extra; .* more\); remove",
    ) as err:
        asyncio.run(clash())
    assert server.token not in str(err.value)
    assert homes(served_api) == []

"""`homeflow bench run --backend ha` on a normally onboarded Home Assistant: the user's Living
Room, Kitchen and Bedroom stay as they were while the instances' homes come and go (one an
interrupted run left is removed), and any
conversation agent (`--agent`, here the built-in Assist) is scored by the home's state.

The server is scripts/hass_server.py's, fully onboarded as the frontend does it, areas kept.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hassil import recognize_best
from hassil.intents import SlotList, TextSlotList

from agent.bench.conversation import STEP, ConversationAgentNotFoundError
from agent.bench.evaluate import TEACHER, evaluate
from agent.bench.ha import ENTRIES, TITLE, Server, add_home
from agent.bench.instances import BenchInstance, generate_bench
from agent.flywheel.sentences import language, spoken, spoken_name
from scripts.hass_server import HassServer
from tests.integration import test_real_server as real
from tests.integration.test_mirror import URL
from twin.home import Home

unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
ASSIST = "conversation.home_assistant"
ONBOARDING_AREAS = {"Living Room", "Kitchen", "Bedroom"}


@pytest.fixture(scope="module")
def onboarded() -> Iterator[real.Api]:
    """A running server onboarded as a new user is, its default areas kept."""
    real.allow_unix_sockets()
    with HassServer() as server:
        tokens = server.onboard(full=True)
        server.wait_until_running(tokens.access_token)
        yield real.Api(server, server.long_lived_token(tokens.access_token, "bench"))


@pytest.fixture(scope="module")
def server(onboarded: real.Api) -> Server:
    return Server(URL, onboarded.token, unix_socket="\0" + onboarded.server.bridge)


@pytest.fixture(scope="module")
def instances() -> list[BenchInstance]:
    """One instance each of QT1, QT2 and QT3."""
    return generate_bench(3)


@pytest.fixture(scope="module")
def heard() -> BenchInstance:
    """A QT1 instance said as a bare Assist command (the request's own template sentence, with
    no tone or reason around it, which Assist's templates do not take), that Home Assistant's
    own matcher reads as it stands."""
    for instance in generate_bench(14):
        if instance.task_type == "QT1" and (said := _bare(instance)) is not None:
            task = replace(instance.blueprint.task, turns=(said,))
            return replace(instance, blueprint=replace(instance.blueprint, task=task))
    raise AssertionError("no QT1 instance has an Assist sentence")


def _bare(instance: BenchInstance) -> str | None:
    """The intent's call as Home Assistant's template sentence naming the device, if its
    matcher reads it back with the home's names."""
    blueprint, english = instance.blueprint, language("en")
    intent, home = blueprint.task.intents[0], blueprint.home()
    call = spoken(intent.domain, intent.service, intent.data)
    if call is None:
        return None
    name = spoken_name(home.entities[intent.entity_id].name)
    said = english.say(random.Random(0), call[0], intent.domain, {"name": name, **call[1]})
    return said.text if said is not None and _matched(said.text, home) else None


def _matched(text: str, home: Home) -> bool:
    intents = language("en").intents
    names = [
        (spoken_name(entry.name), spoken_name(entry.name), {"domain": entry.domain})
        for entry in home.entities.values()
        if entry.name
    ]
    rooms = [spoken_name(area.name) for area in home.areas.values()]
    lists: dict[str, SlotList] = {
        "name": TextSlotList.from_tuples(names),
        "area": TextSlotList.from_strings(rooms),
        "floor": TextSlotList.from_strings([]),
    }
    found = recognize_best(text, intents, slot_lists=lists, skip_words=intents.skip_words)
    return found is not None


def areas(api: real.Api) -> list[dict[str, Any]]:
    """The server's area registry, as the user's settings page lists it."""
    with api.server.websocket(api.token) as ws:
        listed: list[dict[str, Any]] = ws.command("config/area_registry/list")
    return listed


def homes(api: real.Api) -> list[str]:
    return [entry["entry_id"] for entry in api.get(f"{ENTRIES}/entry?domain=homeflow")]


async def leave_a_home(server: Server, instance: BenchInstance) -> None:
    async with server.backend() as backend:
        await add_home(backend, f"{TITLE} left", instance.blueprint.home())


def test_the_teacher_solves_every_instance_and_the_users_areas_stay(
    server: Server, onboarded: real.Api, instances: list[BenchInstance], tmp_path: Path
) -> None:
    before = areas(onboarded)
    assert {area["name"] for area in before} >= ONBOARDING_AREAS
    asyncio.run(leave_a_home(server, instances[0]))  # as an interrupted run does
    outcome = evaluate(instances, tmp_path / "teacher", TEACHER, progress=False, server=server)
    assert outcome.complete
    assert [record["success"] for record in outcome.records] == [True] * len(instances)
    assert areas(onboarded) == before
    assert homes(onboarded) == []


def test_assist_hears_the_user_and_the_home_decides(
    server: Server, onboarded: real.Api, heard: BenchInstance, tmp_path: Path
) -> None:
    before = areas(onboarded)
    outcome = evaluate([heard], tmp_path / "assist", ASSIST, progress=False, server=server)
    [record] = outcome.records
    trajectory = record["trajectory"]
    said = [m for m in trajectory["messages"] if m["role"] == "assistant"]
    assert said
    assert all(message["content"] for message in said)
    assert [step["name"] for step in trajectory["steps"]] == [STEP] * trajectory["turns"]
    assert record["success"]  # Assist did the QT1 request, in Home Assistant's state
    assert record["tool_calls"] == 0  # Assist's own calls are not visible
    assert areas(onboarded) == before
    assert homes(onboarded) == []


def test_an_agent_home_assistant_lacks_is_a_clear_error(
    server: Server, onboarded: real.Api, instances: list[BenchInstance], tmp_path: Path
) -> None:
    with pytest.raises(ConversationAgentNotFoundError, match=r"no conversation agent .*e\.g\. "):
        evaluate(
            instances[:1], tmp_path / "none", "conversation.nobody", progress=False, server=server
        )
    assert homes(onboarded) == []

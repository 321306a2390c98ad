# ruff: noqa: F811  (the `server` fixture is imported)
"""The flywheel with chat models: a paraphrasing server for blueprints, a server as the teacher or
the user in MCTS-Flow, and the CLI's flags, against fake servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from click.testing import CliRunner

from agent.cli import main
from agent.flywheel.blueprints import Blueprint, QueryType, make_blueprint
from agent.flywheel.datasets import blueprint_record, read_rows, synthesis_record
from agent.flywheel.mcts import SynthesisConfig, synthesize, tool_sequence
from agent.flywheel.paraphrase import LLMParaphraser, UnfaithfulParaphrase
from agent.flywheel.profiles import make_profile
from agent.flywheel.runner import read_records
from agent.policies import PolicyError
from agent.policies.specs import SpecError
from agent.task import Intent, Task
from tests.agent.test_openai_policy import FakeServer, completion, server, status  # noqa: F401
from twin.homemaker import make_home

LAMP = "light.living_room_floor_lamp"
CALL = {
    "domain": "light",
    "service": "turn_on",
    "target": {"entity_id": LAMP},
    "data": {"brightness_pct": 40},
}


def lamp_blueprint() -> Blueprint:
    """Turn on the living-room floor lamp at 40 %, asked in full."""
    task = Task(
        ("Turn on the floor lamp in the living room at 40 %, please.",),
        (Intent("light", "turn_on", LAMP, {"brightness_pct": 40}),),
    )
    task.check(make_home(1, "apartment"))
    qtype = QueryType("clear", "independent", "single", "plain")
    return Blueprint(1, make_profile(1), 1, "apartment", ("Evening.",), qtype, task)


def teacher(body: dict[str, Any]) -> web.StreamResponse:
    """The call the task needs, then, once its result is in, a reply."""
    if body["messages"][-1]["role"] == "tool":
        return completion({"content": "The floor lamp is on at 40 %."})(body)
    call = {"id": "c1", "type": "function", "function": {"name": "call_service"}}
    call["function"]["arguments"] = json.dumps(CALL)  # type: ignore[index]
    return completion({"content": None, "tool_calls": [call]})(body)


def rewrite(keep_numbers: bool) -> Any:
    """A paraphrasing server: 'Hey, ' and the request, its digits kept or dropped."""

    def reply(body: dict[str, Any]) -> web.StreamResponse:
        request = body["messages"][-1]["content"]
        text = request if keep_numbers else re.sub(r"\d", "", request)
        return completion({"content": f'"Hey, {text}"'})(body)

    return reply


def original(seed: int) -> str:
    blueprint = make_blueprint(seed)
    assert isinstance(blueprint, Blueprint)
    return blueprint.task.turns[0]


@cache
def seed_with(numbers: bool) -> int:
    """The first seed whose blueprint's request has numbers (or none)."""
    kept = (s for s in range(50) if isinstance(make_blueprint(s), Blueprint))
    return next(s for s in kept if bool(re.search(r"\d", original(s))) == numbers)


async def test_a_paraphrase_replaces_the_request_of_a_blueprint(server: FakeServer) -> None:
    server.replies = [rewrite(keep_numbers=True)]
    record = await asyncio.to_thread(
        blueprint_record, seed_with(numbers=True), 0.2, f"openai:{server.url}#writer"
    )
    blueprint = Blueprint.from_json(record["rows"][0]["blueprint"])
    assert blueprint.task.turns[0] == f"Hey, {original(seed_with(numbers=True))}"
    assert blueprint.task.intents == make_blueprint(blueprint.seed).task.intents  # type: ignore[union-attr]
    ((body, _),) = server.requests
    assert (body["model"], body["seed"]) == ("writer", blueprint.seed)
    assert body["temperature"] > 0
    assert "Keep every device, every room and every value" in body["messages"][0]["content"]
    assert body["messages"][1] == {"role": "user", "content": original(seed_with(numbers=True))}
    assert "tools" not in body


async def test_a_paraphrase_that_drops_a_number_is_rejected_on_its_own(
    server: FakeServer,
) -> None:
    server.replies = [rewrite(keep_numbers=False)] * 3
    spec = f"openai:{server.url}#writer"
    request = original(seed_with(numbers=True))
    dropped = ", ".join(sorted(set(re.findall(r"\d+(?:[.,]\d+)?", request))))
    with pytest.raises(UnfaithfulParaphrase, match=f"drops {re.escape(dropped)}$"):
        await LLMParaphraser(spec).rewrite(request)
    record = await asyncio.to_thread(blueprint_record, seed_with(numbers=True), 0.2, spec)
    assert (record["rows"], record["rejected"], record["check"]) == (
        [],
        "paraphrase",
        "dropped_number",
    )
    kept = await asyncio.to_thread(blueprint_record, seed_with(numbers=False), 0.2, spec)
    assert kept["rejected"] is None
    assert read_blueprint(kept).task.turns[0] == f"Hey, {original(seed_with(numbers=False))}"


def read_blueprint(record: dict[str, Any]) -> Blueprint:
    return Blueprint.from_json(record["rows"][0]["blueprint"])


async def test_a_failing_or_empty_server_is_an_error_not_a_fallback(server: FakeServer) -> None:
    server.replies = [status(400, "no such model"), completion({"content": "  "})]
    paraphraser = LLMParaphraser(f"openai:{server.url}#writer")
    with pytest.raises(PolicyError, match="no such model"):
        await paraphraser.rewrite("Turn on the lamp.")
    with pytest.raises(PolicyError, match="gave no paraphrase"):
        await paraphraser.rewrite("Turn on the lamp.")


async def test_mcts_samples_a_server_teacher_per_node_and_counts_its_calls(
    server: FakeServer,
) -> None:
    server.replies = [teacher] * 8
    blueprint = lamp_blueprint()
    config = SynthesisConfig(iterations=2, k_agent=2, teacher=f"openai:{server.url}#teacher")
    synthesis = await synthesize(blueprint, config)
    assert synthesis.rollouts == len(synthesis.verified) == 2  # two agent children, both solved
    assert all(tool_sequence(t) == [["call_service", CALL]] for t in synthesis.verified)
    assert synthesis.policy_calls == len(server.requests) == 4
    bodies = [body for body, _ in server.requests]
    assert {body["model"] for body in bodies} == {"teacher"}
    assert all(body["temperature"] == config.temperature > 0 for body in bodies)
    assert len({body["seed"] for body in bodies}) == 2  # one per agent turn, shared by its calls
    assert bodies[0]["tools"][0]["function"]["name"]


async def test_a_worker_record_synthesizes_with_a_server_teacher(server: FakeServer) -> None:
    server.replies = [teacher] * 2
    spec = f"openai:{server.url}#teacher"
    record = await asyncio.to_thread(
        synthesis_record, lamp_blueprint().to_json(), "linear", 0.2, teacher=spec
    )
    assert record["success"]
    assert (record["policy_calls"], len(record["rows"])) == (2, 1)


async def test_a_server_user_is_asked_and_its_words_are_used(server: FakeServer) -> None:
    query = json.dumps({"query": "Lovely, that's all.", "reason": "done"})
    call = {"id": "u1", "type": "function", "function": {"name": "post_process"}}
    call["function"]["arguments"] = query  # type: ignore[index]
    server.replies = [completion({"content": None, "tool_calls": [call]})]
    config = SynthesisConfig(iterations=1, careless=0, user=f"openai:{server.url}#user")
    synthesis = await synthesize(lamp_blueprint(), config)
    (trajectory,) = synthesis.verified
    said = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    assert said == [lamp_blueprint().task.turns[0], "Lovely, that's all."]
    assert synthesis.user_calls == 2  # the request (the task's own) and the closing line
    ((body, _),) = server.requests
    assert body["model"] == "user"
    assert isinstance(body["seed"], int)
    assert body["tools"][0]["function"]["name"] == "post_process"
    assert "[done]" in body["messages"][1]["content"]
    assert "Evening." in body["messages"][1]["content"]  # the blueprint's scene


def test_specs_are_checked_with_clear_errors() -> None:
    with pytest.raises(SpecError, match=r"use scripted, local\[:PATH\] or openai:URL#MODEL"):
        SynthesisConfig(teacher="gpt")
    with pytest.raises(SpecError, match="use scripted or openai:URL#MODEL"):
        SynthesisConfig(user="local")
    with pytest.raises(SpecError, match="openai:URL#MODEL, got 'openai:http://x'"):
        SynthesisConfig(teacher="openai:http://x")
    with pytest.raises(SpecError, match="a paraphraser needs openai:URL#MODEL"):
        LLMParaphraser("local")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["blueprints", "--paraphrase", "openai:http://x"], "openai:URL#MODEL, got"),
        (["synthesize", "--count", "1", "--teacher", "gpt"], "use scripted, local[:PATH] or"),
        (["synthesize", "--count", "1", "--user", "local:m"], "use scripted or openai:URL#MODEL"),
    ],
)
def test_cli_refuses_bad_specs(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["data", *args, "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()


async def test_cli_paraphrases_and_counts_the_rejections(
    server: FakeServer, tmp_path: Path
) -> None:
    server.replies = [rewrite(keep_numbers=False)] * 6
    args = ["data", "blueprints", "--count", "6", "--workers", "1", "-o", str(tmp_path / "bp")]
    made = await asyncio.to_thread(
        CliRunner().invoke, main, [*args, "--paraphrase", f"openai:{server.url}#writer"]
    )
    assert made.exit_code == 0, made.output
    records = read_records(tmp_path / "bp")
    unfaithful = sum(record["rejected"] == "paraphrase" for record in records)
    assert unfaithful >= 1
    assert "paraphrase" in made.output
    assert f"| paraphrase | {unfaithful} (" in (tmp_path / "bp" / "README.md").read_text()
    rows = read_rows(tmp_path / "bp" / "blueprints.jsonl")
    assert rows
    assert all(read_blueprint({"rows": [r]}).task.turns[0].startswith("Hey, ") for r in rows)


async def test_cli_says_when_a_server_fails(server: FakeServer, tmp_path: Path) -> None:
    server.replies = [status(401, "bad key")]
    args = ["data", "synthesize", "--count", "1", "--seed", str(seed_with(False)), "--workers", "1"]
    failed = await asyncio.to_thread(
        CliRunner().invoke,
        main,
        [*args, "--teacher", f"openai:{server.url}#t", "-o", str(tmp_path / "sft")],
    )
    assert failed.exit_code == 1, failed.output
    assert "HTTP 401: bad key" in failed.output
    assert "run the same command again" in failed.output

"""Confirming sensitive actions in a dialogue: the auditor asks, the agent asks the user, the
user's yes (and only the user's) lets the same call through, in the episode runner and HomeEnv-v1.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from functools import cache
from typing import Any

import pytest

from agent.backends.twin import TwinBackend
from agent.envs import DialogueEnv
from agent.episode import run_episode
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.user import CONFIRM, DECLINE, ScriptedUser
from agent.policies import AssistantMessage, Message, ToolCall
from agent.policies.teacher import TeacherPolicy
from agent.task import Intent, Task
from twin.auditor import CONFIRMING_POLICY, DEFAULT_POLICY

SEED = 72  # the user's and the teacher's seed
DOOR = "lock.front_door_lock"
UNLOCK = {"domain": "lock", "service": "unlock", "target": {"entity_id": DOOR}}
LOCK = {"domain": "lock", "service": "lock", "target": {"entity_id": DOOR}}


@cache
def blueprint(service: str = "unlock") -> Blueprint:
    """The first blueprint whose home's front door is locked, with the user's task replaced:
    `service` the front door."""
    found = next(
        blueprint
        for seed in range(1000)
        if isinstance(blueprint := make_blueprint(seed), Blueprint)
        and (door := blueprint.home().states.get(DOOR)) is not None
        and door.state == "locked"
    )
    task = Task(("Please unlock the front door.",), (Intent("lock", service, DOOR),))
    return dataclasses.replace(found, task=task)


class Scripted:
    """A policy that sends its messages in order, whatever it is told."""

    def __init__(self, *messages: AssistantMessage) -> None:
        self.messages = list(messages)

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        return self.messages.pop(0) if self.messages else AssistantMessage("OK.")


def unlock(call_id: str, arguments: dict[str, Any] = UNLOCK) -> AssistantMessage:
    return AssistantMessage("", (ToolCall(call_id, "call_service", arguments),))


def results(messages: list[Message]) -> list[dict[str, Any]]:
    return [json.loads(str(m["content"])) for m in messages if m.get("role") == "tool"]


def codes(messages: list[Message]) -> list[str]:
    return [r["error"]["code"] if r.get("success") is False else "ok" for r in results(messages)]


ASK = AssistantMessage("Shall I unlock the front door?")


@pytest.mark.parametrize(
    ("user", "state", "calls"),
    [
        ("Yes, please.", "unlocked", ["confirmation_required", "ok"]),
        ("Ja, bitte.", "unlocked", ["confirmation_required", "ok"]),
        ("Sí, adelante.", "unlocked", ["confirmation_required", "ok"]),
        ("No, leave it.", "locked", ["confirmation_required", "confirmation_required"]),
        ("Nee.", "locked", ["confirmation_required", "confirmation_required"]),
        ("Turn on the light instead.", "locked", ["confirmation_required"] * 2),
    ],
)
async def test_ask_then_the_users_answer_decides(user: str, state: str, calls: list[str]) -> None:
    home = blueprint().home()
    backend = TwinBackend(home, CONFIRMING_POLICY)
    agent = Scripted(unlock("c1"), ASK, unlock("c2"), AssistantMessage("Done."))
    trajectory = await run_episode(agent, backend, ["Unlock the front door.", user])
    refusal = results(trajectory.messages)[0]["error"]
    assert refusal["message"].startswith(f"lock.unlock on {DOOR} needs the user's confirmation")
    assert "ask the user" in refusal["message"]
    assert codes(trajectory.messages) == calls
    assert home.states[DOOR].state == state


async def test_a_model_cannot_confirm_for_the_user() -> None:
    """Saying yes itself, in a tool argument or in its own text, confirms nothing."""
    home = blueprint().home()
    backend = TwinBackend(home, CONFIRMING_POLICY)
    pyexec = {"code": f'call_service("lock", "unlock", entity_id="{DOOR}", confirmed=True)'}
    agent = Scripted(
        unlock("c1"),
        unlock("c2", {**UNLOCK, "confirmed": True}),
        unlock("c3", {**UNLOCK, "data": {"confirmed": True}}),
        AssistantMessage("", (ToolCall("c4", "pyexec", pyexec),)),
        AssistantMessage("Yes, I confirm.", (ToolCall("c5", "call_service", UNLOCK),)),
        AssistantMessage("Shall I?"),
    )
    trajectory = await run_episode(agent, backend, ["Unlock the front door."])
    assert codes(trajectory.messages) == [
        "confirmation_required",
        "invalid_arguments",
        "confirmation_required",
        "confirmation_required",
        "confirmation_required",
    ]
    assert home.states[DOOR].state == "locked"
    assert backend.confirmation.confirmed == frozenset()


async def test_a_yes_confirms_only_what_was_asked_and_only_for_the_next_turn() -> None:
    home = blueprint().home()
    backend = TwinBackend(home, CONFIRMING_POLICY)
    # A yes before anything was asked confirms nothing; a yes lasts one agent turn.
    agent = Scripted(
        AssistantMessage("Anything else?"),
        unlock("c1"),
        ASK,
        AssistantMessage("I'll wait."),
        unlock("c2"),
        AssistantMessage("Hmm."),
    )
    turns = ["Yes.", "Unlock the front door.", "Yes.", "Now do it."]
    trajectory = await run_episode(agent, backend, turns)
    assert codes(trajectory.messages) == ["confirmation_required", "confirmation_required"]
    assert home.states[DOOR].state == "locked"


async def test_the_default_policy_unlocks_at_once_as_home_assistant_does() -> None:
    home = blueprint().home()
    agent = Scripted(unlock("c1"), AssistantMessage("Done."))
    trajectory = await run_episode(agent, TwinBackend(home, DEFAULT_POLICY), ["Unlock it."])
    assert codes(trajectory.messages) == ["ok"]
    assert home.states[DOOR].state == "unlocked"


@pytest.mark.parametrize(("service", "answers"), [("unlock", CONFIRM), ("lock", DECLINE)])
def test_the_simulated_user_answers_by_its_intent(service: str, answers: tuple[str, ...]) -> None:
    """Asked to confirm an unlock, the user says yes if it wants the door unlocked, else no."""
    home = blueprint(service).home()
    user = ScriptedUser(blueprint(service).task, 3, home=home)
    refused = asyncio.run(TwinBackend(home, CONFIRMING_POLICY).run_tool("call_service", UNLOCK))
    result: Message = {"role": "tool", "tool_call_id": "c1", "name": "call_service"}
    dialogue: list[Message] = [
        {"role": "user", "content": "Please unlock the front door."},
        unlock("c1").to_openai(),
        {**result, "content": json.dumps(refused)},
        ASK.to_openai(),
    ]
    assert user.reply(dialogue, None) in answers


def test_homeenv_v1_plays_the_flow_with_the_teacher_and_the_simulated_user() -> None:
    env = DialogueEnv(blueprint(), policy=CONFIRMING_POLICY)
    env.reset(options={"user_seed": SEED})
    teacher = TeacherPolicy(blueprint().task, SEED)
    total, over = 0.0, False
    while not over:
        action = asyncio.run(teacher.act(list(env.trajectory.messages), env.tool_schemas))
        _, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        over = terminated or truncated
    trajectory = env.trajectory
    said = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    assert said[1] in CONFIRM  # the user's yes to the teacher's question
    assert "confirmation_required" in codes(trajectory.messages)
    assert (trajectory.done, trajectory.end_reason) == (True, "done")
    assert env.home.states[DOOR].state == "unlocked"
    assert total > 0  # asking costs nothing


def test_a_pyexec_script_the_auditor_stops_gives_way_to_single_calls_and_a_question() -> None:
    """A script that unlocks the door is stopped whole (nothing changes); the teacher then makes
    the calls one by one, asks about the unlock, and makes it once the user says yes."""
    light = next(e for e in sorted(blueprint().home().states) if e.startswith("light."))
    lit = "on" if blueprint().home().states[light].state == "off" else "off"
    intents = (Intent("lock", "unlock", DOOR), Intent("light", f"turn_{lit}", light))
    task = Task(("Please unlock the front door and switch the light.",), intents)
    seed = next(seed for seed in range(100) if TeacherPolicy(task, seed).style.pyexec)
    env = DialogueEnv(dataclasses.replace(blueprint(), task=task), policy=CONFIRMING_POLICY)
    env.reset(options={"user_seed": SEED})
    teacher, over = TeacherPolicy(task, seed), False
    while not over:
        action = asyncio.run(teacher.act(list(env.trajectory.messages), env.tool_schemas))
        _, _, terminated, truncated, _ = env.step(action)
        over = terminated or truncated
    names = [step.name for step in env.trajectory.steps]
    assert names.index("pyexec") < names.index("call_service")
    assert codes(env.trajectory.messages)[names.index("pyexec")] == "confirmation_required"
    assert (env.trajectory.done, env.trajectory.end_reason) == (True, "done")
    assert env.home.states[DOOR].state == "unlocked"
    assert env.home.states[light].state == lit


def test_a_snapshot_keeps_what_the_user_was_asked() -> None:
    env = DialogueEnv(blueprint(), policy=CONFIRMING_POLICY)
    env.reset(options={"user_seed": SEED})
    env.step(unlock("c1"))
    state = env.snapshot()
    asked = env.step(ASK)
    env.restore(state)
    assert env.step(ASK)[0] == asked[0]
    observation, *_ = env.step(unlock("c2"))
    assert json.loads(json.loads(observation)[0]["content"])["success"] is True
    assert env.home.states[DOOR].state == "unlocked"

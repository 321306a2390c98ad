"""Status questions and impossible requests: what the reply must state (agent.task.Answer), how
the scripter asks them in Home Assistant's templates, and how the teacher, the user and the
dialogue env treat them."""

from __future__ import annotations

import asyncio
import json
import random
from functools import cache

import pytest

from agent.backends.twin import TwinBackend
from agent.envs import DialogueEnv
from agent.episode import Trajectory, run_episode
from agent.flywheel import localise
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.blueprints import questions as asking
from agent.flywheel.user import ScriptedUser
from agent.policies import AssistantMessage, Message, Policy, ToolCall
from agent.policies.careless import CarelessTeacher
from agent.policies.teacher import TeacherPolicy
from agent.task import Answer, Intent, Task, TaskError, fields_of
from twin.home import Home
from twin.homemaker import make_home
from twin.tools import describe, list_entities


@cache
def asked() -> tuple[Blueprint, ...]:
    """The status questions and impossible requests among the first 400 training seeds."""
    found = [make_blueprint(seed) for seed in range(400)]
    return tuple(b for b in found if isinstance(b, Blueprint) and b.query_type.request != "command")


def of(kind: str) -> list[Blueprint]:
    return [b for b in asked() if b.query_type.request == kind]


class Says:
    """A policy that replies `text` at once, or after the call it is given."""

    def __init__(self, text: str, call: ToolCall | None = None) -> None:
        self.text, self.call = text, call

    async def act(self, messages: list[Message], tools: list[dict]) -> AssistantMessage:
        done = any(m.get("role") == "tool" for m in messages)
        if self.call is not None and not done:
            return AssistantMessage("", (self.call,))
        return AssistantMessage(self.text)


def play(blueprint: Blueprint, policy: Policy, seed: int = 0) -> Trajectory:
    return played(blueprint.home(), blueprint.task, policy, seed)


def played(home: Home, task: Task, policy: Policy, seed: int = 0) -> Trajectory:
    return asyncio.run(
        run_episode(
            policy,
            TwinBackend(home),
            ScriptedUser(task, seed, home=home),
            conditions=task.conditions(home),
        )
    )


def held_out_home(seed: int) -> Home:
    return localise.localise(make_home(seed), "en", "held_out")


def white_only(home: Home) -> str:
    """A light of `home` that is off and takes no colour."""
    return next(
        e
        for e in sorted(home.states)
        if e.startswith("light.")
        and home.states[e].state == "off"
        and "color_name" not in fields_of(home, e)
    )


def succeeded(trajectory: Trajectory) -> bool:
    return trajectory.done and not (trajectory.steps and trajectory.steps[-1].collateral)


def test_an_answer_states_its_reply_check_and_refuses_nonsense() -> None:
    lamp = Answer("light.desk", expected="on")
    assert lamp.kind == "yes_no"
    assert lamp.condition == 'says(state("light.desk") == "on")'
    reading = Answer("climate.hall", attribute="current_temperature")
    assert reading.kind == "status"
    assert reading.condition == 'says(attr("climate.hall", "current_temperature"))'
    missing = Answer(absent={"area": "bathroom", "domain": "fan"})
    assert missing.kind == "impossible"
    assert missing.condition == "says(False)"
    white = Answer("light.desk", lacks="color_name")
    assert (white.kind, white.condition) == ("impossible", "says(False)")
    for bad in (
        {},
        {"attribute": "brightness"},
        {"entity_id": "light.desk", "absent": {"domain": "fan"}},
        {"absent": {"colour": "blue"}},
        {"lacks": "color_name"},
        {"absent": {"domain": "fan"}, "lacks": "color_name"},
        {"entity_id": "light.desk", "expected": "on", "lacks": "color_name"},
        {"entity_id": "light.desk", "lacks": ["color_name"]},
    ):
        with pytest.raises(TaskError):
            Answer(**bad)
    with pytest.raises(TaskError, match="no intents"):
        Task(("Is it on?",), (Intent("light", "turn_on", "light.desk"),), answers=(lamp,))
    task = Task(("Is the desk lamp on?",), (), answers=(lamp,))
    assert Task.from_json(task.to_json()) == task


def test_an_impossible_request_is_checked_against_the_home() -> None:
    home = make_home(3, "house")
    area = next(a for a in home.areas if list_entities(home, area=a, domain="light")["entities"])
    there = Task(("Turn on the lights.",), (), answers=(Answer(absent={"area": area}),))
    with pytest.raises(TaskError, match="has what"):
        there.check(home)
    colour = next(e for e in sorted(home.states) if "color_name" in fields_of(home, e))
    coloured = Task(("Make it blue.",), (), answers=(Answer(colour, lacks="color_name"),))
    with pytest.raises(TaskError, match="takes what"):
        coloured.check(home)
    gone = Task(("Make it blue.",), (), answers=(Answer("light.nowhere", lacks="color_name"),))
    with pytest.raises(TaskError, match="lacks"):
        gone.check(home)
    Task(("Make it blue.",), (), answers=(Answer(white_only(home), lacks="color_name"),)).check(
        home
    )


def test_the_scripter_asks_both_kinds_in_home_assistants_own_words() -> None:
    """About one request in eight is a status question and one in sixteen an impossible one;
    every one is a sentence Home Assistant's matcher reads, about a device the home names once
    (a question), a kind of device its room lacks or a feature its device lacks (an impossible
    request, either kind about as often)."""
    questions, impossible = of("question"), of("impossible")
    assert len(questions) >= 20
    assert len(impossible) >= 8
    assert {a.kind for b in questions for a in b.task.answers} == {"status", "yes_no"}
    lacked = set()
    for blueprint in impossible:
        answer = blueprint.task.answers[0]
        if answer.lacks is not None:
            assert answer.lacks not in fields_of(blueprint.home(), str(answer.entity_id))
            lacked.add(answer.lacks)
        else:
            assert list_entities(blueprint.home(), **answer.absent)["entities"] == []
    assert 0.25 < len([b for b in impossible if b.task.answers[0].lacks]) / len(impossible) < 0.75
    assert len(lacked) >= 2  # not only colour
    # The benchmark's held-out templates say them too (by the room of a device alone in it).
    held = [
        said
        for seed in range(10)
        if (said := asking.impossible(random.Random(seed), held_out_home(seed), share="held_out"))
    ]
    assert any("lacks" in said.answer for said in held)
    assert len({b.task.turns[0] for b in asked()}) == len(asked())
    said = asking.question(random.Random(5), make_home(5, "house"))
    assert said is not None
    assert "entity_id" in said.answer


@pytest.mark.parametrize("kind", ["question", "impossible"])
def test_the_teacher_looks_then_states_the_answer(kind: str) -> None:
    """Careful or careless, every style of the teacher solves them: a look, a read of the
    device asked about, a reply that states it, or says the room or the device lacks it,
    changing nothing."""
    found = of(kind)
    for blueprint in [b for b in found if b.task.answers[0].lacks][:5] + found[:5]:
        for seed in range(4):
            for policy in (
                TeacherPolicy(blueprint.task, seed),
                CarelessTeacher(blueprint.task, seed, careless=0.5),
            ):
                trajectory = play(blueprint, policy, seed)
                assert succeeded(trajectory), (blueprint.task.to_json(), trajectory.messages)
                assert trajectory.steps
                assert trajectory.end_reason == "done"


def test_a_reply_that_does_not_state_the_answer_fails_and_the_user_asks_again() -> None:
    blueprint = next(b for b in of("question") if b.task.answers[0].kind == "status")
    trajectory = play(blueprint, Says("Done!"))
    assert not trajectory.done
    users = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    assert blueprint.task.turns[0] in users[1]  # asked again


def test_an_impossible_request_fails_when_the_agent_acts_or_claims_success() -> None:
    blueprint = of("impossible")[0]
    home = blueprint.home()
    other = next(e for e in sorted(home.states) if e.startswith("light."))
    switch_on = ToolCall(
        "call_0",
        "call_service",
        {"domain": "light", "service": "turn_on", "target": {"entity_id": other}},
    )
    assert not succeeded(play(blueprint, Says("There's no such device, sorry.", switch_on)))
    assert not succeeded(play(blueprint, Says("Done, it's on now.")))
    assert succeeded(play(blueprint, Says("Sorry, there is no such device in that room.")))


def test_a_feature_the_device_lacks_fails_when_the_agent_tries_it() -> None:
    """Home Assistant drops a colour a white-only bulb cannot show and turns it on: an agent
    that tries is caught by the change, one that only says no passes."""
    home = make_home(0)
    light = white_only(home)
    assert "color_name" not in json.dumps(describe(home, light))
    task = Task(("Make it blue.",), (), answers=(Answer(light, lacks="color_name"),))
    blue = ToolCall(
        "call_0",
        "call_service",
        {
            "domain": "light",
            "service": "turn_on",
            "target": {"entity_id": light},
            "data": {"color_name": "blue"},
        },
    )
    assert not succeeded(played(home.copy(), task, Says("That light can't do colours.", blue)))
    assert not succeeded(played(home.copy(), task, Says("Done, it's blue now.")))
    assert succeeded(played(home.copy(), task, Says("Sorry, that light can't show colours.")))
    assert succeeded(played(home.copy(), task, TeacherPolicy(task, 3)))


def test_the_dialogue_env_rewards_the_reply_that_answers() -> None:
    """In the env a reply is an action too: the one that states the answer solves the task."""
    blueprint = next(b for b in of("question") if b.task.answers[0].kind == "yes_no")
    env = DialogueEnv(blueprint)
    env.reset(seed=0)
    teacher = TeacherPolicy(blueprint.task, 1)
    rewards, info = [], {}
    for _ in range(6):
        action = teacher.next_message(env.trajectory.messages)
        _, reward, over, _, info = env.step(action)
        rewards.append(reward)
        if not action.tool_calls or over:
            break
    assert info["outcome"]["success"]
    assert rewards[-1] == pytest.approx(1.0)
    assert sum(rewards[:-1]) == 0.0  # looking and reading earn nothing on their own


@pytest.mark.parametrize(
    "answers",
    [
        [{"absent": "x"}],
        [{"absent": {"area": 5}}],
        [{"entity_id": "light.x", "attribute": 5}],
        [{"entity_id": "not an id"}],
        [{"entity_id": "light.x", "expected": [1]}],
        [{"entity_id": 7}],
        [{"entity_id": "light.x", "lacks": 3}],
        "x",
    ],
)
def test_a_malformed_answer_is_a_task_error(answers: object) -> None:
    text = json.dumps({"turns": ["Is it on?"], "intents": [], "answers": answers})
    with pytest.raises(TaskError):
        Task.from_json(text)

"""The user simulator in real episodes: the scripted teacher acting on twin homes, the user
answering its questions from the hidden intents, restating what is unfinished and closing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.backends.twin import TwinBackend
from agent.episode import EpisodeLimits, Trajectory, run_episode
from agent.flywheel.user import (
    CLOSINGS,
    ONLY_THAT,
    UP_TO_YOU,
    YES,
    LLMUser,
    ScriptedUser,
    UserSimulator,
    UserSimulatorError,
)
from agent.policies.openai import OpenAIPolicy
from agent.policies.teacher import TeacherPolicy
from agent.task import Intent, Task
from tests.agent.test_openai_policy import FakeServer, completion, server  # noqa: F401
from twin.home import Home
from twin.homemaker import make_home
from twin.verifier import ConditionStatus

KITCHEN = "light.kitchen_ceiling_light"  # on at 30 %, in the kitchen of make_home(3, "apartment")
BRIGHTNESS = Intent("light", "turn_on", KITCHEN, {"brightness_pct": 45}, clarify="brightness_pct")
RADIATOR = Intent(
    "climate", "set_temperature", "climate.study_radiator", {"temperature": 21}, clarify="entity"
)
DESK_LAMP = Intent("light", "turn_on", "light.study_desk_lamp")
BLINDS = Intent("cover", "open_cover", "cover.study_blinds")


def home() -> Home:
    return make_home(3, "apartment")


def task(*intents: Intent, request: str = "Could you sort out the kitchen ceiling light?") -> Task:
    made = Task((request, "(answered by the simulator)"), intents)
    made.check(home())
    return made


async def play(
    user_task: Task, seed: int, agent_task: Task | None = None, max_turns: int = 10
) -> tuple[Trajectory, list[str]]:
    """An episode of the teacher (playing `agent_task`, by default the user's) and the scripted
    user; the trajectory and what the user said."""
    the_home = home()
    trajectory = await run_episode(
        TeacherPolicy(agent_task or user_task, seed),
        TwinBackend(the_home),
        ScriptedUser(user_task, seed, home=the_home),
        conditions=user_task.conditions(the_home),
        limits=EpisodeLimits(max_turns=max_turns),
    )
    said = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    return trajectory, said


def replies(trajectory: Trajectory) -> list[str]:
    return [
        m["content"]
        for m in trajectory.messages
        if m["role"] == "assistant" and not m.get("tool_calls")
    ]


@pytest.mark.parametrize("seed", range(6))
async def test_a_missing_value_is_answered_with_the_hidden_one(seed: int) -> None:
    trajectory, said = await play(task(BRIGHTNESS), seed)
    assert trajectory.done
    assert trajectory.end_reason == "done"
    assert "bright" in replies(trajectory)[0].lower()
    assert said[0] == "Could you sort out the kitchen ceiling light?"
    assert "45%" in said[1]
    assert "%" not in said[1].replace("45%", "")
    assert said[-1] in CLOSINGS
    assert len(said) == 3
    assert not any("light." in line for line in said)


@pytest.mark.parametrize("seed", range(4))
async def test_which_one_is_answered_with_name_and_room_never_the_id(seed: int) -> None:
    trajectory, said = await play(task(RADIATOR, DESK_LAMP, request="Warm it up to 21."), seed)
    assert trajectory.done
    assert replies(trajectory)[0].startswith("Which thermostat")
    assert "radiator in the study" in said[1] or "study one, the radiator" in said[1]
    assert "climate." not in said[1]
    assert "21" not in said[1]
    assert said[-1] in CLOSINGS


def test_the_same_question_twice_gets_the_same_value() -> None:
    clarify = task(BRIGHTNESS)
    for seed in range(8):
        user = ScriptedUser(clarify, seed, home=home())
        dialogue: list[dict[str, Any]] = [{"role": "user", "content": clarify.turns[0]}]
        answers = []
        for question in ("How bright should it be?", "Sorry, what brightness did you say?"):
            dialogue.append({"role": "assistant", "content": question})
            answer = user.reply(dialogue, None)
            assert answer is not None
            answers.append(answer)
            dialogue.append({"role": "user", "content": answer})
        assert all("45%" in answer for answer in answers), answers


async def test_only_unfinished_intents_are_restated() -> None:
    """The agent turns on the lamp but never opens the blinds: the user asks for the blinds
    again, and only for them, until the turns run out."""
    both = task(DESK_LAMP, BLINDS, request="Desk lamp on and blinds open in the study, please.")
    trajectory, said = await play(both, 1, agent_task=task(DESK_LAMP), max_turns=3)
    assert not trajectory.done
    assert trajectory.end_reason == "max_turns"
    restated = said[1:]
    assert len(restated) == 2
    for line in restated:
        assert "open the study blinds" in line
        assert "lamp" not in line
        assert line not in CLOSINGS


def test_nothing_said_until_asked_and_done_after_closing() -> None:
    user = ScriptedUser(task(DESK_LAMP), 0)
    done = [ConditionStatus("x", satisfied=True, newly_satisfied=True)]
    dialogue: list[dict[str, Any]] = [
        {"role": "user", "content": "Lamp on."},
        {"role": "assistant", "content": "Done. Anything else?"},
    ]
    closing = user.reply(dialogue, done)
    assert closing in CLOSINGS
    assert user.reply([*dialogue, {"role": "user", "content": closing}], done) is None
    with pytest.raises(ValueError, match="2 condition statuses for 1 goals"):
        user.reply(dialogue, done * 2)


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        ("Shall I turn on the Kitchen Ceiling Light?", YES),
        ("Should I also switch off the Hallway Ceiling Light?", ONLY_THAT),
        ("Would you like a slow transition?", UP_TO_YOU),
    ],
)
def test_questions_the_intent_does_not_settle(question: str, answers: tuple[str, ...]) -> None:
    user = ScriptedUser(task(BRIGHTNESS), 2, home=home())
    dialogue = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": question}]
    answer = user.reply(dialogue, None)
    assert answer in {a.format(device="ceiling light", area="kitchen") for a in answers}


async def test_deterministic_per_seed_and_varied_across_seeds() -> None:
    clarify = task(BRIGHTNESS)
    runs = {seed: (await play(clarify, seed))[1] for seed in range(8)}
    assert (await play(clarify, 3))[1] == runs[3]
    assert len({tuple(said) for said in runs.values()}) >= 4
    assert len({said[-1] for said in runs.values()}) >= 3


def test_a_simulator_satisfies_the_protocol() -> None:
    assert isinstance(ScriptedUser(task(DESK_LAMP)), UserSimulator)


def post_process(query: str) -> dict[str, Any]:
    arguments = json.dumps({"query": query, "reason": "answers the agent's question"})
    call = {"id": "u1", "type": "function", "function": {"name": "post_process", "arguments": ""}}
    call["function"]["arguments"] = arguments  # type: ignore[index]
    return {"content": None, "tool_calls": [call]}


async def test_llm_user_gets_the_hidden_intent_and_dialogue_and_is_used(
    server: FakeServer,  # noqa: F811
) -> None:
    server.replies = [
        completion(post_process("Hmm, 45 percent or so.")),
        completion({"content": "Lovely, that's all."}),
    ]
    clarify = task(BRIGHTNESS)
    the_home = home()
    async with OpenAIPolicy(server.url, "user-model", retries=0) as model:
        trajectory = await run_episode(
            TeacherPolicy(clarify, 0),
            TwinBackend(the_home),
            LLMUser(model, clarify, home=the_home, scene="Evening, cooking dinner."),
            conditions=clarify.conditions(the_home),
        )
    said = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    assert said == [clarify.turns[0], "Hmm, 45 percent or so.", "Lovely, that's all."]
    assert trajectory.done
    first, last = (body for body, _ in server.requests)
    assert first["messages"][0]["content"].startswith("Task Definition.")
    assert first["tools"][0]["function"]["name"] == "post_process"
    context = first["messages"][1]["content"]
    assert '"brightness_pct": 45' in context
    assert "[unfinished]" in context
    assert "Evening, cooking dinner." in context
    assert f"User: {clarify.turns[0]}" in context
    assert f"Agent: {replies(trajectory)[0]}" in context
    assert "[done]" in last["messages"][1]["content"]


async def test_llm_user_without_a_query_is_an_error(server: FakeServer) -> None:  # noqa: F811
    server.replies = [completion({"content": ""})]
    dialogue = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Which?"}]
    async with OpenAIPolicy(server.url, "user-model", retries=0) as model:
        with pytest.raises(UserSimulatorError, match="no query"):
            await LLMUser(model, task(DESK_LAMP)).next_turn(dialogue, None)

"""QT4 multi-turn tasks: follow-ups said once the earlier requests are done, superseding intents,
a teacher that acts only on what was said, and real episodes on the twin."""

from __future__ import annotations

import json
from itertools import islice
from typing import Any

import pytest

from agent.backends.twin import TwinBackend
from agent.episode import Trajectory, run_episode
from agent.flywheel.blueprints import PHENOMENA, Blueprint, make_blueprint
from agent.flywheel.user import CLOSINGS, LLMUser, ScriptedUser
from agent.policies import AssistantMessage
from agent.policies.teacher import TeacherPolicy
from agent.task import Intent, Task, TaskError
from twin.home import Home
from twin.homemaker import make_home
from twin.verifier import Verifier

DESK = "light.study_desk_lamp"
RADIATOR = "climate.kitchen_radiator"  # heating to 20 °C at the start


def home() -> Home:
    return make_home(4, "apartment")


def radiator(temperature: float, turn: int = 0) -> Intent:
    return Intent("climate", "set_temperature", RADIATOR, {"temperature": temperature}, turn=turn)


BACKTRACKING = Task(
    ("Set the kitchen radiator to 20 °C.",),
    (radiator(20.0), radiator(22.0, turn=1)),
    ("Actually, no, make it 22 °C.",),
)
COREFERENCE = Task(
    ("Turn on the study desk lamp.",),
    (
        Intent("light", "turn_on", DESK),
        Intent("light", "turn_on", DESK, {"brightness_pct": 40}, turn=1),
    ),
    ("Thanks. Now set it to 40 %.",),
)
TOPIC_SWITCH = Task(
    ("Turn on the study desk lamp.",),
    (Intent("light", "turn_on", DESK), radiator(22.0, turn=1)),
    ("Oh, and on a different note, set the kitchen radiator to 22 °C.",),
)


def test_json_round_trips_follow_ups_and_turns_and_leaves_single_turn_json_alone() -> None:
    for task in (BACKTRACKING, COREFERENCE, TOPIC_SWITCH):
        assert Task.from_json(task.to_json()) == task
        assert json.loads(task.to_json())["intents"][1]["turn"] == 1
    single = Task(("Turn on the study desk lamp.",), (Intent("light", "turn_on", DESK),))
    assert json.loads(single.to_json()) == {
        "turns": ["Turn on the study desk lamp."],
        "intents": [{"domain": "light", "service": "turn_on", "entity_id": DESK}],
    }


@pytest.mark.parametrize(
    ("intents", "followups"),
    [
        ((Intent("light", "turn_on", DESK, turn=1),), ()),  # turn 1 has no utterance
        ((Intent("light", "turn_on", DESK),), ("And then?",)),  # a follow-up that asks nothing
        ((Intent("light", "turn_on", DESK), radiator(22.0, turn=1)), ("Do it.",)),  # = request
    ],
)
def test_a_turn_without_an_utterance_or_intent_is_refused(
    intents: tuple[Intent, ...], followups: tuple[str, ...]
) -> None:
    with pytest.raises(TaskError):
        Task(("Do it.",), intents, followups)
    with pytest.raises(TaskError, match="turn"):
        Intent("light", "turn_on", DESK, turn=-1)


def test_a_later_intent_supersedes_an_earlier_one_in_conditions_and_check() -> None:
    start = home()
    # The superseded 20 °C already holds at the start: only the final goal counts.
    assert BACKTRACKING.goals() == [1]
    assert BACKTRACKING.goals(upto=0) == [0]
    assert BACKTRACKING.conditions(start) == [radiator(22.0).condition]
    BACKTRACKING.check(start)
    # Turning the lamp on is superseded by turning it on at 40 %; the switch stays a goal.
    assert COREFERENCE.conditions(start) == [COREFERENCE.intents[1].condition]
    assert len(TOPIC_SWITCH.conditions(start)) == 2
    # In the same turn, two values for one field are a contradiction the check refuses.
    same_turn = Task(("Set it.",), (radiator(20.0), radiator(22.0)))
    with pytest.raises(TaskError, match="unmet"):
        same_turn.check(start)


def test_the_user_says_the_follow_up_only_once_the_earlier_intents_are_done() -> None:
    house = home()
    verifier = Verifier(house, TOPIC_SWITCH.conditions(house))
    user = ScriptedUser(TOPIC_SWITCH, home=house)
    dialogue: list[Any] = [
        {"role": "user", "content": TOPIC_SWITCH.turns[0]},
        {"role": "assistant", "content": "Done."},
    ]
    # The lamp is still off: the user restates it, and only it (the radiator is not said yet).
    restated = user.reply(dialogue, verifier.step(house).conditions)
    assert restated is not None
    assert "desk lamp" in restated
    assert "radiator" not in restated
    house.call_service("light", "turn_on", {}, {"entity_id": DESK})
    assert user.reply(dialogue, verifier.step(house).conditions) == TOPIC_SWITCH.followups[0]
    dialogue += [
        {"role": "user", "content": TOPIC_SWITCH.followups[0]},
        {"role": "assistant", "content": "Done."},
    ]
    restated = user.reply(dialogue, verifier.step(house).conditions)
    assert restated is not None
    assert "radiator" in restated
    assert "desk lamp" not in restated
    house.call_service("climate", "set_temperature", {"temperature": 22}, {"entity_id": RADIATOR})
    assert user.reply(dialogue, verifier.step(house).conditions) in CLOSINGS


def calls_by_turn(trajectory: Trajectory, task: Task) -> list[list[dict[str, Any]]]:
    """The call_service arguments made after each of the user's turns (0 = the request)."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(len(task.followups) + 1)]
    said: list[str] = []
    for message in trajectory.messages:
        if message.get("role") == "user":
            said.append(str(message["content"]))
        for call in message.get("tool_calls") or []:
            if call["function"]["name"] == "call_service":
                out[task.stated(said)].append(json.loads(call["function"]["arguments"]))
    return out


@pytest.mark.parametrize("task", [BACKTRACKING, COREFERENCE, TOPIC_SWITCH])
async def test_the_teacher_acts_on_a_turn_only_once_the_user_said_it(task: Task) -> None:
    for seed in range(6):
        house = home()
        trajectory = await run_episode(
            TeacherPolicy(task, seed),
            TwinBackend(house),
            ScriptedUser(task, seed, home=house),
            conditions=task.conditions(house),
        )
        assert trajectory.done, seed
        assert not trajectory.steps[-1].collateral
        said = [m["content"] for m in trajectory.messages if m.get("role") == "user"]
        assert said[0] == task.turns[0]
        assert task.followups[0] in said
        assert said[-1] in CLOSINGS
        before, after = calls_by_turn(trajectory, task)
        first, second = task.intents
        assert before, seed
        assert after, seed
        assert all(call["target"]["entity_id"] == first.entity_id for call in before)
        assert all(said_data(call) == first.data for call in before), before
        assert all(said_data(call) == second.data for call in after), after


def said_data(call: dict[str, Any]) -> dict[str, Any]:
    """A call's data, with brightness (0-255) said back in percent as the intents say it."""
    data = dict(call.get("data") or {})
    if "brightness" in data:
        data["brightness_pct"] = round(data.pop("brightness") / 2.55)
    return data


def qt4_blueprints(phenomenon: str, count: int) -> list[Blueprint]:
    found = (make_blueprint(seed) for seed in range(400))
    return list(
        islice(
            (
                b
                for b in found
                if isinstance(b, Blueprint) and b.query_type.phenomenon == phenomenon
            ),
            count,
        )
    )


@pytest.mark.parametrize("phenomenon", PHENOMENA)
async def test_qt4_blueprints_take_two_turns_and_real_episodes_succeed(phenomenon: str) -> None:
    blueprints = qt4_blueprints(phenomenon, 4)
    assert len(blueprints) == 4
    for blueprint in blueprints:
        task = blueprint.task
        assert len(task.followups) == 1
        assert {i.turn for i in task.intents} == {0, 1}
        if phenomenon == "topic_switch":
            area = blueprint.home().area_of
            assert area(task.intents[-1].entity_id) != area(task.intents[0].entity_id)
        else:  # coreference and backtracking build on turn 0's device
            assert task.intents[1].supersedes(task.intents[0])
        for seed in range(3):
            house = blueprint.home()
            trajectory = await run_episode(
                TeacherPolicy(task, seed, mistake_rate=0.3),
                TwinBackend(house),
                ScriptedUser(task, seed, home=house),
                conditions=task.conditions(house),
                memory=blueprint.memory,
                scene=blueprint.scenes[0],
            )
            assert trajectory.done, (blueprint.seed, seed, task.to_json())
            assert not trajectory.steps[-1].collateral
            assert task.followups[0] in [m.get("content") for m in trajectory.messages]


class Recorder:
    """A user model that records what it was told and answers with a fixed line."""

    def __init__(self) -> None:
        self.told: list[str] = []

    async def act(self, messages: list[Any], tools: list[Any]) -> AssistantMessage:
        self.told.append(messages[-1]["content"])
        return AssistantMessage("The lamp, please.")


async def test_the_llm_user_says_the_follow_up_as_scripted_and_knows_only_what_was_said() -> None:
    house = home()
    verifier = Verifier(house, TOPIC_SWITCH.conditions(house))
    model = Recorder()
    user = LLMUser(model, TOPIC_SWITCH, home=house)
    dialogue: list[Any] = [
        {"role": "user", "content": TOPIC_SWITCH.turns[0]},
        {"role": "assistant", "content": "Which light?"},
    ]
    assert await user.next_turn(dialogue, verifier.step(house).conditions) == "The lamp, please."
    assert DESK in model.told[0]
    assert RADIATOR not in model.told[0]  # not said yet: hidden from the user model too
    house.call_service("light", "turn_on", {}, {"entity_id": DESK})
    follow_up = await user.next_turn(dialogue, verifier.step(house).conditions)
    assert follow_up == TOPIC_SWITCH.followups[0]  # word for word, so the task's turn is known
    assert len(model.told) == 1

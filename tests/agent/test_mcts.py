"""MCTS-Flow and its baselines on real blueprints and twin homes, with the scripted teacher."""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

from agent.backends.twin import TwinBackend
from agent.episode import Trajectory
from agent.flywheel.blueprints import Blueprint, QueryType, Rejected, make_blueprint
from agent.flywheel.mcts import (
    AGENT,
    USER,
    Node,
    Players,
    Search,
    SynthesisConfig,
    actions,
    roleplay,
    select,
    summarise,
    synthesize,
    tool_sequence,
    uct,
)
from agent.flywheel.profiles import make_profile
from agent.policies import AssistantMessage, Message, Policy, ToolCall
from agent.policies.careless import CarelessTeacher
from agent.policies.teacher import TeacherPolicy
from agent.task import Intent, Task
from twin.homemaker import make_home
from twin.verifier import Verifier

LAMP, PENDANT = "light.living_room_floor_lamp", "light.kitchen_pendant_lights"


@cache
def blueprints() -> tuple[Blueprint, ...]:
    found = (make_blueprint(seed) for seed in range(24))
    return tuple(b for b in found if isinstance(b, Blueprint))


def lamp_blueprint() -> Blueprint:
    """Turn on the living-room floor lamp; the brightness comes in the user's second turn."""
    intent = Intent("light", "turn_on", LAMP, {"brightness_pct": 40}, clarify="brightness_pct")
    task = Task(
        ("Could you turn on the floor lamp in the living room?", "40 %, please."), (intent,)
    )
    task.check(make_home(1, "apartment"))
    qtype = QueryType("missing_slot", "independent", "single", "plain")
    return Blueprint(1, make_profile(1), 1, "apartment", ("Evening.",), qtype, task)


class SlipOnce:
    """The teacher, except that (when `slip`) its first service call turns on the pendant."""

    def __init__(self, task: Task, seed: int, slip: bool) -> None:
        self.teacher = TeacherPolicy(task, seed)
        self.slip = slip

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        planned = self.teacher.next_message(messages)
        slipped = any(PENDANT in str(m.get("tool_calls")) for m in messages)
        calls = planned.tool_calls
        if self.slip and not slipped and calls and calls[0].name == "call_service":
            arguments = {"domain": "light", "service": "turn_on", "target": {"entity_id": PENDANT}}
            return AssistantMessage("", (ToolCall("slip", "call_service", arguments),))
        return planned


def nodes(root: Node) -> Iterator[Node]:
    yield root
    for child in root.children:
        yield from nodes(child)


async def replay(blueprint: Blueprint, calls: list[list[Any]], reply: str | None = None) -> bool:
    """Whether the tool calls, run on a fresh home, and the agent's last `reply` (which a
    question's reply check reads) meet the task with nothing else changed."""
    home = blueprint.home()
    verifier = Verifier(home, blueprint.task.conditions(home))
    backend = TwinBackend(home)
    for name, arguments in calls:
        await backend.run_tool(name, arguments)
    report = verifier.step(home, reply)
    return report.done and not report.collateral


async def test_a_failed_late_turn_is_resampled_under_its_parent_reusing_the_prefix() -> None:
    made: list[int] = []

    def policy(task: Task, seed: int) -> Policy:
        made.append(seed)
        return SlipOnce(task, seed, slip=len(made) == 2)  # the first rollout's second turn

    blueprint = lamp_blueprint()
    search = Search(blueprint, SynthesisConfig(iterations=2, careless=0), policy)
    out = await search.run(2)
    assert search.root is not None
    leaves = [node for node in nodes(search.root) if node.terminal]
    assert [leaf.success for leaf in leaves] == [False, True]
    assert PENDANT in leaves[0].report.collateral
    # The sibling turn hangs under the agent node of turn 2 (request, turn 1, answer reused).
    turn_two = search.root.children[0].children[0].children[0]
    assert turn_two.role == AGENT
    assert len(turn_two.children) == 2
    assert out.prefix_reuses == 3
    # Regenerating each rollout from scratch would pay for turn 1 twice; the tree paid once.
    turn_one = search.root.children[0].children[0].trajectory.policy_calls
    from_scratch = sum(leaf.trajectory.policy_calls for leaf in leaves)
    assert turn_one >= 1
    assert out.rollouts_saved == turn_one
    assert out.policy_calls == from_scratch - turn_one
    assert len(out.trajectories) == 1
    assert out.trajectories[0] is leaves[1].trajectory
    made.clear()
    linear = await synthesize(blueprint, SynthesisConfig(method="linear", careless=0), policy)
    assert not linear.success
    assert linear.rollouts == 1
    assert linear.prefix_reuses == 0


@pytest.mark.parametrize(("k_user", "k_agent"), [(1, 3), (2, 1)])
async def test_branching_is_k_agent_under_agent_nodes_and_k_user_under_user_nodes(
    k_user: int, k_agent: int
) -> None:
    config = SynthesisConfig(k_user=k_user, k_agent=k_agent, iterations=12, careless=0.3)
    widths: dict[str, int] = {USER: 0, AGENT: 0}
    for blueprint in blueprints()[:4]:
        search = Search(blueprint, config)
        await search.run(config.iterations)
        assert search.root is not None
        for node in nodes(search.root):
            if node.terminal:
                assert not node.children
            elif node.children:
                assert all(child.role != node.role for child in node.children)
                widths[node.role] = max(widths[node.role], len(node.children))
    assert widths == {USER: k_user, AGENT: k_agent}


def test_uct_selects_as_the_formula_says() -> None:
    home = make_home(0, "studio")
    verifier = Verifier(home, [])
    report = verifier.step(home)

    def node(visits: int, value: float, parent: Node | None = None) -> Node:
        made = Node(
            AGENT,
            Trajectory(),
            home.snapshot(),
            verifier,
            report,
            parent,
            visits=visits,
            value=value,
        )
        if parent is not None:
            parent.children.append(made)
        return made

    root = node(10, 5.1)
    a, b = node(6, 4.2, root), node(3, 0.9, root)
    assert uct(0.5, 0, 10, 1.0) == math.inf
    assert uct(0.7, 6, 10, 1.0) == pytest.approx(0.7 + math.sqrt(math.log(10) / 6))

    def width(full: int) -> Any:
        return lambda n: full if n is root else 1

    # Full root: a scores 0.7 + c*sqrt(ln 10/6), b 0.3 + c*sqrt(ln 10/3).
    assert select(root, width(2), 1.0) is a  # 1.319 > 1.176
    assert select(root, width(2), 2.0) is b  # 1.939 < 2.052
    # A free slot scores as one visit at the root's mean: 0.51 + sqrt(ln 10) = 2.03 > 1.319.
    assert select(root, width(3), 1.0) is root
    assert select(root, width(3), 0.0) is a  # only the means: 0.7 > 0.51
    a.exhausted = True
    assert select(root, width(2), 1.0) is b


async def test_every_trajectory_replays_to_success_on_a_fresh_home() -> None:
    config = SynthesisConfig(iterations=6, careless=0.3, mistake_rate=0.3)
    count = 0
    for blueprint in blueprints()[:8]:
        out = await synthesize(blueprint, config)
        for trajectory in out.trajectories:
            assert trajectory.done
            assert trajectory.end_reason == "done"
            assert trajectory.messages[0]["role"] == "system"
            assert trajectory.steps[-1].satisfied
            if not blueprint.task.answers:  # else the reply satisfies the last condition
                assert all(trajectory.steps[-1].satisfied)
            assert await replay(blueprint, tool_sequence(trajectory), trajectory.last_reply)
            count += 1
    assert count >= 8


async def test_the_same_seed_gives_the_same_synthesis() -> None:
    blueprint = blueprints()[1]
    runs = [
        await synthesize(blueprint, SynthesisConfig(iterations=6, careless=0.3, seed=seed))
        for seed in (7, 7, 8)
    ]

    def shape(out: Any) -> Any:
        texts = [[m.get("content") for m in t.messages] for t in out.trajectories]
        return texts, [tool_sequence(t) for t in out.trajectories], out.policy_calls

    assert shape(runs[0]) == shape(runs[1])
    assert shape(runs[0]) != shape(runs[2])


async def test_linear_always_succeeds_with_a_careful_teacher() -> None:
    outs = [await synthesize(b, SynthesisConfig(method="linear", careless=0)) for b in blueprints()]
    assert all(out.success and len(out.trajectories) == 1 for out in outs)
    assert summarise(outs)["linear"].success_rate == 1.0


async def test_roleplay_counts_unfiltered_and_careless_failures() -> None:
    config = SynthesisConfig(method="roleplay", careless=0.3)
    outcomes = []
    for seed in range(40):
        blueprint = make_blueprint(seed)
        out = await roleplay(seed, config)
        if isinstance(blueprint, Rejected) and blueprint.filter == "scene":
            assert out.rollouts == 0
            assert not out.success
            continue
        assert out.rollouts <= 1
        assert len(out.trajectories) == out.rollouts
        if isinstance(blueprint, Rejected) and blueprint.filter == "executability":
            assert not out.success  # an uncheckable goal is a failure
        if isinstance(blueprint, Blueprint):
            played = out.trajectories[0]
            verdict = await replay(blueprint, tool_sequence(played), played.last_reply)
            assert out.success == verdict
        outcomes.append(out.success)
    assert 0 < sum(outcomes) < len(outcomes)
    summary = summarise([await roleplay(seed, config) for seed in range(6)])["roleplay"]
    assert summary.trajectories_per_call > 0


def test_careless_teacher_slips_only_when_asked() -> None:
    blueprint = lamp_blueprint()
    careful, teacher = CarelessTeacher(blueprint.task, 3), TeacherPolicy(blueprint.task, 3)
    messages: list[Message] = [{"role": "system", "content": f"- {LAMP}: Lamp\n- {PENDANT}: P"}]
    messages.append({"role": "user", "content": blueprint.task.turns[0]})
    assert careful.next_message(messages) == teacher.next_message(messages)
    slip = CarelessTeacher(blueprint.task, 3, careless=1.0)
    planned = teacher.next_message(messages)
    if planned.tool_calls:  # a first look at the home is kept; the question is not
        messages += [
            planned.to_openai(),
            {"role": "tool", "tool_call_id": "call_0", "content": "{}"},
        ]
    guessed = slip.next_message(messages).tool_calls
    assert guessed[0].name == "call_service"
    assert guessed[0].arguments["data"]["brightness_pct"] in (32, 48)
    with pytest.raises(ValueError, match="careless"):
        CarelessTeacher(blueprint.task, 0, careless=2)


def test_config_refuses_nonsense() -> None:
    for bad in ({"method": "beam"}, {"k_agent": 0}, {"careless": 1.5}, {"c_uct": -1}):
        with pytest.raises(ValueError, match=r"method|at least 1|careless"):
            SynthesisConfig(**bad)


def test_an_agent_nodes_candidates_take_different_strategies() -> None:
    """The scripted teacher's k_agent candidates of a node are seeded so that their next tool
    calls differ (look first or ask, which query, batched calls), up to the ways there are; a
    policy given by the caller is left to its seeds."""
    blueprint = lamp_blueprint()
    task = blueprint.task
    messages: list[Message] = [{"role": "user", "content": task.turns[0]}]
    players = Players(SynthesisConfig(careless=0.0))
    chosen: list[int] = []
    for seed in range(100, 103):
        found = players.distinct(task, seed, chosen, messages)
        assert found is not None
        chosen.append(found)
    planned = [TeacherPolicy(task, s).next_message(messages).tool_calls for s in chosen]
    shown = [[(c.name, c.arguments) for c in calls] for calls in planned]
    assert len({repr(calls) for calls in shown}) == len(shown)
    assert chosen[0] == 100  # the first candidate keeps its seed
    given = Players(SynthesisConfig(), policy=lambda task, seed: TeacherPolicy(task, seed))
    assert given.distinct(task, 7, [7, 7], messages) == 7


def test_actions_are_the_tool_calls_and_the_questions_not_the_wording() -> None:
    """Asking first and inferring are two strategies with the same tool calls; two wordings of
    one question are one."""

    def trajectory(*assistant: dict[str, Any]) -> Trajectory:
        return Trajectory(messages=[{"role": "user", "content": "Lamp on"}, *assistant])

    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c0",
                "type": "function",
                "function": {"name": "get_state", "arguments": '{"entity_id": "light.a"}'},
            }
        ],
    }
    asked = trajectory({"role": "assistant", "content": "Which lamp?"}, call)
    reworded = trajectory({"role": "assistant", "content": "Which one do you mean?"}, call)
    inferred = trajectory(call, {"role": "assistant", "content": "Done."})
    assert actions(asked) == [["ask"], ["get_state", {"entity_id": "light.a"}]]
    assert actions(reworded) == actions(asked) != actions(inferred)

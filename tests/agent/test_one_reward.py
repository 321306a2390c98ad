"""One reward: the same trajectory scored by HomeEnv-v0, RL's reward functions, MCTS-Flow's value
and the benchmark's success gives the same numbers (twin.reward)."""

from __future__ import annotations

from functools import cache
from typing import Any

from agent.bench.instances import play, solved
from agent.envs import DialogueEnv
from agent.flywheel.blueprints import Blueprint
from agent.flywheel.mcts import Search, SynthesisConfig
from agent.policies import AssistantMessage, Message, ToolCall
from agent.training import rl
from tests.agent.test_rl import LIGHT, blueprint
from twin.env import HomeEnv
from twin.reward import code_tokens


@cache
def other() -> str:
    """A light of the blueprint's home that is off at the start; no condition covers it."""
    home = blueprint().home()
    return next(
        e
        for e in sorted(home.entities)
        if e.startswith("light.") and e != LIGHT and home.states[e].state == "off"
    )


def service(service: str, entity_id: str, domain: str = "light") -> ToolCall:
    target = {"entity_id": entity_id}
    return ToolCall("c", "call_service", {"domain": domain, "service": service, "target": target})


def pyexec(code: str) -> ToolCall:
    return ToolCall("c", "pyexec", {"code": code})


@cache
def actions() -> tuple[AssistantMessage, ...]:
    """Collateral, a refused call, an unreadable call, restricted code, the collateral undone,
    and the task solved in pyexec; one tool call a message, as HomeEnv-v0 takes them."""
    return (
        AssistantMessage("", (service("turn_on", other()),)),
        AssistantMessage("", (service("rm", "shell_command.rm", "shell_command"),)),
        AssistantMessage("", (), ('{"name": "call_service", "arguments": {',)),
        AssistantMessage("", (pyexec("getattr(hass, 'states')"),)),
        AssistantMessage("", (service("turn_off", other()),)),
        AssistantMessage("", (pyexec(f'call_service("light", "turn_off", entity_id="{LIGHT}")'),)),
    )


STEP_REWARDS = [-1.0, -1.0, -1.0, -2.0, 0.0, 1.0]


class Scripted:
    """Says its actions in order, then replies."""

    def __init__(self, actions: tuple[AssistantMessage, ...]) -> None:
        self.actions = iter(actions)

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        return next(self.actions, AssistantMessage("Done."))


def outcomes(found: Blueprint, actions: tuple[AssistantMessage, ...]) -> list[dict[str, Any]]:
    """Each action's outcome stepped in HomeEnv-v1, as RL's rollout steps its group's actions."""
    env = DialogueEnv(found, tokens=code_tokens)
    env.reset(options={"user_seed": found.seed})
    return [env.step(action)[4]["outcome"] for action in actions]


def rl_rewards(variant: str, outcome: dict[str, Any]) -> float:
    kwargs = {"outcome": [outcome], "code_limit": [1000], "turn_limit": [3]}
    return sum(f([None], **kwargs)[0] for f in rl.REWARDS[variant])


async def test_homeenv_rl_mcts_and_the_benchmark_agree_on_one_trajectory() -> None:
    found: Blueprint = blueprint()
    trajectory = await play(found, Scripted(actions()))
    rows = outcomes(found, actions())  # RL steps its actions in HomeEnv-v1
    assert [rl_rewards("step", row) for row in rows] == STEP_REWARDS

    # HomeEnv-v0 answers whatever it is given, so it has no unreadable call: it takes the rest.
    env = HomeEnv(found.home(), found.task.conditions(found.home()))
    env.reset()
    readable = [(i, a.tool_calls[0]) for i, a in enumerate(actions()) if a.tool_calls]
    for index, call in readable:
        _, reward, terminated, _, info = env.step({"name": call.name, "arguments": call.arguments})
        assert reward == STEP_REWARDS[index]
    assert terminated
    assert info["all_satisfied"]
    assert not info["collateral"]

    search = Search(found, SynthesisConfig(method="linear"), lambda *_: Scripted(actions()))
    synthesis = await search.run(1)
    assert search.root is not None
    # ST: the unreadable call and the restricted code cost; solving the task earns 1.
    assert [rl_rewards("st", row) for row in rows] == [0.0, 0.0, -1.0, -1.0, 0.0, 1.0]
    assert solved(trajectory)
    assert synthesis.success
    assert search.root.value == 1.0 == rl_rewards("st", rows[-1])


async def test_an_episode_that_leaves_collateral_is_not_solved_anywhere() -> None:
    careless = (actions()[0], actions()[-1])  # the task done, the other light left on
    trajectory = await play(blueprint(), Scripted(careless))
    assert rl_rewards("st", outcomes(blueprint(), careless)[-1]) == 0.0
    env = HomeEnv(blueprint().home(), blueprint().task.conditions(blueprint().home()))
    env.reset()
    for action in careless:
        call = action.tool_calls[0]
        *_, terminated, _, info = env.step({"name": call.name, "arguments": call.arguments})
    assert terminated
    assert info["all_satisfied"]
    assert info["collateral"] == [other()]
    search = Search(blueprint(), SynthesisConfig(method="linear"), lambda *_: Scripted(careless))
    synthesis = await search.run(1)
    assert search.root is not None
    assert not solved(trajectory)
    assert not synthesis.success
    assert search.root.value == 0.0  # half of (one condition met - one entity changed) / 1

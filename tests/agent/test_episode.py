"""The episode runner with a scripted stand-in policy on a generated twin home."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.backends.twin import TwinBackend
from agent.episode import EpisodeLimits, Trajectory, run_episode
from agent.policies import AssistantMessage, ContextFull
from agent.policies import ToolCall as Call
from twin.homemaker import make_home


def Said(
    content: str = "", tool_calls: Sequence[Call] = (), parse_error: str | None = None
) -> AssistantMessage:
    """A scripted message that cost 10 prompt and 3 completion tokens."""
    errors = () if parse_error is None else (parse_error,)
    return AssistantMessage(content, tuple(tool_calls), errors, 10, 3)


@dataclass
class Scripted:
    """Answers with the next scripted message and keeps what it was shown."""

    script: list[AssistantMessage]
    seen: list[list[dict[str, Any]]] = field(default_factory=list)

    async def act(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        self.seen.append(list(messages))
        return self.script.pop(0)


def light_home() -> tuple[TwinBackend, str]:
    home = make_home(1, "studio")
    light = next(e for e in sorted(home.entities) if e.startswith("light."))
    home.call_service("light", "turn_off", target={"entity_id": light})
    return TwinBackend(home), light


def turn_on(light: str, call_id: str = "c2") -> AssistantMessage:
    target = {"entity_id": light}
    args = {"domain": "light", "service": "turn_on", "target": target}
    return Said(tool_calls=[Call(call_id, "call_service", args)])


async def test_a_light_is_turned_on_and_the_task_is_done(tmp_path: Path) -> None:
    backend, light = light_home()
    policy = Scripted(
        [
            Said(tool_calls=[Call("c1", "list_entities", {"domain": "light"})]),
            turn_on(light),
            Said("The light is on."),
        ]
    )
    trajectory = await run_episode(
        policy,
        backend,
        ["Turn on the light", "never heard"],
        conditions=[f'state("{light}") == "on"'],
    )
    assert backend.home.states[light].state == "on"
    assert trajectory.done
    assert trajectory.end_reason == "done"
    assert trajectory.reward == 1.0
    assert [step.done for step in trajectory.steps] == [False, True]
    assert [step.reward for step in trajectory.steps] == [0.0, 1.0]
    assert trajectory.steps[1].satisfied == [True]
    assert trajectory.turns == 1
    assert trajectory.tool_calls == 2
    assert trajectory.policy_calls == 3
    assert trajectory.prompt_tokens == 30
    assert trajectory.completion_tokens == 9
    assert [m["role"] for m in trajectory.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    listed = json.loads(trajectory.messages[3]["content"])
    assert light in [entity["entity_id"] for entity in listed["entities"]]
    assert trajectory.messages[3]["tool_call_id"] == "c1"
    assert trajectory.messages[-1]["content"] == "The light is on."
    assert policy.seen[0][0]["role"] == "system"
    assert light in policy.seen[0][0]["content"]
    path = tmp_path / "episode.json"
    trajectory.save(path)
    assert Trajectory.load(path) == trajectory
    assert Trajectory.from_json(trajectory.to_json()) == trajectory
    assert list(tmp_path.iterdir()) == [path]


async def test_user_turns_may_come_from_an_async_iterator() -> None:
    backend, _ = light_home()

    async def user() -> AsyncIterator[str]:
        yield "Hi"
        yield "Thanks"

    trajectory = await run_episode(Scripted([Said("Hello."), Said("Welcome.")]), backend, user())
    assert trajectory.end_reason == "user_done"
    assert trajectory.turns == 2
    assert trajectory.steps == []
    assert [m["content"] for m in trajectory.messages[1:]] == ["Hi", "Hello.", "Thanks", "Welcome."]


async def test_the_turn_limit_ends_the_episode() -> None:
    backend, _ = light_home()
    policy = Scripted([Said("One."), Said("Two.")])
    trajectory = await run_episode(
        policy, backend, ["a", "b", "c"], limits=EpisodeLimits(max_turns=2)
    )
    assert trajectory.end_reason == "max_turns"
    assert trajectory.turns == 2
    assert [m["content"] for m in trajectory.messages if m["role"] == "user"] == ["a", "b"]


async def test_the_tool_call_limit_ends_the_episode() -> None:
    backend, light = light_home()
    listing = Call("c1", "list_entities", {})
    policy = Scripted(
        [
            Said(tool_calls=[listing]),
            Said(tool_calls=[listing, Call("c3", "get_state", {"entity_id": light})]),
        ]
    )
    trajectory = await run_episode(
        policy, backend, ["Look around", "again"], limits=EpisodeLimits(max_tool_calls=2)
    )
    assert trajectory.end_reason == "max_tool_calls"
    assert trajectory.tool_calls == 2
    assert len(trajectory.steps) == 2
    refused = json.loads(trajectory.messages[-1]["content"])
    assert refused["error"]["code"] == "tool_call_limit"
    assert trajectory.messages[-1]["tool_call_id"] == "c3"
    assert trajectory.turns == 1


async def test_a_conversation_the_policy_cannot_read_ends_the_episode() -> None:
    backend, light = light_home()

    class Full(Scripted):
        async def act(
            self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
        ) -> AssistantMessage:
            if not self.script:
                raise ContextFull("The conversation has 9000 tokens and the model reads 8192")
            return await super().act(messages, tools)

    trajectory = await run_episode(Full([turn_on(light)]), backend, ["Light, please", "more"])
    assert trajectory.end_reason == "context_full"
    assert (trajectory.turns, trajectory.tool_calls) == (1, 1)
    assert trajectory.messages[-1]["role"] == "tool"  # what was done stays recorded


async def test_a_malformed_call_gets_an_error_observation_and_a_retry() -> None:
    backend, light = light_home()
    policy = Scripted(
        [
            Said('<tool_call>{"name": "call_service"', parse_error="unterminated JSON"),
            turn_on(light),
            Said("Done."),
        ]
    )
    trajectory = await run_episode(policy, backend, ["Light on please"])
    assert trajectory.malformed == 1
    assert trajectory.end_reason == "user_done"
    assert backend.home.states[light].state == "on"
    observation = policy.seen[1][-1]
    assert observation["role"] == "user"
    assert json.loads(observation["content"])["error"] == {
        "code": "malformed_tool_call",
        "message": "unterminated JSON",
    }
    assert policy.seen[1][-2] == {
        "role": "assistant",
        "content": '<tool_call>{"name": "call_service"',
    }


async def test_malformed_calls_are_retried_a_bounded_number_of_times() -> None:
    backend, _ = light_home()
    policy = Scripted([Said("x", parse_error="bad") for _ in range(3)])
    trajectory = await run_episode(policy, backend, ["Hi"], limits=EpisodeLimits(max_retries=2))
    assert trajectory.end_reason == "max_retries"
    assert trajectory.malformed == 3
    assert policy.script == []


async def test_a_failed_tool_call_is_recorded_as_a_failure() -> None:
    backend, _ = light_home()
    missing = Call("c1", "get_state", {"entity_id": "light.nowhere"})
    policy = Scripted([Said(tool_calls=[missing]), Said("No such light.")])
    trajectory = await run_episode(policy, backend, ["Is the nowhere light on?"])
    assert trajectory.steps[0].success is False
    assert trajectory.steps[0].satisfied == []

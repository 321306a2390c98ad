"""The episode runner: user turns in, a policy acting through a backend's tools, a trajectory out.

Each user utterance starts an agent turn; the policy is asked again after every batch of tool calls
until it replies without calling a tool. On the twin backend, a task's conditions are checked by a
twin.verifier.Verifier after every tool call, and after a reply when some read it (a status
question's answer); once they all hold, the episode ends with the agent's next reply. Malformed
tool calls (the policy's `parse_errors`) are answered with an error observation each, after the
well-formed calls of the same message have run, and the policy tries again, a bounded number of
times per turn. An episode also ends once the conversation has outgrown what the policy can read
(ContextFull: end_reason "context_full").

Messages are in the OpenAI format (AssistantMessage.to_openai); results are `{"role": "tool",
"tool_call_id", "name", "content": JSON text}`; the error observation for a malformed call is a
user message holding the error's JSON, as it has no call id to answer.

The rules live in `Dialogue`, which applies one message at a time and does no I/O; EpisodeRun adds
the policy and the backend (async), agent.envs.DialogueEnv the twin (sync, HomeEnv-v1). Each user
message the dialogue hears goes to the backend's `confirmation` too, so that a yes to the auditor's
`confirmation_required` lets the agent's next call of that action through (twin.confirmation).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twin.atomic import write_text
from twin.confirmation import Confirmation
from twin.surface import Result, error
from twin.verifier import Report, Verifier

from .backends import Backend
from .backends.twin import TwinBackend
from .policies import AssistantMessage, ContextFull, Message, Policy, ToolCall
from .prompt import DEFAULT_MAX_CHARS, system_prompt

if TYPE_CHECKING:
    from twin.home import Home

    from .flywheel.user import UserSimulator

# The home the verifier reads, as it is now (a mirror of Home Assistant, synced afresh).
View = Callable[[], Awaitable["Home"]]


@dataclass(frozen=True, slots=True)
class EpisodeLimits:
    """Bounds on an episode: user turns, tool calls in all, malformed-call retries per turn."""

    max_turns: int = 10
    max_tool_calls: int = 30
    max_retries: int = 2


@dataclass(slots=True)
class Step:
    """One tool call: what was called, whether it worked, and the verifier's view after it."""

    turn: int
    name: str
    arguments: dict[str, Any]
    success: bool
    latency_s: float
    reward: float = 0.0
    done: bool = False
    satisfied: list[bool] = field(default_factory=list)
    collateral: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Trajectory:
    """A whole episode, JSON round-trippable: the conversation, every tool call, the task's
    outcome, and what it cost (tokens, calls, time). `reward` is the verifier's progress summed
    over the steps (twin.verifier's Report.reward), a record; what training and the search are
    rewarded with is twin.reward's."""

    messages: list[Message] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    done: bool = False
    reward: float = 0.0
    end_reason: str = "user_done"
    turns: int = 0
    tool_calls: int = 0
    malformed: int = 0
    policy_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    policy_latency_s: float = 0.0
    tool_latency_s: float = 0.0
    wall_s: float = 0.0

    @property
    def last_reply(self) -> str | None:
        """The agent's last words: its latest message without tool calls (None before one)."""
        return next(
            (
                str(message.get("content") or "")
                for message in reversed(self.messages)
                if message.get("role") == "assistant" and not message.get("tool_calls")
            ),
            None,
        )

    def to_json(self) -> str:
        """The trajectory as JSON text."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Trajectory:
        """A trajectory from `to_json`'s text."""
        data = json.loads(text)
        data["steps"] = [Step(**step) for step in data["steps"]]
        return cls(**data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON atomically: readers see the old file or the whole new one."""
        write_text(Path(path), self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trajectory:
        """A trajectory saved with `save`."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


async def run_episode(
    policy: Policy,
    backend: Backend,
    user_turns: Iterable[str] | AsyncIterable[str] | UserSimulator,
    *,
    conditions: Sequence[str] = (),
    limits: EpisodeLimits = EpisodeLimits(),
    memory: Sequence[str] = (),
    scene: str | None = None,
    max_prompt_chars: int = DEFAULT_MAX_CHARS,
    on_message: Callable[[Message], None] | None = None,
    view: View | None = None,
) -> Trajectory:
    """Play the user's turns against `policy` on `backend` and record everything.

    A UserSimulator is asked for each turn with the conversation so far and the verifier's
    latest status; once the task is done, its next utterance (such as "that's all, thanks") is
    recorded as its last and the episode ends. Fixed turns stop as soon as the task is done.
    Conditions need the twin backend, whose home the verifier reads, or a `view` of the home
    the backend acts on (a mirror of Home Assistant's), read after every tool call. `on_message`
    sees each message of the agent's turns as it is added (replies, tool results, corrections),
    for a live view such as `homeflow chat`.
    """
    started = time.perf_counter()
    verifier, start = None, None
    if conditions and view is not None:
        start = await view()
        verifier = Verifier(start, conditions)
    elif conditions:
        if not isinstance(backend, TwinBackend):
            raise TypeError(
                "Task conditions are checked on a twin home; use a TwinBackend or a view"
            )
        verifier = Verifier(backend.home, conditions)
    prompt = await system_prompt(backend, memory=memory, scene=scene, max_chars=max_prompt_chars)
    run = EpisodeRun(policy, backend, verifier, limits, on_message, view)
    if verifier is not None and start is not None:  # a twin backend's run made its own report
        run.report = verifier.step(start)
    run.trajectory.conditions = list(conditions)
    run.trajectory.messages.append({"role": "system", "content": prompt})
    if isinstance(user_turns, Iterable | AsyncIterable):
        turns, simulated = _aiter(user_turns), False
    else:
        turns, simulated = _simulated(user_turns, run), True
    async for utterance in turns:
        if not run.hear(utterance):
            break
        if not await run.agent_turn() or (run.trajectory.done and not simulated):
            break
    run.trajectory.wall_s = time.perf_counter() - started
    return run.trajectory


class Dialogue:
    """An episode's record and its rules, one message at a time, with no I/O of its own:
    EpisodeRun feeds it a policy's messages and a backend's results, agent.envs.DialogueEnv an
    agent's actions and the twin's results, so both keep the same trajectory. The user's
    messages also go to `confirmation`, the backend's."""

    def __init__(
        self,
        verifier: Verifier | None,
        limits: EpisodeLimits,
        on_message: Callable[[Message], None] | None = None,
        confirmation: Confirmation | None = None,
    ) -> None:
        self.verifier = verifier
        self.limits = limits
        self.on_message = on_message
        self.confirmation = confirmation if confirmation is not None else Confirmation()
        self.trajectory = Trajectory()
        # The verifier's latest view, for a simulated user (None until a home is read).
        self.report: Report | None = None
        self.retries = 0  # malformed messages answered in this agent turn
        self._admitted = 0

    def add(self, message: Message) -> None:
        """Append one message of the agent's turn (shown to `on_message`)."""
        self.trajectory.messages.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def hear(self, utterance: str) -> bool:
        """Record the user's utterance; False when the episode ends with it instead: after the
        task is done (its closing line, recorded) or at the turn limit (not recorded)."""
        trajectory = self.trajectory
        if trajectory.done:
            trajectory.messages.append({"role": "user", "content": utterance})
            return False
        if trajectory.turns >= self.limits.max_turns:
            trajectory.end_reason = "max_turns"
            return False
        trajectory.turns += 1
        trajectory.messages.append({"role": "user", "content": utterance})
        self.confirmation.hear(utterance)
        self.retries = 0
        return True

    def admit(self, reply: AssistantMessage) -> tuple[ToolCall, ...]:
        """Record the agent's message; the calls in it that the tool-call limit lets run."""
        self.add(reply.to_openai())
        room = max(0, self.limits.max_tool_calls - self.trajectory.tool_calls)
        self._admitted = min(room, len(reply.tool_calls))
        return reply.tool_calls[: self._admitted]

    def record(self, call: ToolCall, result: Result, latency: float, home: Home | None) -> None:
        """Record an admitted call's result, and the verifier's view of `home` after it."""
        trajectory = self.trajectory
        trajectory.tool_calls += 1
        trajectory.tool_latency_s += latency
        step = Step(
            trajectory.turns,
            call.name,
            dict(call.arguments),
            result.get("success", True) is not False,
            latency,
        )
        self.judge(step, home)
        self.add(_tool_message(call.id, call.name, result))

    def judge(self, step: Step, home: Home | None, reply: str | None = None) -> None:
        """Append `step` with the verifier's view of `home` after it (none without either), and
        of `reply`, the agent's words with it if any."""
        trajectory = self.trajectory
        if self.verifier is not None and home is not None:
            self.report = self.verifier.step(home, reply)
            _record(step, self.report)
            trajectory.reward += step.reward
            trajectory.done = step.done
        trajectory.steps.append(step)

    def hears_reply(self, reply: AssistantMessage) -> bool:
        """Whether `reply` is words the task's reply checks (says()) read: a message without
        tool calls, for a verifier that has some."""
        verifier = self.verifier
        words = not reply.tool_calls and not reply.parse_errors
        return verifier is not None and verifier.reads_reply and words

    def judge_reply(self, reply: AssistantMessage, home: Home | None) -> Report | None:
        """The verifier's view of `home` once the agent has said `reply` (see hears_reply)."""
        if self.verifier is None or home is None:
            return None
        self.report = self.verifier.step(home, reply.content)
        self.trajectory.reward += self.report.reward
        self.trajectory.done = self.report.done
        return self.report

    def settle(self, reply: AssistantMessage) -> bool | None:
        """Answer what the admitted calls left over (refused calls, malformed ones) and say what
        comes next: None, the agent acts again; True, its turn is over; False, a limit ended
        the episode."""
        trajectory = self.trajectory
        for call in reply.tool_calls[self._admitted :]:
            refused = error(
                "tool_call_limit", f"The episode allows {self.limits.max_tool_calls} tool calls"
            )
            self.add(_tool_message(call.id, call.name, refused))
            trajectory.end_reason = "max_tool_calls"
        for problem in reply.parse_errors:
            trajectory.malformed += 1
            # No call id to answer: the correction comes as a user message, which every
            # chat-completions server accepts after an assistant message.
            observation = error("malformed_tool_call", problem)
            self.add({"role": "user", "content": json.dumps(observation)})
        if trajectory.end_reason == "max_tool_calls":
            return False
        if reply.parse_errors:
            if self.retries >= self.limits.max_retries:
                trajectory.end_reason = "max_retries"
                return False
            self.retries += 1
            return None
        if reply.tool_calls:
            return None
        if trajectory.done:
            trajectory.end_reason = "done"
        return True


class EpisodeRun(Dialogue):
    """One episode's state while it runs, one agent turn at a time: run_episode drives it, and
    MCTS-Flow continues a stored prefix (its trajectory and latest report) with it."""

    def __init__(
        self,
        policy: Policy,
        backend: Backend,
        verifier: Verifier | None,
        limits: EpisodeLimits,
        on_message: Callable[[Message], None] | None = None,
        view: View | None = None,
    ) -> None:
        super().__init__(verifier, limits, on_message, backend.confirmation)
        self.policy = policy
        self.backend = backend
        self.view = view
        if isinstance(backend, TwinBackend) and verifier is not None:
            self.report = verifier.step(backend.home)  # nothing has changed yet

    async def agent_turn(self) -> bool:
        """Let the agent act until it replies; False when a limit ended the episode."""
        while True:
            try:
                reply = await self._act()
            except ContextFull:
                self.trajectory.end_reason = "context_full"
                return False
            for call in self.admit(reply):
                started = time.perf_counter()
                result = await self.backend.run_tool(call.name, call.arguments)
                self.record(call, result, time.perf_counter() - started, await self._home())
            if self.hears_reply(reply):
                self.judge_reply(reply, await self._home())
            outcome = self.settle(reply)
            if outcome is not None:
                return outcome

    async def _act(self) -> AssistantMessage:
        started = time.perf_counter()
        reply = await self.policy.act(
            list(self.trajectory.messages), list(self.backend.tool_schemas)
        )
        trajectory = self.trajectory
        trajectory.policy_latency_s += time.perf_counter() - started
        trajectory.policy_calls += 1
        trajectory.prompt_tokens += reply.prompt_tokens
        trajectory.completion_tokens += reply.completion_tokens
        return reply

    async def _home(self) -> Home | None:
        """The home the verifier reads: the view's, else the twin backend's."""
        if self.view is not None:
            return await self.view()
        return self.backend.home if isinstance(self.backend, TwinBackend) else None


def _record(step: Step, report: Report) -> None:
    step.reward = report.reward
    step.done = report.done
    step.satisfied = [status.satisfied for status in report.conditions]
    step.collateral = list(report.collateral)


def _tool_message(call_id: str, name: str, result: Mapping[str, Any]) -> Message:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": json.dumps(result)}


async def _simulated(user: UserSimulator, run: EpisodeRun) -> AsyncIterable[str]:
    """The simulated user's turns, each from the conversation and the verifier's latest view."""
    while True:
        status = run.report.conditions if run.report is not None else None
        utterance = await user.next_turn(list(run.trajectory.messages), status)
        if utterance is None:
            return
        yield utterance


async def _aiter(turns: Iterable[str] | AsyncIterable[str]) -> AsyncIterable[str]:
    if isinstance(turns, AsyncIterable):
        async for turn in turns:
            yield turn
    else:
        for turn in turns:
            yield turn

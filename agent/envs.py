"""HomeEnv-v1: a gymnasium env in which one episode is a whole dialogue with a simulated user.

`import agent.envs` (or `gymnasium.register_envs(agent.envs)`, which keeps the import) registers
homeflow/HomeEnv-v1 and, through twin.env, homeflow/HomeEnv-v0.

The env holds a flywheel blueprint (its home, task, memory and scenes), the simulated user
(ScriptedUser by default, as RL's) and the verifier of the task's conditions. `reset` observes the
system prompt and the user's first utterance. Each `step` is one agent message: an AssistantMessage,
the OpenAI assistant-message dict, or the model's raw text (tool calls as `<tool_call>` blocks or
bare JSON, as parse_tool_calls reads them) or JSON text of the message dict. The observation is the
messages that follow it (tool results, corrections of malformed calls, the user's next utterance)
as JSON text. A message without tool calls hands the turn to the user, who may end the dialogue.

Messages are applied by agent.episode.Dialogue, the episode runner's own rules, so an episode here
keeps the trajectory run_episode would (`trajectory`). Terminated when the user ends the dialogue
or the task is done; truncated at the limits (turns, tool calls, retries of malformed calls).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, SupportsFloat, TypeVar, cast

import gymnasium as gym
from gymnasium.error import ResetNeeded

import twin.env  # registers HomeEnv-v0
from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.confirmation import Confirmation
from twin.home import Home, Snapshot
from twin.reward import (
    CODE_LIMIT,
    TURN_LIMIT,
    VARIANTS,
    OutcomeRecorder,
    code_tokens,
    reward_terms,
)
from twin.surface import Result, error
from twin.verifier import Report, Verifier

from .backends.twin import TwinBackend
from .episode import Dialogue, EpisodeLimits, Trajectory
from .errors import AgentError
from .flywheel.blueprints import Blueprint
from .flywheel.user import ScriptedUser, UserSimulator
from .policies import AssistantMessage, Message
from .policies.openai import read_message
from .policies.toolcalls import parse_tool_calls
from .prompt import DEFAULT_MAX_CHARS, system_prompt

ENV_ID = "homeflow/HomeEnv-v1"
# Ends that cut the dialogue short: truncations, not the dialogue's own end.
TRUNCATIONS = frozenset({"max_turns", "max_tool_calls", "max_retries"})

UserFactory = Callable[[Home], UserSimulator]
T = TypeVar("T")


class EnvError(AgentError, RuntimeError):
    """The env cannot run what it was given as it was given."""


@dataclass(frozen=True)
class EnvState:
    """Everything an episode has reached, for `restore`: the home and the dialogue."""

    home: Snapshot
    trajectory: Trajectory
    report: Report | None
    retries: int
    verifier: Verifier
    over: bool
    confirmation: Confirmation


class DialogueEnv(gym.Env[str, Any]):
    """A blueprint's whole dialogue on the twin (see the module's docstring).

    `blueprint` is a Blueprint or its JSON text; `user(home)` makes the episode's user (the
    scripted user of the blueprint's task by default, worded by a seed from the env's
    generator, or `options={"user_seed": ...}` on reset). The reward is twin.reward's step
    reward for `variant` and its limits, pyexec code counted in `tokens` (words and symbols
    unless a tokenizer counts them). The user's coroutines run on `loop` when given (a loop
    running in another thread, while this env steps in a worker thread, as RL's rollout does),
    else at once, as the twin's and the scripted user's never wait. For async vector envs pass
    `vector_kwargs={"shared_memory": False}`, as for HomeEnv-v0. The agent's calls are judged by
    the auditor's `policy`: with twin.auditor.CONFIRMING_POLICY a sensitive action waits for the
    user's yes (twin.confirmation), which the simulated user gives only to what it wants done.
    """

    def __init__(
        self,
        blueprint: Blueprint | str,
        limits: EpisodeLimits | None = None,
        *,
        user: UserFactory | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        max_prompt_chars: int = DEFAULT_MAX_CHARS,
        variant: str = "step",
        code_limit: int = CODE_LIMIT,
        turn_limit: int = TURN_LIMIT,
        tokens: Callable[[str], int] = code_tokens,
        policy: ActionPolicy = DEFAULT_POLICY,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant is one of {VARIANTS}, got {variant!r}")
        self.blueprint = (
            blueprint if isinstance(blueprint, Blueprint) else Blueprint.from_json(blueprint)
        )
        self.limits = limits or EpisodeLimits()
        self.max_prompt_chars = max_prompt_chars
        self.variant = variant
        self.code_limit = code_limit
        self.turn_limit = turn_limit
        self.tokens = tokens
        self.policy = policy
        self.observation_space = copy.deepcopy(twin.env.OBSERVATION_SPACE)
        self.action_space = copy.deepcopy(twin.env.ACTION_SPACE)
        self._make_user = user
        self._loop = loop
        self._dialogue: Dialogue | None = None
        self._over = False

    @property
    def trajectory(self) -> Trajectory:
        """The episode so far, as the episode runner records it."""
        return self._started().trajectory

    @property
    def home(self) -> Home:
        """The home as the episode has left it."""
        self._started()
        return self._backend.home

    @property
    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tools the agent is offered, in the OpenAI tools format."""
        self._started()
        return self._backend.tool_schemas

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the dialogue afresh: the blueprint's home, the system prompt, the first turn."""
        super().reset(seed=seed)
        options = options or {}
        user_seed = options.get("user_seed", int(self.np_random.integers(2**31)))
        home, blueprint = self.blueprint.home(), self.blueprint
        self._backend = backend = TwinBackend(home, self.policy)
        conditions = blueprint.task.conditions(home)
        verifier = Verifier(home, conditions)
        self._dialogue = dialogue = Dialogue(
            verifier, self.limits, confirmation=backend.confirmation
        )
        dialogue.report = verifier.step(home)
        self._user = self._run(self._user_for(home, int(user_seed)))
        prompt = self._run(
            system_prompt(
                self._backend,
                memory=blueprint.memory,
                scene=" ".join(blueprint.scenes) or None,
                max_chars=self.max_prompt_chars,
            )
        )
        dialogue.trajectory.conditions = list(conditions)
        dialogue.trajectory.messages.append({"role": "system", "content": prompt})
        self._over = False
        self._user_turn()
        return _observe(dialogue.trajectory.messages), self._info()

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Apply one agent message; the user answers once it calls no tool."""
        dialogue = self._started()
        trajectory = dialogue.trajectory
        if self._over:
            over = error("episode_over", "The dialogue has ended; call reset to start another")
            return _observe([over]), 0.0, True, False, self._info()
        reply = _read(action, f"call_{len(trajectory.messages)}")
        seen = len(trajectory.messages) + 1  # the agent's own message is not observed
        assert dialogue.report is not None  # made on reset
        recorder = OutcomeRecorder(
            dialogue.report, turn=trajectory.turns, policy=self.policy, tokens=self.tokens
        )
        for call in dialogue.admit(reply):
            started = time.perf_counter()
            result = self._run(self._backend.run_tool(call.name, call.arguments))
            dialogue.record(call, result, time.perf_counter() - started, self._backend.home)
            recorder.call(call.name, call.arguments, result, dialogue.report)
        recorder.malformed(len(reply.parse_errors))
        if dialogue.hears_reply(reply) and (
            said := dialogue.judge_reply(reply, self._backend.home)
        ):
            recorder.replied(said)
        settled = dialogue.settle(reply)
        if settled is False:
            self._over = True
        elif settled:
            self._user_turn()
        outcome = recorder.outcome()
        terms = reward_terms(
            outcome, self.variant, code_limit=self.code_limit, turn_limit=self.turn_limit
        )
        truncated = self._over and trajectory.end_reason in TRUNCATIONS
        info = self._info() | {"outcome": dataclasses.asdict(outcome), "reward_terms": terms}
        observation = _observe(trajectory.messages[seen:])
        return observation, sum(terms.values()), self._over and not truncated, truncated, info

    def snapshot(self) -> EnvState:
        """The episode as it is now, to come back to with `restore`."""
        dialogue = self._started()
        trajectory = dialogue.trajectory
        assert dialogue.verifier is not None  # made on reset
        return EnvState(
            self._backend.home.snapshot(),
            dataclasses.replace(
                trajectory, messages=list(trajectory.messages), steps=list(trajectory.steps)
            ),
            dialogue.report,
            dialogue.retries,
            copy.copy(dialogue.verifier),
            self._over,
            copy.copy(dialogue.confirmation),
        )

    def restore(self, state: EnvState) -> None:
        """Go back to a `snapshot` of this env's episode, to act again from there."""
        dialogue = self._started()
        self._backend.home.restore(state.home)
        trajectory = state.trajectory
        dialogue.trajectory = dataclasses.replace(
            trajectory, messages=list(trajectory.messages), steps=list(trajectory.steps)
        )
        dialogue.report, dialogue.retries = state.report, state.retries
        dialogue.verifier = copy.copy(state.verifier)
        self._over = state.over
        # The backend's auditor and the dialogue share the one confirmation: set it in place.
        dialogue.confirmation.pending = state.confirmation.pending
        dialogue.confirmation.confirmed = state.confirmation.confirmed

    def _started(self) -> Dialogue:
        if self._dialogue is None:
            raise ResetNeeded("The dialogue starts on reset; call reset first")
        return self._dialogue

    async def _user_for(self, home: Home, seed: int) -> UserSimulator:
        """The episode's user, made on the loop its coroutines run on (an LLM user's session)."""
        if self._make_user is None:
            return ScriptedUser(self.blueprint.task, seed, home=home)
        return self._make_user(home)

    def _user_turn(self) -> None:
        """The user's next utterance, or the end of the dialogue."""
        dialogue = self._started()
        status = dialogue.report.conditions if dialogue.report is not None else None
        utterance = self._run(self._user.next_turn(list(dialogue.trajectory.messages), status))
        self._over = utterance is None or not dialogue.hear(utterance)

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run one of the user's or the twin's coroutines to its end: on `loop` when given,
        else at once (the twin's and the scripted user's never wait), so that the env steps
        inside a running event loop too (a notebook's, an async test's)."""
        if self._loop is not None:
            return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()
        try:
            coroutine.send(None)
        except StopIteration as finished:
            return cast(T, finished.value)
        coroutine.close()
        raise EnvError(
            "The user waits on I/O (an LLM user); pass `loop`, an event loop running in "
            "another thread, and step the env from a thread of its own"
        )

    def _info(self) -> dict[str, Any]:
        trajectory = self._started().trajectory
        last = trajectory.steps[-1] if trajectory.steps else None
        return {
            "turns": trajectory.turns,
            "tool_calls": trajectory.tool_calls,
            "done": trajectory.done,
            "satisfied": list(last.satisfied) if last is not None else [],
            "collateral": list(last.collateral) if last is not None else [],
            "end_reason": trajectory.end_reason if self._over else None,
        }


def _read(action: Any, ids: str) -> AssistantMessage:
    """An agent message from an action; one that is none becomes a malformed message, answered
    with the runner's correction. Calls read out of text get ids from `ids`, so that the same
    actions give the same observations."""
    if isinstance(action, AssistantMessage):
        return action
    if isinstance(action, str):
        decoded = _decode(action)
        if not (isinstance(decoded, dict) and "role" in decoded):
            parsed = parse_tool_calls(action)
            calls = tuple(
                dataclasses.replace(call, id=f"{ids}_{number}")
                for number, call in enumerate(parsed.tool_calls)
            )
            return AssistantMessage(parsed.content, calls, parsed.errors, text=action)
        action = decoded
    if not isinstance(action, Mapping):
        return _malformed(f"an action is a message dict or text, got {type(action).__name__}")
    if "role" not in action and "name" in action:  # a bare call, as HomeEnv-v0 takes it
        action = {"content": None, "tool_calls": [{"id": f"{ids}_0", "function": action}]}
    content, calls = action.get("content"), action.get("tool_calls")
    if not isinstance(content, str | None) or not isinstance(calls, list | None):
        return _malformed('a message has text "content" and a list of "tool_calls"')
    if not all(
        isinstance(call, Mapping) and isinstance(call.get("function"), Mapping | None)
        for call in calls or ()
    ):
        return _malformed('each of "tool_calls" is {"id", "function": {"name", "arguments"}}')
    return read_message(action)


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _malformed(problem: str) -> AssistantMessage:
    return AssistantMessage("", (), (f"{problem}; reply with text or tool calls",))


def _observe(messages: Sequence[Message | Result]) -> str:
    """Messages as JSON text that fits the observation space."""
    text = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"))
    if twin.env.OUTSIDE_CHARSET.search(text):
        text = json.dumps(list(messages), separators=(",", ":"))
    if len(text) > twin.env.MAX_OBSERVATION:
        text = json.dumps(
            [
                {
                    "truncated": True,
                    "message": (
                        f"The messages have {len(text)} characters, over the "
                        f"{twin.env.MAX_OBSERVATION} an observation holds; read `trajectory` "
                        "for them whole"
                    ),
                }
            ]
        )
    return text


# Importing this module registers HomeEnv-v1 (and, through twin.env, HomeEnv-v0).
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="agent.envs:DialogueEnv")

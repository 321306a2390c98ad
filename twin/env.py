"""HomeEnv-v0: a gymnasium env in which an agent acts on a twin home through the five tools.

An episode is one goal on one home. `reset` restores the home's start (or asks a factory for a fresh
home) and observes the user's instruction. Each `step` is one agent action:

- a tool call, `{"name": "call_service", "arguments": {...}}` or its JSON text (the OpenAI form
  `{"function": {"name": ..., "arguments": "<json>"}}` too); the observation is the tool's result
  (twin.tools) as compact JSON text;
- a reply, `{"name": "reply", "arguments": {"text": ...}}` or any text that is not a JSON object
  (a JSON string is its own text); a reply ends the agent's turn and, as this env has no user to
  answer it, the episode. For a whole dialogue, with a simulated user inside, use
  homeflow/HomeEnv-v1 (agent.envs).

The reward is twin.reward's step reward for the action: conditions newly met minus those broken
and entities newly changed that no condition covers, each 1/N, the auditor's penalty for a refused
or failed action (twin.auditor.PENALTIES) and CodeCheck and CodeLength for pyexec code, so bad
actions cost without raising. The episode terminates when every condition holds (for a goal with
conditions) or on a reply, and is truncated after `max_turns` actions. `info` carries each
condition's status, the collateral changes, the auditor's verdict and the turn. With
`seconds_per_step`, the simulation clock (and the room physics) moves after every action.

Observations and actions are `gymnasium.spaces.Text` over the Basic Multilingual Plane: JSON with
any text in it fits, and results with characters beyond it are sent with JSON's \\u escapes.

This is the only module of `twin` that imports gymnasium and numpy (the `sim` extra).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from typing import Any, NoReturn, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.error import CustomSpaceError, ResetNeeded
from gymnasium.spaces import Text
from gymnasium.vector.utils import create_shared_memory

from .auditor import DEFAULT_POLICY, ActionPolicy
from .conditions import compile_condition
from .home import Home
from .homefile import load_home
from .reward import OutcomeRecorder, step_reward
from .surface import Result, error
from .tools import run_tool
from .verifier import Report, Verifier

ENV_ID = "homeflow/HomeEnv-v0"
# Every character of the Basic Multilingual Plane but the surrogates, which no text holds alone.
CHARSET = "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, 0x10000))))
MAX_OBSERVATION = 2**17
MAX_ACTION = 2**16
DEFAULT_MAX_TURNS = 20
REPLY = "reply"
NEUTRAL_PROMPT = "The home is yours to run: use the tools to act on it, then reply."
REPLY_RESULT: Result = {"success": True, "message": "Reply sent; the turn ends."}
OUTSIDE_CHARSET = re.compile("[\ud800-\udfff\U00010000-\U0010ffff]")

HomeFactory = Callable[[int], Home]
HomeSource = Home | str | os.PathLike[str] | Traversable | HomeFactory


class BMPText(Text):
    """gymnasium's Text over CHARSET, cheap to copy and to send to worker processes.

    Its character tables (63k entries) never change, so deep copies share them and pickles leave
    out the index, rebuilt on load; gymnasium's vector envs copy and pickle spaces per env.
    """

    _SHARED = frozenset({"_char_set", "_char_list", "_char_index", "_char_str"})

    def __init__(self, max_length: int, *, min_length: int) -> None:
        super().__init__(max_length, min_length=min_length, charset=CHARSET)

    def __deepcopy__(self, memo: dict[int, Any]) -> BMPText:
        twin = object.__new__(type(self))
        for key, value in vars(self).items():
            vars(twin)[key] = value if key in self._SHARED else copy.deepcopy(value, memo)
        return twin

    def __getstate__(self) -> dict[str, Any]:
        state = dict(vars(self))
        del state["_char_index"]
        return state

    def __setstate__(self, state: Iterable[tuple[str, Any]] | Mapping[str, Any]) -> None:
        super().__setstate__(state)
        self._char_index = {char: np.int32(i) for i, char in enumerate(self.character_list)}


@create_shared_memory.register(BMPText)
def _refuse_shared_memory(space: BMPText, n: int = 1, ctx: Any = None) -> NoReturn:
    """Make gymnasium's AsyncVectorEnv ask for shared_memory=False: it reads text from shared
    memory once, when it starts, and would return those observations ever after."""
    raise CustomSpaceError(
        "HomeEnv's text observations cannot go through gymnasium's shared memory; "
        'pass vector_kwargs={"shared_memory": False}'
    )


# Built once: every env gets deep copies, which share the character tables.
OBSERVATION_SPACE = BMPText(MAX_OBSERVATION, min_length=0)
ACTION_SPACE = BMPText(MAX_ACTION, min_length=1)


@dataclass(frozen=True, slots=True)
class Goal:
    """What the agent should bring about: goal conditions (twin.conditions) and what the user
    said; a goal without conditions (a question) ends on the agent's reply."""

    conditions: tuple[str, ...] = ()
    instruction: str | None = None


@dataclass(frozen=True, slots=True)
class _Action:
    """A parsed action: a tool call, a reply, or the error result of one that makes no sense."""

    name: str
    arguments: Any = None
    reply: str | None = None
    problem: Result | None = None


class HomeEnv(gym.Env[str, str]):
    """A goal on a twin home, acted on through the tools (see the module's docstring).

    `home` is a Home (copied, so the caller's stays as it is), a home file (twin.homefile), or a
    factory `factory(seed) -> Home` called on every reset with a seed from the env's generator,
    so that `reset(seed=...)` makes the same home. `goal` is a Goal or a list of conditions.
    `policy` is the auditor's (twin.auditor.DEFAULT_POLICY when None).

    For `gymnasium.make_vec(..., vectorization_mode="async")` pass
    `vector_kwargs={"shared_memory": False}`: gymnasium 1.4's AsyncVectorEnv reads text
    observations from shared memory once, when it starts, so the env refuses shared memory.
    """

    def __init__(
        self,
        home: HomeSource,
        goal: Goal | Iterable[str],
        max_turns: int = DEFAULT_MAX_TURNS,
        seconds_per_step: float = 0.0,
        policy: ActionPolicy | None = None,
    ) -> None:
        self.goal = goal if isinstance(goal, Goal) else Goal(_conditions(goal))
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if seconds_per_step < 0:
            raise ValueError(f"seconds_per_step must be 0 or more, got {seconds_per_step}")
        self.max_turns = max_turns
        self.seconds_per_step = seconds_per_step
        self.policy = policy or DEFAULT_POLICY
        self.observation_space = copy.deepcopy(OBSERVATION_SPACE)
        self.action_space = copy.deepcopy(ACTION_SPACE)
        if not self.observation_space.contains(self.prompt):
            raise ValueError(
                "The instruction has characters beyond the Basic Multilingual Plane (emoji) or "
                f"over {MAX_OBSERVATION} characters; write it without them"
            )
        for condition in self.goal.conditions:
            compile_condition(condition)
        self._factory: HomeFactory | None = None
        self._home: Home | None = None
        if isinstance(home, Home):
            self._home = home.copy()
        elif isinstance(home, str | os.PathLike | Traversable):
            self._home = load_home(home)
        elif callable(home):
            self._factory = home
        else:
            raise TypeError(
                f"home must be a Home, a home file or a factory(seed), got {type(home).__name__}"
            )
        if self._home is not None:
            self._start = self._home.snapshot()
            Verifier(self._home, self.goal.conditions)  # the conditions fit the home
        self._verifier: Verifier | None = None
        self._report: Report | None = None
        self._turn = 0

    @property
    def prompt(self) -> str:
        """The first observation: the user's instruction, or a neutral prompt without one."""
        return self.goal.instruction if self.goal.instruction is not None else NEUTRAL_PROMPT

    @property
    def home(self) -> Home:
        """The home as the episode has left it."""
        if self._home is None:
            raise ResetNeeded("The home is made on reset; call reset first")
        return self._home

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start the task again on the home's start, or on a fresh home from the factory."""
        super().reset(seed=seed)
        if self._factory is not None:
            self._home = self._factory(int(self.np_random.integers(2**31))).copy()
        else:
            self.home.restore(self._start)
        self._verifier = Verifier(self.home, self.goal.conditions)
        self._report = self._verifier.step(self.home)
        self._turn = 0
        return self.prompt, self._info(self._report)

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Take one agent action: a tool call or a reply."""
        if self._verifier is None or self._report is None:
            raise ResetNeeded("Call reset before step")
        home = self.home
        self._turn += 1
        parsed = _parse(action)
        if parsed.problem is not None:
            result = parsed.problem
        elif parsed.reply is not None:
            result = dict(REPLY_RESULT)
        else:
            result = run_tool(home, parsed.name, parsed.arguments, self.policy)
        if self.seconds_per_step:
            home.advance(self.seconds_per_step)
        report = self._verifier.step(home)
        recorder = OutcomeRecorder(self._report, policy=self.policy)
        verdict = recorder.call(parsed.name, parsed.arguments, result, report)
        self._report = report
        replied = parsed.reply is not None
        terminated = replied or (bool(self.goal.conditions) and report.done)
        truncated = not terminated and self._turn >= self.max_turns
        info = self._info(report)
        info.update(
            action=parsed.name,
            verdict={
                "allowed": verdict.allowed,
                "code": verdict.code,
                "message": verdict.message,
                "penalty": verdict.penalty,
            },
            task_reward=report.reward,
        )
        if replied:
            info["reply"] = parsed.reply
        return _observe(result), step_reward(recorder.outcome()), terminated, truncated, info

    def _info(self, report: Report) -> dict[str, Any]:
        """What the verifier says after a step: every condition, and the collateral changes."""
        return {
            "turn": self._turn,
            "conditions": [
                {
                    "text": status.text,
                    "satisfied": status.satisfied,
                    "newly_satisfied": status.newly_satisfied,
                    "error": status.error,
                }
                for status in report.conditions
            ],
            "all_satisfied": report.done,
            "collateral": list(report.collateral),
        }


def _conditions(goal: Iterable[str]) -> tuple[str, ...]:
    """A list of conditions as a tuple; one condition alone is taken as a list of one."""
    conditions = (goal,) if isinstance(goal, str) else tuple(goal)
    for condition in conditions:
        if not isinstance(condition, str):
            raise TypeError(f"Conditions are strings, got {type(condition).__name__}")
    return conditions


def _parse(action: Any) -> _Action:
    """An action as a tool call or a reply; one that is neither becomes an error result."""
    if isinstance(action, str):
        action = _decode(action)
        if isinstance(action, str):
            return _reply(action)
    if not isinstance(action, dict):
        return _invalid(f"An action is a dict or text, got {type(action).__name__}")
    if isinstance(action.get("function"), dict):
        action = action["function"]
    name = action.get("name")
    if not isinstance(name, str):
        return _invalid(
            'A tool call needs a "name": one of the tools, or "reply" with {"text": ...}'
        )
    arguments = action.get("arguments")
    if name != REPLY:
        return _Action(name, arguments)
    if isinstance(arguments, str):
        arguments = _decode(arguments)
        if isinstance(arguments, str):
            return _reply(arguments)
    text = arguments.get("text") if isinstance(arguments, dict) else None
    if not isinstance(text, str):
        return _invalid('A reply needs its text: {"name": "reply", "arguments": {"text": "..."}}')
    return _reply(text)


def _decode(text: str) -> dict[str, Any] | str:
    """The JSON object or string a text holds; else the text itself, as plain words."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    return value if isinstance(value, dict | str) else text


def _reply(text: str) -> _Action:
    if not text.strip():
        return _invalid("The reply is empty; call a tool or reply with some text")
    return _Action(REPLY, reply=text)


def _invalid(message: str) -> _Action:
    return _Action("invalid", problem=error("invalid_action", message))


def _observe(result: Result) -> str:
    """A result as compact JSON text that fits the observation space."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    if OUTSIDE_CHARSET.search(text):
        text = json.dumps(result, separators=(",", ":"))
    if len(text) > MAX_OBSERVATION:
        text = json.dumps(
            {
                "success": result.get("success", True),
                "truncated": True,
                "message": (
                    f"The result has {len(text)} characters, over the {MAX_OBSERVATION} an "
                    "observation holds; ask for less, e.g. list_entities with an area or domain"
                ),
            },
            separators=(",", ":"),
        )
    return text


# Importing this module registers HomeEnv-v0: `gymnasium.register_envs(twin.env)` keeps the import.
if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="twin.env:HomeEnv")

"""One reward: what an agent action earns, and when a task is solved.

An action is one assistant message, with any number of tool calls. While its calls run, an
`OutcomeRecorder` is fed each call's name, arguments, result and the verifier's report after it;
its `outcome()` is the action's `ActionOutcome` (JSON-able, so a rollout can carry it), from which
`reward_terms` computes each term for a variant and `step_reward` their sum. HomeEnv (one call per
action), RL (its TRL reward functions, one per term), MCTS-Flow (`episode_value`, `solved`) and the
benchmark (`solved`) all score with this module.

Terms, for a task of N goal conditions (variant "step" has the first two, "st" the third; both
have the rest):

| term            | value                                                                      |
|-----------------|----------------------------------------------------------------------------|
| verifier_reward | +1/N per condition newly satisfied, -1/N per one newly broken, -1/N per     |
|                 | entity the action newly changed that no condition covers (collateral)      |
| auditor_reward  | the auditor's penalty for each call it refused or that failed              |
|                 | (twin.auditor.PENALTIES: -1 forbidden ... -0.2 invalid data)               |
| outcome_reward  | 1 if after the action the task is solved, else 0 (ST)                      |
| format_reward   | -1 if a tool call in the message cannot be read                            |
| code_check      | -1 if pyexec code uses a construct the sandbox refuses (CodeCheck)         |
| code_length     | -1 if pyexec code is longer than `code_limit` tokens (CodeLength)          |
| turn_check      | -1 if the action comes after more than `turn_limit` user turns (TurnCheck) |

A task is solved when every condition holds and nothing else changed (`solved`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .auditor import ALLOWED, DEFAULT_POLICY, ActionPolicy, Verdict
from .pyexec import restricted
from .verifier import Report

SHARED_TERMS = ("format_reward", "code_check", "code_length", "turn_check")
TERMS: Mapping[str, tuple[str, ...]] = {
    "step": ("verifier_reward", "auditor_reward", *SHARED_TERMS),
    "st": ("outcome_reward", *SHARED_TERMS),
}
VARIANTS = tuple(TERMS)
CODE_LIMIT = 1000
"""The most tokens pyexec code may have before CodeLength costs (the paper's 1,000)."""
TURN_LIMIT = 3
"""The most user turns before TurnCheck costs (the paper's 3)."""
_TOKEN = re.compile(r"\w+|\S")


class Verified(Protocol):
    """What the verifier said after a step: a Report, or an episode's Step that recorded one."""

    @property
    def done(self) -> bool: ...

    @property
    def collateral(self) -> Sequence[str]: ...


def solved(report: Verified) -> bool:
    """Every condition holds and nothing else changed: the task's success, everywhere."""
    return report.done and not report.collateral


def progress(report: Report) -> float:
    """Share of conditions satisfied less collateral per condition, never below 0: how far an
    episode has come (what its verifier rewards add up to from a start where none held)."""
    count = max(1, len(report.conditions))
    satisfied = sum(status.satisfied for status in report.conditions)
    return max(0.0, (satisfied - len(report.collateral)) / count)


def episode_value(report: Report, success: bool) -> float:
    """An episode's value at its end (MCTS-Flow's leaf value): 1 for a success, else half its
    progress, so that partial work still guides the search."""
    return 1.0 if success else 0.5 * progress(report)


def code_tokens(code: str) -> int:
    """Words and symbols in code: a model-free token count for CodeLength where no tokenizer is."""
    return len(_TOKEN.findall(code))


@dataclass(frozen=True)
class ActionOutcome:
    """What one agent action (one assistant message) did: what its rewards are computed from."""

    conditions: int
    progress: float = 0.0
    collateral: int = 0
    penalties: float = 0.0
    malformed: int = 0
    restricted: int = 0
    code_tokens: int = 0
    turn: int = 1
    success: bool = False


class OutcomeRecorder:
    """Builds an action's ActionOutcome while its tool calls run, from the verifier's report
    before the action (`before`) and after each call; `turn` is the user turns so far."""

    def __init__(
        self,
        before: Report,
        *,
        turn: int = 1,
        policy: ActionPolicy = DEFAULT_POLICY,
        tokens: Callable[[str], int] = code_tokens,
    ) -> None:
        self.report = before
        self._collateral = frozenset(before.collateral)
        self._turn = turn
        self._policy = policy
        self._tokens = tokens
        self._progress = self._penalties = 0.0
        self._malformed = self._restricted = self._code_tokens = 0

    def call(self, name: str, arguments: Any, result: Mapping[str, Any], report: Report) -> Verdict:
        """Record one call and the report after it; the auditor's verdict on its result."""
        self.report = report
        self._progress += report.reward
        failure = result.get("error") if result.get("success") is False else None
        verdict = ALLOWED
        if isinstance(failure, Mapping):
            verdict = self._policy.verdict_for(failure["code"], failure["message"])
            self._penalties += verdict.penalty
        code = arguments.get("code") if isinstance(arguments, Mapping) else None
        if name == "pyexec" and isinstance(code, str):
            self._restricted += len(restricted(code))
            self._code_tokens = max(self._code_tokens, self._tokens(code))
        return verdict

    def replied(self, report: Report) -> None:
        """Record the report after the action's words, which a task's reply checks read."""
        self.report = report
        self._progress += report.reward

    def malformed(self, count: int = 1) -> None:
        """Record tool calls of the message that could not be read."""
        self._malformed += count

    def outcome(self) -> ActionOutcome:
        """The action's outcome, as the last report leaves it."""
        report = self.report
        return ActionOutcome(
            conditions=len(report.conditions),
            progress=self._progress,
            collateral=len(set(report.collateral) - self._collateral),
            penalties=self._penalties,
            malformed=self._malformed,
            restricted=self._restricted,
            code_tokens=self._code_tokens,
            turn=self._turn,
            success=solved(report),
        )


def reward_terms(
    outcome: ActionOutcome,
    variant: str = "step",
    *,
    code_limit: int = CODE_LIMIT,
    turn_limit: int = TURN_LIMIT,
) -> dict[str, float]:
    """Each of the variant's terms for an action (the module's table), by name."""
    if variant not in TERMS:
        raise ValueError(f"The reward's variant is one of {VARIANTS}, got {variant!r}")
    terms = {
        "verifier_reward": outcome.progress - outcome.collateral / max(1, outcome.conditions),
        "auditor_reward": outcome.penalties,
        "outcome_reward": float(outcome.success),
        "format_reward": -1.0 if outcome.malformed else 0.0,
        "code_check": -1.0 if outcome.restricted else 0.0,
        "code_length": -1.0 if outcome.code_tokens > code_limit else 0.0,
        "turn_check": -1.0 if outcome.turn > turn_limit else 0.0,
    }
    return {name: terms[name] for name in TERMS[variant]}


def step_reward(
    outcome: ActionOutcome,
    variant: str = "step",
    *,
    code_limit: int = CODE_LIMIT,
    turn_limit: int = TURN_LIMIT,
) -> float:
    """An action's reward: the sum of its variant's terms."""
    terms = reward_terms(outcome, variant, code_limit=code_limit, turn_limit=turn_limit)
    return sum(terms.values())

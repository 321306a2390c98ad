"""The verifier: a task's goal conditions checked after every step, with reward and collateral.

Reward scale, for N conditions: +1/N for each condition that became satisfied since the previous
check and -1/N for each that stopped being satisfied, so an episode's rewards add up to
(satisfied now - satisfied at the start) / N. A condition that cannot be evaluated (its error is
reported) counts as not satisfied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import islice

from .conditions import Condition, compile_condition
from .domains import domain_of
from .errors import ConditionError
from .home import Home
from .state import State

# Domains whose states the room physics moves, and attributes it moves on other entities; neither
# is the agent's doing, so neither is collateral.
PHYSICS_DOMAINS = ("sensor.", "binary_sensor.")
PHYSICS_ATTRIBUTES = frozenset({"current_temperature", "current_humidity", "hvac_action", "action"})
_ABSENT = object()

MAX_CONDITIONS = 100
"""The most conditions one verifier checks (each within twin.conditions' limits)."""


@dataclass(frozen=True, slots=True)
class ConditionStatus:
    """One condition after a step; `error` says why it could not be evaluated, if so."""

    text: str
    satisfied: bool
    newly_satisfied: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """What a step did to the task: each condition's status, whether all hold, the step's reward,
    and the entities changed since the start that no condition refers to."""

    conditions: tuple[ConditionStatus, ...]
    done: bool
    reward: float
    collateral: tuple[str, ...]


class Verifier:
    """Checks a task's conditions against a home, from the moment it is made (the task's start)."""

    def __init__(self, home: Home, conditions: Iterable[str | Condition]) -> None:
        """Compile and validate the conditions against `home`, and remember its start.

        Raises ConditionError for anything else than a Home and an iterable of conditions."""
        _check_home(home)
        self.conditions = _compile(conditions)
        for condition in self.conditions:
            condition.validate(home)
        self.start = home.snapshot()
        # What a reply check reads it does not set: a change there is collateral still.
        self._referenced = frozenset(
            entity_id
            for condition in self.conditions
            if not condition.reads_reply
            for entity_id in condition.entity_ids
        )
        self._unit = 1 / len(self.conditions) if self.conditions else 0.0
        self.reads_reply = any(condition.reads_reply for condition in self.conditions)
        self.reply: str | None = None  # the agent's latest reply, which says() reads
        self._satisfied = tuple(self._evaluate(condition, home)[0] for condition in self.conditions)

    def step(self, home: Home, reply: str | None = None) -> Report:
        """Check every condition after an agent step (a tool call, or a reply: its text, which
        the reply checks read from then on); the reward counts changes since the last."""
        _check_home(home)
        if reply is not None:
            self.reply = reply
        statuses = []
        reward = 0.0
        for condition, was in zip(self.conditions, self._satisfied, strict=True):
            satisfied, error = self._evaluate(condition, home)
            if satisfied != was:
                reward += self._unit if satisfied else -self._unit
            statuses.append(
                ConditionStatus(condition.text, satisfied, satisfied and not was, error)
            )
        self._satisfied = tuple(status.satisfied for status in statuses)
        return Report(tuple(statuses), all(self._satisfied), reward, self.collateral(home))

    def collateral(self, home: Home) -> tuple[str, ...]:
        """Entities whose state, attributes or contents (a list's items) differ from the start
        that no condition refers to (but a reply check: says()).

        Sensors, and attributes the physics moves, are left out; so are the timestamps.
        """
        start = self.start.states
        changed = []
        for entity_id, now in home.states.items():
            before = start.get(entity_id)
            if (
                now is before
                or entity_id in self._referenced
                or entity_id.startswith(PHYSICS_DOMAINS)
            ):
                continue
            if before is None or _differs(before, now):
                changed.append(entity_id)
        return tuple(changed)

    def _evaluate(self, condition: Condition, home: Home) -> tuple[bool, str | None]:
        try:
            return condition.holds(home, self.start.states, self.reply), None
        except ConditionError as err:
            return False, str(err)


def _check_home(home: object) -> None:
    if not isinstance(home, Home):
        raise ConditionError(
            f"The verifier checks conditions on a twin Home, got {type(home).__name__}"
        )


def _compile(conditions: Iterable[str | Condition]) -> tuple[Condition, ...]:
    """The conditions compiled: an iterable (a list, say) of at most MAX_CONDITIONS texts or
    Conditions; read no further than that, so an endless iterable is refused too."""
    if isinstance(conditions, str | bytes | bytearray | Mapping) or not isinstance(
        conditions, Iterable
    ):
        raise ConditionError(
            "The conditions must be a list of condition texts (or compiled Conditions), got "
            f"{type(conditions).__name__}"
        )
    taken = list(islice(conditions, MAX_CONDITIONS + 1))
    if len(taken) > MAX_CONDITIONS:
        raise ConditionError(
            f"A verifier checks at most {MAX_CONDITIONS} conditions, got more; split the task"
        )
    return tuple(
        condition if isinstance(condition, Condition) else compile_condition(condition)
        for condition in taken
    )


def _differs(before: State, now: State) -> bool:
    """Whether the agent changed an entity: its state, attributes other than physics ones, or
    what it holds beyond them (a to-do list's items)."""
    if before.state != now.state:
        return True
    if (contents := domain_of(now.domain).contents) is not None and (
        before.hidden.get(contents) != now.hidden.get(contents)
    ):
        return True
    if before.attributes == now.attributes:
        return False
    keys = (before.attributes.keys() | now.attributes.keys()) - PHYSICS_ATTRIBUTES
    return any(
        before.attributes.get(key, _ABSENT) != now.attributes.get(key, _ABSENT) for key in keys
    )

"""A task's ground truth: what the user says, and the service calls that would do what they mean.

An `Intent` is one Home Assistant service call on one entity. Its `condition` (in the twin's
condition language, twin/conditions.py) says that the call's outcome is there; it is compiled from
the call by `intent_condition`, from the outcomes the service's domain declares
(twin.domains.descriptor) and the call's fields, for every service whose outcome is a state or an
attribute; a relative change (volume_up, brightness_step_pct) is a comparison with the value at
the task's start, `was()` (toggle, and colours, whose shown value depends on the bulb's colour
mode, have none). `clarify` records the slot the request leaves out on purpose
(a field such as "temperature", or "entity" when it does not say which device), which the user
gives when asked; an agent (the teacher too) decides to ask from the words, not from it;
`only_if` is a condition on the home's state at the task's start: the intent applies only if it
holds, and otherwise the entity must be left alone. The agent can only observe entities, so
`only_if` may not read an area's air.

A `Task` is the user's turns (the request, then the answers to clarifying questions) and its
intents; `Task.conditions(home)` are the verifier's goal conditions at the task's start, and
`Task.check(home)` proves the ground truth does the job on a copy of the home.

An `Answer` is what the agent's reply must state: for a status question ("is the garage door
open?", "what's the temperature in the kitchen?") an entity's state or attribute, or whether it
shows a value (a yes or a no); for a request the home cannot carry out (a device or a feature it
lacks) that it cannot, with nothing changed. Its condition is a reply check (says(), read from
the agent's latest reply); the entity it reads is no goal, so changing it is collateral.

A multi-turn task (QT4: coreference, topic switch, backtracking) also has follow-ups: what the
user says, once the earlier requests are done, in turns 1, 2, ...; each intent's `turn` says
when it is said. An intent said later on the same entity that sets every field an earlier one
set supersedes it ("19 degrees... actually, make it 21"): only final goals are conditions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from twin.auditor import DEFAULT_POLICY, ActionPolicy
from twin.conditions import compile_condition
from twin.domains import DOMAINS
from twin.errors import TwinError
from twin.home import Home
from twin.tools import describe, list_entities
from twin.verifier import Verifier

from .errors import AgentError


class TaskError(AgentError, ValueError):
    """A task or intent that is malformed, or that the home cannot carry out."""


# Fields shown under their own name, with the value as given.
SAME_NAME_FIELDS = frozenset(
    {
        "brightness",
        "color_temp_kelvin",
        "effect",
        "target_temp_low",
        "target_temp_high",
        "humidity",
        "fan_mode",
        "preset_mode",
        "swing_mode",
        "swing_horizontal_mode",
        "percentage",
        "oscillating",
        "direction",
        "volume_level",
        "is_volume_muted",
        "source",
        "sound_mode",
        "shuffle",
        "repeat",
        "mode",
        "fan_speed",
        "media_content_id",
    }
)
STATE = "state"
# Fields shown otherwise: the attribute (or the state) and the value it shows.
RENAMED_FIELDS: Mapping[str, tuple[str, Callable[[Any], Any]]] = MappingProxyType(
    {
        "brightness_pct": ("brightness", lambda pct: round(255 * pct / 100)),
        "temperature": ("temperature", lambda value: round(float(value), 1)),
        "position": ("current_position", int),
        "tilt_position": ("current_tilt_position", int),
        "hvac_mode": (STATE, str),
        "operation_mode": (STATE, str),
        "away_mode": ("away_mode", lambda on: "on" if on else "off"),
    }
)
# Fields that move an attribute by their value (up when positive), from where it was at the
# task's start.
RELATIVE_FIELDS: Mapping[str, str] = MappingProxyType(
    {"brightness_step_pct": "brightness", "brightness_step": "brightness"}
)
# What an impossible request's `absent` filters by: list_entities' arguments.
LOOKUPS = ("area", "floor", "domain")
# Fields that leave nothing lasting to check (how, not what).
IGNORED_FIELDS = frozenset(
    {"transition", "flash", "code", "speed", "media_content_type", "enqueue", "announce", "extra"}
)
# Fields whose value 0 turns the entity off.
OFF_AT_ZERO = frozenset({"brightness", "brightness_pct", "percentage"})


def intent_condition(domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> str:
    """The condition that holds once `domain.service` with `data` has acted on `entity_id`."""
    return " and ".join(test for _, test in _outcomes(domain, service, entity_id, data))


def _outcomes(
    domain: str, service: str, entity_id: str, data: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """What the call leaves on the entity: (the state or attribute shown, its test) pairs."""
    if domain not in DOMAINS or service not in DOMAINS[domain].services:
        raise TaskError(f"{domain}.{service} is no service of the twin")
    ref = json.dumps(entity_id)
    if any(data.get(key) == 0 for key in OFF_AT_ZERO):
        return [(STATE, f'state({ref}) == "off"')]
    tests = []
    declared = DOMAINS[domain]
    if (state_test := declared.state_outcomes.get(service)) is not None:
        tests.append((STATE, f"state({ref}) {state_test}"))
    if (fixed := declared.attribute_outcomes.get(service)) is not None:
        tests.append((fixed[0], f"attr({ref}, {json.dumps(fixed[0])}) == {_literal(fixed[1])}"))
    if (moved := declared.relative_outcomes.get(service)) is not None:
        tests.append((moved[0], _moved(ref, *moved)))
    for key, value in data.items():
        if key in IGNORED_FIELDS:
            continue
        if key in RELATIVE_FIELDS:
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or not value or not math.isfinite(value):
                raise TaskError(f"{key} must be a finite number other than 0, got {value!r}")
            tests.append((RELATIVE_FIELDS[key], _moved(ref, RELATIVE_FIELDS[key], value)))
            continue
        if key in SAME_NAME_FIELDS:
            shown = key
        elif key in RENAMED_FIELDS:
            shown, convert = RENAMED_FIELDS[key]
            value = convert(value)
        else:
            raise TaskError(
                f"{domain}.{service}: the outcome of {key!r} cannot be stated as a condition; "
                f"use absolute fields such as {', '.join(sorted(SAME_NAME_FIELDS)[:4])}"
            )
        reader = f"state({ref})" if shown == STATE else f"attr({ref}, {json.dumps(shown)})"
        tests.append((shown, f"{reader} == {_literal(value)}"))
    if not tests:
        raise TaskError(
            f"{domain}.{service} has no outcome a condition can state (it is relative or "
            "leaves no trace); use a service that sets a state or an attribute"
        )
    return tests


def _moved(ref: str, attribute: str, way: float) -> str:
    """The test that `attribute` went up (`way` > 0) or down from where it was at the start."""
    name = json.dumps(attribute)
    return f"attr({ref}, {name}) {'>' if way > 0 else '<'} was({ref}, {name})"


def fields_of(home: Home, entity_id: str) -> set[str]:
    """The service fields the entity takes, as its manual (twin.tools.describe) lists them."""
    manual = describe(home, entity_id)
    if not manual.get("success", True):
        raise TaskError(f"An impossible request names {entity_id}, which the home lacks")
    return {key for spec in manual["services"].values() for key in spec.get("fields", {})}


def _literal(value: Any) -> str:
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    raise TaskError(f"{value!r} is not a value a condition can compare with; use text or numbers")


@dataclass(frozen=True)
class Intent:
    """One service call on one entity that the user means, and what makes it done."""

    domain: str
    service: str
    entity_id: str
    data: Mapping[str, Any] = field(default_factory=dict)
    clarify: str | None = None
    only_if: str | None = None
    turn: int = 0

    def __post_init__(self) -> None:
        """Refuse intents whose outcome cannot be checked or whose guard cannot be observed."""
        if self.entity_id.partition(".")[0] != self.domain:
            raise TaskError(f"{self.entity_id} is not a {self.domain} entity")
        if isinstance(self.turn, bool) or not isinstance(self.turn, int) or self.turn < 0:
            raise TaskError(f"turn must be a user turn number (0, 1, ...), got {self.turn!r}")
        object.__setattr__(self, "data", dict(self.data))
        intent_condition(self.domain, self.service, self.entity_id, self.data)
        if self.only_if is not None:
            guard = compile_condition(self.only_if)
            if guard.area_ids:
                raise TaskError(
                    f"only_if {self.only_if!r} reads an area's air, which no tool shows; "
                    "test an entity such as a sensor instead"
                )

    @property
    def condition(self) -> str:
        """The goal condition of the call (without only_if)."""
        return intent_condition(self.domain, self.service, self.entity_id, self.data)

    @property
    def fields(self) -> frozenset[str]:
        """The state and attributes the call's outcome sets."""
        return frozenset(
            shown for shown, _ in _outcomes(self.domain, self.service, self.entity_id, self.data)
        )

    def supersedes(self, other: Intent) -> bool:
        """Whether this intent, said in a later turn, overrides `other` (backtracking): the same
        entity, and every field `other` sets is set again."""
        return (
            self.turn > other.turn
            and self.entity_id == other.entity_id
            and self.fields >= other.fields
        )

    def applies(self, home: Home) -> bool:
        """Whether only_if holds in `home` (always, without one)."""
        return self.only_if is None or compile_condition(self.only_if).holds(home)

    def to_dict(self) -> dict[str, Any]:
        """The intent as JSON-able data, without the fields left at their defaults."""
        out: dict[str, Any] = {
            "domain": self.domain,
            "service": self.service,
            "entity_id": self.entity_id,
        }
        if self.data:
            out["data"] = dict(self.data)
        if self.clarify is not None:
            out["clarify"] = self.clarify
        if self.only_if is not None:
            out["only_if"] = self.only_if
        if self.turn:
            out["turn"] = self.turn
        return out


@dataclass(frozen=True)
class Answer:
    """What the reply to the request must state: `entity_id`'s state (or its `attribute`),
    or with `expected` whether it shows that value (yes or no); or that the request cannot be
    done: without an entity, `absent` being the list_entities filter that shows the home lacks
    what was asked for ({"area": "bathroom", "domain": "fan"}); with one, `lacks` the service
    field that none of the entity's services takes ("color_name" of a white-only bulb)."""

    entity_id: str | None = None
    attribute: str | None = None
    expected: str | None = None
    absent: Mapping[str, str] = field(default_factory=dict)
    lacks: str | None = None

    def __post_init__(self) -> None:
        """Refuse an answer that reads nothing it can check, an impossible request that names
        an entity, and fields of the wrong type (TaskError, whatever the input)."""
        texts = {"entity_id": self.entity_id, "attribute": self.attribute}
        texts |= {"expected": self.expected, "lacks": self.lacks}
        for key, value in texts.items():
            if value is not None and not isinstance(value, str):
                raise TaskError(f"An answer's {key} is text, got {value!r}")
        absent = self.absent
        if not isinstance(absent, Mapping) or not all(isinstance(v, str) for v in absent.values()):
            raise TaskError(
                f'`absent` maps filters to text, e.g. {{"domain": "fan"}}; got {absent!r}'
            )
        object.__setattr__(self, "absent", dict(absent))
        if self.entity_id is None and (self.attribute or self.expected is not None):
            raise TaskError("An answer's attribute or expected value needs its entity_id")
        if self.entity_id is not None and self.absent:
            raise TaskError("An answer about an entity cannot say it is absent")
        if self.lacks is not None and (
            self.entity_id is None or self.attribute or self.expected is not None
        ):
            raise TaskError(
                "`lacks` names a field the answer's entity_id does not take; it reads no "
                'attribute or expected value, e.g. {"entity_id": "light.hall", "lacks": '
                '"color_name"}'
            )
        if set(self.absent) - set(LOOKUPS):
            raise TaskError(f"`absent` filters by {', '.join(LOOKUPS)}, got {sorted(self.absent)}")
        if self.entity_id is None and not self.absent:
            raise TaskError(
                "An answer without an entity says the request cannot be done: give `absent`, "
                'the list_entities filter that finds nothing, e.g. {"domain": "fan"}'
            )
        try:
            compile_condition(self.condition)
        except TwinError as err:
            raise TaskError(f"An answer's reply check cannot be made: {err}") from err

    @property
    def kind(self) -> str:
        """ "status" (a value), "yes_no" or "impossible"."""
        if self.entity_id is None or self.lacks is not None:
            return "impossible"
        return "status" if self.expected is None else "yes_no"

    @property
    def condition(self) -> str:
        """The reply check: says() of the value, of whether it is `expected`, or a no."""
        if self.kind == "impossible":
            return "says(False)"
        ref = json.dumps(self.entity_id)
        read = f"attr({ref}, {json.dumps(self.attribute)})" if self.attribute else f"state({ref})"
        if self.expected is None:
            return f"says({read})"
        return f"says({read} == {json.dumps(self.expected)})"

    def reply(self, home: Home) -> str:
        """The plain words that state the answer in `home` (the ground truth's reply)."""
        if self.kind == "impossible" or self.entity_id is None:
            return "No."
        state = home.states.get(self.entity_id)
        value = (
            None
            if state is None
            else (state.attributes.get(self.attribute) if self.attribute else state.state)
        )
        if self.expected is not None:
            return "Yes." if value == self.expected else "No."
        return f"It is {value}."

    def to_dict(self) -> dict[str, Any]:
        """The answer as JSON-able data, without the fields left at their defaults."""
        out: dict[str, Any] = {}
        for key in ("entity_id", "attribute", "expected", "lacks"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        if self.absent:
            out["absent"] = dict(self.absent)
        return out


@dataclass(frozen=True)
class Task:
    """What the user says (the request, then the answers to clarifying questions; and the
    follow-ups, said once what came before is done) and means."""

    turns: tuple[str, ...]
    intents: tuple[Intent, ...]
    followups: tuple[str, ...] = ()
    answers: tuple[Answer, ...] = ()  # what the reply to the request must state

    def __post_init__(self) -> None:
        """Refuse a task with nothing said or meant, with too few turns for its questions, or
        with a follow-up that is missing, says nothing new or cannot be told apart."""
        object.__setattr__(self, "turns", tuple(self.turns))
        object.__setattr__(self, "intents", tuple(self.intents))
        object.__setattr__(self, "followups", tuple(self.followups))
        object.__setattr__(self, "answers", tuple(self.answers))
        if not self.turns or not (self.intents or self.answers):
            raise TaskError("A task needs at least one user turn, and an intent or an answer")
        if self.answers and (self.followups or self.intents):
            raise TaskError(
                "A task with answers is one question or impossible request: no intents or "
                "follow-ups besides"
            )
        if any(intent.clarify for intent in self.intents) and len(self.turns) < 2:
            raise TaskError("A task with a clarify intent needs a second turn: the user's answer")
        used = {intent.turn for intent in self.intents} | ({0} if self.answers else set())
        if used != set(range(len(self.followups) + 1)):
            raise TaskError(
                f"Intents are said in turns {sorted(used)} but the task has the request and "
                f"{len(self.followups)} follow-ups: each turn needs an utterance and an intent"
            )
        texts = [text.strip() for text in (self.turns[0], *self.followups)]
        if len(set(texts)) != len(texts):
            raise TaskError("Follow-ups must differ from each other and from the request")

    def goals(self, upto: int | None = None) -> list[int]:
        """The indexes of the intents said by turn `upto` (all without it) that no intent said
        by then supersedes: what the user wants in the end."""
        said = [i for i, intent in enumerate(self.intents) if upto is None or intent.turn <= upto]
        return [
            i for i in said if not any(self.intents[j].supersedes(self.intents[i]) for j in said)
        ]

    def stated(self, said: Sequence[str]) -> int:
        """The last user turn among the user's messages `said`: 0, or n once the n-th
        follow-up is among them (follow-ups are told apart from answers by their text)."""
        texts = {str(text).strip() for text in said}
        return max(
            (n for n, text in enumerate(self.followups, 1) if text.strip() in texts), default=0
        )

    def conditions(self, home: Home) -> list[str]:
        """The goal conditions at the start (`home` now), one per goal: the intent's, or for an
        intent whose only_if does not hold, that its entity stays as it is; then one reply
        check per answer."""
        return [
            intent.condition
            if intent.applies(home)
            else f"unchanged({json.dumps(intent.entity_id)})"
            for intent in (self.intents[i] for i in self.goals())
        ] + [answer.condition for answer in self.answers]

    def check(self, home: Home, policy: ActionPolicy = DEFAULT_POLICY) -> None:
        """Raise TaskError unless the ground truth, carried out turn by turn on a copy of `home`
        as `policy` allows, meets every condition and changes nothing else (an answer: that
        what it reads is there, and for an impossible request that the home has nothing
        `absent` finds)."""
        work = home.copy()
        try:
            verifier = Verifier(work, self.conditions(work))
        except TwinError as err:
            raise TaskError(str(err)) from err
        for intent in sorted(self.intents, key=lambda intent: intent.turn):
            if not intent.applies(home):
                continue
            target = {"entity_id": intent.entity_id}
            data = dict(intent.data)
            try:
                policy.call(work, intent.domain, intent.service, data, target)
            except TwinError as err:
                raise TaskError(f"{intent.domain}.{intent.service}: {err}") from err
        for answer in self.answers:
            if answer.absent and list_entities(work, **answer.absent).get("entities", [None]):
                raise TaskError(f"The home has what the impossible request asks for: {answer}")
            if answer.lacks is not None and answer.lacks in fields_of(work, str(answer.entity_id)):
                raise TaskError(f"The device takes what the impossible request asks for: {answer}")
        report = verifier.step(work, " ".join(answer.reply(work) for answer in self.answers))
        failed = [status.text for status in report.conditions if not status.satisfied]
        if failed or report.collateral:
            raise TaskError(
                f"The ground truth leaves unmet {failed} and changes {list(report.collateral)}"
            )

    def to_json(self) -> str:
        """The task as JSON text."""
        data: dict[str, Any] = {
            "turns": list(self.turns),
            "intents": [intent.to_dict() for intent in self.intents],
        }
        if self.followups:
            data["followups"] = list(self.followups)
        if self.answers:
            data["answers"] = [answer.to_dict() for answer in self.answers]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Task:
        """A task from `to_json`'s text; TaskError says what is wrong with bad input."""
        try:
            raw = json.loads(text)
            return cls(
                tuple(raw["turns"]),
                tuple(Intent(**item) for item in raw["intents"]),
                tuple(raw.get("followups", ())),
                tuple(Answer(**item) for item in raw.get("answers", ())),
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as err:
            raise TaskError(
                f"Not a task: {err}; expected {{'turns': [...], 'intents': [{{'domain', "
                "'service', 'entity_id', 'data'?, 'clarify'?, 'only_if'?, 'turn'?}], "
                "'followups'?: [...], 'answers'?: [{'entity_id'?, 'attribute'?, 'expected'?, "
                "'absent'?}]}}"
            ) from err

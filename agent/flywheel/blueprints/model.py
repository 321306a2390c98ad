"""A blueprint (paper B.1.2) and its parts: where its request lies in the control space
(`QueryType`), what the scripter proposes (`Candidate`), and a refusal (`Rejected`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from twin.home import Home
from twin.homemaker import make_home

from ...errors import AgentError
from ...task import Task, TaskError
from ..localise import localise
from ..profiles import Profile
from ..sentences import SHARES, Share

CLARITIES = ("clear", "missing_slot", "ambiguous", "implicit")
TONES = ("plain", "polite", "terse", "chatty")
REQUESTS = ("command", "question", "impossible")
PHENOMENA = ("coreference", "topic_switch", "backtracking")
TASK_TYPES = ("QT1", "QT2", "QT3", "QT4", "QT5", "QS", "QI")  # the benchmark's, in its order
REQUEST_TYPES = {"question": "QS", "impossible": "QI"}  # by QueryType.request


class BlueprintError(AgentError, ValueError):
    """Blueprint data that cannot be read back."""


@dataclass(frozen=True, slots=True)
class QueryType:
    """Where the request lies in the paper's control space, with QT4/QT5 extras."""

    clarity: str
    dependency: str
    devices: str
    tone: str
    phenomenon: str | None = None
    memory: bool = False
    request: str = "command"  # or "question" (a status question), "impossible" (REQUESTS)

    @property
    def label(self) -> str:
        """The paper's label, e.g. 'missing_slot+polite+dependent+multiple_devices', with the
        request kind first when it is no command ('question+clear+plain+...')."""
        parts = [self.clarity, self.tone, self.dependency, f"{self.devices}_device"]
        parts = ([self.request] if self.request != "command" else []) + parts
        parts[-1] += "s" if self.devices == "multiple" else ""
        parts += [self.phenomenon] if self.phenomenon else []
        return "+".join(parts + (["memory"] if self.memory else []))

    @property
    def task_type(self) -> str:
        """The paper's task type (TASK_TYPES): a question or an impossible request by its kind;
        else the first that applies of QT3 (unclear), QT5 (memory), QT4 (a phenomenon), QT2
        (several devices or a dependency), QT1."""
        if self.request in REQUEST_TYPES:
            return REQUEST_TYPES[self.request]
        if self.clarity != "clear":
            return "QT3"
        if self.memory:
            return "QT5"
        if self.phenomenon is not None:
            return "QT4"
        if self.devices == "multiple" or self.dependency == "dependent":
            return "QT2"
        return "QT1"


@dataclass(frozen=True)
class Blueprint:
    """A profile, a home (rebuilt from its seed), scenes, the request's type and ground truth;
    the user speaks `language`, and the home's names are in it; `share` "held_out" marks the
    benchmark's out-of-distribution blueprints, whose templates, phrases and names (and
    languages) the flywheel never draws."""

    seed: int
    profile: Profile
    home_seed: int
    home_type: str
    scenes: tuple[str, ...]
    query_type: QueryType
    task: Task
    memory: tuple[str, ...] = ()
    language: str = "en"
    share: Share = "flywheel"
    templates: tuple[str, ...] = ()  # keys of the Home Assistant sentence templates it says

    def home(self) -> Home:
        """The home in its initial state, named in the blueprint's language (and share)."""
        return localise(make_home(self.home_seed, self.home_type), self.language, self.share)

    def to_json(self) -> str:
        """The blueprint as JSON text."""
        data = {
            "seed": self.seed,
            "profile": self.profile.to_dict(),
            "home_seed": self.home_seed,
            "home_type": self.home_type,
            "scenes": list(self.scenes),
            "query_type": asdict(self.query_type),
            "task": json.loads(self.task.to_json()),
            "memory": list(self.memory),
            "language": self.language,
        }
        if self.share != "flywheel":
            data["share"] = self.share
        if self.templates:
            data["templates"] = list(self.templates)
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Blueprint:
        """A blueprint from `to_json`'s text; BlueprintError says what is wrong."""
        try:
            raw = json.loads(text)
            return cls(
                seed=raw["seed"],
                profile=Profile.from_dict(raw["profile"]),
                home_seed=raw["home_seed"],
                home_type=raw["home_type"],
                scenes=tuple(raw["scenes"]),
                query_type=QueryType(**raw["query_type"]),
                task=Task.from_json(json.dumps(raw["task"])),
                memory=tuple(raw["memory"]),
                language=raw.get("language", "en"),  # v1's rows have none: English
                share=_share(raw.get("share", "flywheel")),
                templates=_templates(raw.get("templates", [])),
            )
        except (json.JSONDecodeError, KeyError, TypeError, TaskError) as err:
            raise BlueprintError(f"Not a blueprint: {err}") from err


def _templates(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(key, str) for key in value):
        raise TypeError(f"templates is a list of template keys, got {value!r}")
    return tuple(value)


def _share(value: Any) -> Share:
    if value not in SHARES:
        raise TypeError(f"share is one of {', '.join(SHARES)}, got {value!r}")
    return value  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class Rejected:
    """A candidate the triple filter refused: which filter, which check, and why."""

    seed: int
    filter: str
    check: str
    reason: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the scripter proposes, before filtering: intents as plain data, the turns (the
    request and the answers), the follow-ups (QT4) and what the reply must state (a question's
    or an impossible request's agent.task.Answer fields)."""

    turns: tuple[str, ...]
    intents: tuple[Mapping[str, Any], ...]
    followups: tuple[str, ...] = ()
    answers: tuple[Mapping[str, Any], ...] = ()

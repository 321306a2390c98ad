"""Cases in Home Assistant's assist evaluation format (allenporter/home-assistant-datasets), on
the twin or a real Home Assistant, scored by that format's rule.

A folder of cases holds one folder per home: `_fixtures.yaml`, the home as a synthetic-home
inventory, and record files (any other `*.yaml`), each a `category` and a list of `tests`:

```yaml
category: light
tests:
  - sentences: [Turn on the desk lamp, Desk lamp on please]
    setup:                       # applied to the inventory before each sentence
      light.desk_lamp: {state: "off"}
    expect_changes:              # Home Assistant's state after the turn, where it changes
      light.desk_lamp: {state: "on", attributes: {brightness: 255}}
    ignore_changes:              # attributes (or `state`) not compared, by entity
      light.desk_lamp: [color_mode]
    context_device: kitchen_satellite   # optional: the device the user speaks to
    oracle:                      # HomeFlow's own: the calls that solve the test
      - action: light.turn_on
        target: {entity_id: light.desk_lamp}
        data: {}                 # optional, as is target
      - tool: get_state          # or any tool with its arguments (reads)
        arguments: {entity_id: sensor.porch_temperature}
```

Each sentence is one case: its home is the inventory with the test's setup, the user says the
sentence once, and the policy acts until it replies. The rule is the format's: after the turn,
every entity of the home equals its state before it with `expect_changes` merged in (state and
attributes, values equal or equal as text), except the attributes `ignore_changes` names and
those derived from the state (`is_closed`, `is_opening`, `is_closing`); an entity added or
removed fails the case too. A case with no expected changes (a question) is solved by doing
nothing. Unlike the original, a test's unknown keys are refused: a misspelt `expect_changes`
would otherwise expect nothing.

The policy `teacher` plays a test's `oracle` (which it needs); `noop` and the models are the
benchmark's own (agent.bench.evaluate); on Home Assistant, a conversation agent
(`conversation.home_assistant`, Assist) may hear the sentence instead. Any file or field that
is wrong is an AssistCaseError naming the file and the field, raised before anything runs.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import voluptuous as vol

from twin.errors import HomeDefinitionError
from twin.homefile import import_ha_snapshot
from twin.homefile.common import read_source
from twin.mirror import Mirror

from ..backends import Backend
from ..backends.twin import TwinBackend
from ..episode import EpisodeLimits, Trajectory, run_episode
from ..policies import AssistantMessage, Message, Policy, ToolCall
from .conversation import converse_turns, is_agent
from .ha import TITLE, HomeLink, Server, add_home, mismatches, remove_bench_homes, remove_home
from .instances import BenchError

if TYPE_CHECKING:
    from twin.home import Home

FIXTURES = "_fixtures.yaml"
# Attributes that follow from the state, never declared (the original ignores them too).
DERIVED = frozenset({"is_closed", "is_opening", "is_closing"})
EVALUATION = "assist-cases"
# What reads the home's states, as Home Assistant's state dicts by entity id.
States = Callable[[], Awaitable[Mapping[str, Mapping[str, Any]]]]


class AssistCaseError(BenchError):
    """A folder of cases, or a file or field in it, that cannot be used."""


def _entity_id(value: Any) -> str:
    if not isinstance(value, str) or "." not in value.strip("."):
        raise vol.Invalid(f"expected an entity id such as light.kitchen, got {value!r}")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise vol.Invalid(f"expected a non-empty string, got {value!r}")
    return value


def _action(value: Any) -> str:
    domain, _, service = _text(value).partition(".")
    if not domain or not service:
        raise vol.Invalid(f"expected domain.service such as light.turn_on, got {value!r}")
    return str(value)


_STATE = vol.Schema(
    {
        vol.Optional("state"): vol.Any(None, vol.Coerce(str)),
        vol.Optional("attributes"): vol.Any(None, dict),
    }
)
_ORACLE_CALL = vol.Any(
    vol.Schema(
        {
            vol.Required("action"): _action,
            vol.Optional("target"): vol.Any(None, dict),
            vol.Optional("data"): vol.Any(None, dict),
        }
    ),
    vol.Schema({vol.Required("tool"): _text, vol.Optional("arguments", default=dict): dict}),
    msg="expected {action, target, data} or {tool, arguments}",
)
_TEST = vol.Schema(
    {
        vol.Required("sentences"): vol.All([_text], vol.Length(min=1)),
        vol.Optional("setup", default=dict): vol.Any(None, {_entity_id: _STATE}),
        vol.Optional("expect_changes", default=dict): vol.Any(None, {_entity_id: _STATE}),
        vol.Optional("ignore_changes", default=dict): vol.Any(None, {_entity_id: [_text]}),
        vol.Optional("context_device", default=None): vol.Any(None, _text),
        vol.Optional("oracle", default=None): vol.Any(None, [_ORACLE_CALL]),
    }
)
_RECORD = vol.Schema(
    {vol.Required("category"): _text, vol.Required("tests"): vol.All([_TEST], vol.Length(min=1))},
    extra=vol.ALLOW_EXTRA,
)


@dataclass(frozen=True)
class AssistCase:
    """One sentence of a test: the home (an inventory, the test's setup applied), what the user
    says, and what must change; `oracle` the tool calls that solve it ({"name", "arguments"}),
    None where the test has none."""

    id: str
    category: str
    sentence: str
    inventory: dict[str, Any]
    expect_changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    ignore_changes: dict[str, list[str]] = field(default_factory=dict)
    context_device: str | None = None
    oracle: list[dict[str, Any]] | None = None

    @property
    def task_type(self) -> str:
        """The category, as the benchmark's task type (for selecting and summaries)."""
        return self.category

    def home(self) -> Home:
        """The case's home, as it is before the sentence."""
        home, _ = import_ha_snapshot(self.inventory)
        return home

    def scene(self, home: Home) -> str | None:
        """Where the user speaks from, for the prompt: the context device and its area."""
        if self.context_device is None:
            return None
        device = home.devices[self.context_device]
        area = home.areas.get(device.area_id or "")
        return f"The user is speaking to {device.name}" + (f" in {area.name}." if area else ".")

    def to_json(self) -> str:
        """The case as JSON text (a runner job's payload)."""
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> AssistCase:
        """A case from `to_json`'s text."""
        return cls(**json.loads(text))


# --- reading a folder -----------------------------------------------------------------------------


def is_cases(path: Path) -> bool:
    """Whether `path` is a folder of assist cases (a home folder, or one holding home folders)."""
    return path.is_dir() and next(path.rglob(FIXTURES), None) is not None


def load_cases(path: Path) -> list[AssistCase]:
    """Every case under `path`, home by home and file by file (sorted), each checked completely:
    AssistCaseError names the file and field at fault."""
    fixtures = sorted(path.rglob(FIXTURES)) if path.is_dir() else []
    if not fixtures:
        raise AssistCaseError(
            f"{path}: no {FIXTURES} under it: give a folder of Home Assistant evaluation cases "
            "(a folder per home with its inventory and record files)"
        )
    cases: list[AssistCase] = []
    for fixture in fixtures:
        folder = fixture.parent
        home_name = (folder.relative_to(path) if folder != path else Path(path.name)).as_posix()
        home_name = home_name.replace("/", "-")
        inventory = _read(fixture)
        _build(fixture, inventory)
        for record in sorted(fixture.parent.glob("*.yaml")):
            if record.name != FIXTURES:
                cases += _record_cases(record, f"{home_name}-{record.stem}", inventory)
    return cases


def _read(file: Path) -> dict[str, Any]:
    try:
        _, document = read_source(file)
    except HomeDefinitionError as err:
        raise AssistCaseError(str(err)) from None
    if not isinstance(document, dict):
        raise AssistCaseError(f"{file}: expected a mapping, got {type(document).__name__}")
    return document


def _build(file: Path, inventory: Mapping[str, Any], where: str = "") -> Home:
    """The home of an inventory; AssistCaseError naming the file (and the test) otherwise."""
    try:
        home, _ = import_ha_snapshot(inventory)
    except HomeDefinitionError as err:
        raise AssistCaseError(f"{file}{where}: {err}") from None
    return home


def _record_cases(file: Path, prefix: str, inventory: Mapping[str, Any]) -> list[AssistCase]:
    try:
        record = _RECORD(_read(file))
    except vol.MultipleInvalid as err:
        first = err.errors[0]
        raise AssistCaseError(f"{file}: {_path(first.path)}: {first.error_message}") from None
    cases = []
    for number, test in enumerate(record["tests"], 1):
        where = f"tests[{number - 1}]"
        setup = test["setup"] or {}
        prepared = _with_setup(inventory, setup, f"{file}: {where}.setup")
        home = _build(file, prepared, f": {where} (the fixture with its setup)")
        expect, ignore = test["expect_changes"] or {}, test["ignore_changes"] or {}
        for key, entities in (("expect_changes", expect), ("ignore_changes", ignore)):
            for entity_id in entities:
                if entity_id not in home.states:
                    raise AssistCaseError(
                        f"{file}: {where}.{key}.{entity_id}: no such entity in the home"
                    )
        device = test["context_device"]
        if device is not None and device not in home.devices:
            raise AssistCaseError(f"{file}: {where}.context_device: no device {device!r}")
        oracle = None if test["oracle"] is None else [_tool_call(c) for c in test["oracle"]]
        for index, sentence in enumerate(test["sentences"], 1):
            cases.append(
                AssistCase(
                    f"{prefix}-{number}.{index}",
                    record["category"],
                    sentence,
                    prepared,
                    {k: _flat(v) for k, v in expect.items()},
                    {k: list(v) for k, v in ignore.items()},
                    device,
                    oracle,
                )
            )
    return cases


def _path(path: Sequence[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _with_setup(
    inventory: Mapping[str, Any], setup: Mapping[str, Mapping[str, Any]], where: str
) -> dict[str, Any]:
    """The inventory with each entity's setup state and attributes put over its own."""
    entities = [dict(entity) for entity in inventory.get("entities") or ()]
    by_id = {entity.get("id"): entity for entity in entities}
    for entity_id, wanted in setup.items():
        if (entity := by_id.get(entity_id)) is None:
            raise AssistCaseError(f"{where}.{entity_id}: no such entity in the fixture")
        if wanted.get("state") is not None:
            entity["state"] = wanted["state"]
        if wanted.get("attributes") is not None:
            entity["attributes"] = {**(entity.get("attributes") or {}), **wanted["attributes"]}
    return {**inventory, "entities": entities}


def _flat(state: Mapping[str, Any]) -> dict[str, Any]:
    """An entity state of the format as one mapping: `state` and the attributes."""
    flat = dict(state.get("attributes") or {})
    if state.get("state") is not None:
        flat["state"] = state["state"]
    return flat


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """An oracle entry as a tool call: an action is call_service's."""
    if "tool" in call:
        return {"name": call["tool"], "arguments": dict(call["arguments"])}
    domain, _, service = call["action"].partition(".")
    arguments = {"domain": domain, "service": service}
    for key in ("target", "data"):
        if call.get(key):
            arguments[key] = call[key]
    return {"name": "call_service", "arguments": arguments}


# --- scoring --------------------------------------------------------------------------------------


def unexpected_changes(
    before: Mapping[str, Mapping[str, Any]],
    after: Mapping[str, Mapping[str, Any]],
    expect: Mapping[str, Mapping[str, Any]],
    ignore: Mapping[str, Sequence[str]],
) -> dict[str, dict[str, Any]]:
    """The format's rule: each entity whose state `after` differs from `before` with `expect`
    (flat: `state` and attributes) merged in, but for the ignored and derived keys, with what
    was expected and what it got; empty when the case is solved. States are Home Assistant's
    ({"state", "attributes"}); an entity added or removed is a difference too."""
    diffs: dict[str, dict[str, Any]] = {}
    for entity_id in sorted(before.keys() | after.keys()):
        if entity_id not in before or entity_id not in after:
            diffs[entity_id] = {"expected": entity_id in before, "got": entity_id in after}
            continue
        wanted = _flat(before[entity_id]) | dict(expect.get(entity_id, {}))
        got = _flat(after[entity_id])
        skipped = DERIVED | set(ignore.get(entity_id, ()))
        keys = sorted(
            key
            for key in wanted.keys() | got.keys()
            if key not in skipped and not _same(wanted.get(key), got.get(key))
        )
        if keys:
            diffs[entity_id] = {
                "expected": {k: wanted.get(k) for k in keys},
                "got": {k: got.get(k) for k in keys},
            }
    return diffs


def _same(expected: Any, got: Any) -> bool:
    """Equal, or equal as text (the format's states are text, and YAML's numbers are loose)."""
    expected, got = _plain(expected), _plain(got)
    if expected == got:
        return True
    return expected is not None and got is not None and str(expected) == str(got)


def _plain(value: Any) -> Any:
    """Tuples as lists, at any depth (JSON has no tuples)."""
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


# --- playing --------------------------------------------------------------------------------------


class OraclePolicy:
    """The upper bound: makes the test's oracle calls at once, then replies."""

    def __init__(self, calls: Sequence[Mapping[str, Any]]) -> None:
        self.calls = tuple(
            ToolCall(f"oracle-{i}", call["name"], dict(call["arguments"]))
            for i, call in enumerate(calls)
        )

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The calls on hearing the user; a reply once their results are in."""
        if not self.calls or messages[-1].get("role") != "user":
            return AssistantMessage("Done.")
        return AssistantMessage("", tool_calls=self.calls)


def oracle_policy(case: AssistCase) -> OraclePolicy:
    """The oracle of `case`; AssistCaseError when its test has none."""
    if case.oracle is None:
        raise AssistCaseError(f"{case.id}: the test has no oracle, which the teacher plays")
    return OraclePolicy(case.oracle)


async def play_case(
    case: AssistCase,
    policy: Policy,
    limits: EpisodeLimits,
    backend: Backend | None = None,
    states: States | None = None,
) -> tuple[Trajectory, dict[str, dict[str, Any]]]:
    """The episode of `policy` hearing the case's sentence once, on the twin (or on `backend`,
    whose home's states `states()` reads), and the unexpected changes it left."""
    home = case.home()
    backend = backend or TwinBackend(home)
    episode = run_episode(policy, backend, [case.sentence], limits=limits, scene=case.scene(home))
    return await _judged(case, states or backend.states, episode)


async def _judged(
    case: AssistCase, states: States, episode: Awaitable[Trajectory]
) -> tuple[Trajectory, dict[str, dict[str, Any]]]:
    """`episode`'s trajectory and the unexpected changes it left in the states."""
    before = await states()
    trajectory = await episode
    after = await states()
    return trajectory, unexpected_changes(before, after, case.expect_changes, case.ignore_changes)


async def play_case_on_server(
    server: Server, case: AssistCase, agent: Policy | str, limits: EpisodeLimits
) -> tuple[Trajectory, dict[str, dict[str, Any]]]:
    """`play_case` on a Home Assistant: the case's home imported as a HomeFlow home, a HomeFlow
    `agent` acting over REST, or the Home Assistant conversation agent of that id hearing the
    sentence (conversation.py), the states of that home's entities compared; then removed."""
    home = case.home()
    async with server.backend() as backend:
        await remove_bench_homes(backend)
        entry_id = await add_home(backend, f"{TITLE} {case.id}", home)
        try:
            link = HomeLink(backend, entry_id, home)
            mirror = Mirror(link, home.name)

            async def current() -> Home:
                await mirror.sync()
                return mirror.home

            if problems := mismatches(home, await current()):
                raise AssistCaseError(
                    f"{case.id}: Home Assistant holds the home under other ids than the "
                    f"twin's ({'; '.join(problems[:4])}); remove what clashes and run again"
                )
            if isinstance(agent, str):
                episode = converse_turns(backend, agent, [case.sentence], limits, current)
                return await _judged(case, link.states, episode)
            return await play_case(case, agent, limits, backend, link.states)
        finally:
            await remove_home(backend, entry_id)


def evaluate_case(
    job: Mapping[str, str],
    policy: str,
    max_turns: int,
    max_tool_calls: int,
    guided: bool,
    server: Server | None = None,
) -> dict[str, Any]:
    """The runner's work for one case (`{"id", "type", "case": JSON}`): its record, on the twin
    or on a Home Assistant `server` (where `policy` may be a conversation agent's id)."""
    from .evaluate import TEACHER, closing, costs, model_policy

    case = AssistCase.from_json(job["case"])
    limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=max_tool_calls)
    agent: Policy | str = policy
    if policy == TEACHER:
        agent = oracle_policy(case)
    elif not is_agent(policy):
        agent = model_policy(policy, case.home, guided)
    if server is None:
        played = play_case(case, cast(Policy, agent), limits)
    else:
        played = play_case_on_server(server, case, agent, limits)
    trajectory, diffs = asyncio.run(closing(agent, played))
    record = {"id": job["id"], "type": job["type"], "success": not diffs, "unexpected": diffs}
    return record | costs(trajectory) | {"trajectory": asdict(trajectory)}


def job(case: AssistCase) -> dict[str, str]:
    """The runner's payload for a case."""
    return {"id": case.id, "type": case.category, "case": case.to_json()}

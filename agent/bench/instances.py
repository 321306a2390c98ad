"""SmartHome-Bench's instances: 1,678 blueprints (the paper's size) over five task types.

The split is enforced: the benchmark draws only seeds from `BENCH_SEEDS` (2**40 onward), which the
flywheel refuses (agent.flywheel.blueprints.check_split, SplitError), and it refuses any other
seed, so its users and homes, which are made from the seed, are never trained on.

A blueprint's task type comes from its query type (`QueryType.task_type`), first match wins:

- QS status question: the user asks about a device's state or value; the reply must state it
  (agent.task.Answer, a reply check) and nothing may change (v2 on);
- QI infeasible request: the user asks for a kind of device the room lacks; the reply must say
  so and nothing may change (v2 on);
- QT3 ambiguous intent: the request is missing_slot, ambiguous or implicit (an implicit request's
  value is a remembered preference too, but what the agent must do first is work out the intent);
- QT5 personalised memory: a clear request whose value is the user's remembered preference;
- QT4 context-aware multi-turn: a coreference, topic switch or backtracking over two turns;
- QT2 compositional and condition-dependent: several devices, or an `only_if`;
- QT1 atomic control: the rest (clear, independent, one device, one turn, no memory).

The walk goes through the bench seeds in order and keeps a blueprint when its type is not yet
full, its task needs what the type says (`unmet`) and the scripted teacher solves it in a real
episode with the scripted user; the counts are split evenly over the types (`targets`). The same
count and first seed give the same instances.

From v2 on a second walk, from HELD_OUT_FIRST further on, makes the out-of-distribution split
(ids "ood-qt1-0000"...): its blueprints draw the held-out share (agent.flywheel.sentences'
held-out templates, the phrase bank's held-out phrases, localise's held-out names: other English
names, and languages the flywheel never speaks), which no training blueprint draws, so that its
results say how the agent does on words and homes it was not trained on.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import lzma
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twin import reward
from twin.atomic import write_text

from ..backends import Backend
from ..backends.twin import TwinBackend
from ..episode import EpisodeLimits, Trajectory, View, run_episode
from ..errors import AgentError
from ..flywheel import datasets, localise, profiles
from ..flywheel.blueprints import (
    BENCH_SEEDS,
    REQUEST_TYPES,
    TASK_TYPES,
    VALUE_WORDS,
    Blueprint,
    BlueprintError,
    SplitError,
    check_split,
    make_blueprint,
)
from ..flywheel.sentences import Share
from ..flywheel.user import ScriptedUser, UserSimulator
from ..policies import Policy
from ..policies.teacher import TeacherPolicy
from ..task import Intent

if TYPE_CHECKING:
    from twin.home import Home

# v1 is frozen: its instances as generated at c8fe3a0 ship with the package (v1/), so that its
# results stay comparable while the flywheel changes; the newest version is generated.
FROZEN = ("v1",)
VERSION = "v2"
VERSIONS = (*FROZEN, VERSION)
NAME = "smarthome-bench-{version}"
SIZE = 1678
HELD_OUT_SIZE = 420  # the out-of-distribution split's instances (v2 on), 60 per task type
HELD_OUT_FIRST = 2**39  # its walk starts this far past the in-distribution walk's first seed
LANGUAGE_EVERY = 4  # one held-out seed in four speaks a held-out language (localise's)
HELD_OUT_PREFIX = "ood-"  # the out-of-distribution split's ids: "ood-qt1-0000"
SPLITS = {"id": "ID", "ood": "OOD"}  # the splits, and their columns in results
ERROR_RATE = 0.2  # the flywheel's scripter error rate, so the triple filter works as in training
DROPS = ("rejected", "unmet", "unsolved")


class BenchError(AgentError, ValueError):
    """Benchmark data that cannot be read, or a request the benchmark refuses."""


@dataclass(frozen=True)
class BenchInstance:
    """One benchmark instance: its id (e.g. "qt3-0042"), task type and blueprint."""

    id: str
    task_type: str
    blueprint: Blueprint

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise BenchError(f"{self.id}: unknown task type {self.task_type!r}")
        try:
            check_split(self.blueprint.seed, bench=True)
        except SplitError as err:
            raise BenchError(f"{self.id}: {err}") from err

    @property
    def split(self) -> str:
        """ "ood" for the out-of-distribution split (held-out templates, phrases, names and
        languages), else "id"."""
        return "ood" if self.blueprint.share == "held_out" else "id"

    @property
    def scene(self) -> str | None:
        """The prompt's scene: what is going on in every room the request touches."""
        return " ".join(self.blueprint.scenes) or None

    def row(self) -> dict[str, Any]:
        """The instance as a dataset row: id, task type, columns that place it, its blueprint."""
        return {
            "id": self.id,
            "task_type": self.task_type,
            "split": self.split,
            **datasets.blueprint_columns(self.blueprint),
            "blueprint": self.blueprint.to_json(),
        }

    def to_json(self) -> str:
        """The row as one JSON line."""
        return json.dumps(self.row(), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> BenchInstance:
        """An instance from `to_json`'s text; BenchError says what is wrong."""
        try:
            raw = json.loads(text)
            return cls(raw["id"], raw["task_type"], Blueprint.from_json(raw["blueprint"]))
        except (json.JSONDecodeError, KeyError, TypeError, BlueprintError) as err:
            raise BenchError(f"Not a benchmark instance: {err}") from err


def load_bench(path: Path) -> list[BenchInstance]:
    """The instances of a benchmark directory (its instances.jsonl) or JSONL file."""
    file = path / "instances.jsonl" if path.is_dir() else path
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise BenchError(f"Cannot read {file}: {err}") from err
    out = []
    for number, line in enumerate(lines, 1):
        try:
            out.append(BenchInstance.from_json(line))
        except BenchError as err:
            raise BenchError(f"{file}:{number}: {err}") from err
    return out


# --- task types and what they need ----------------------------------------------------------------


def in_order(names: Iterable[str]) -> list[str]:
    """Task types (and split columns) in the benchmark's order, then any others by name (an
    assist case's categories)."""
    order = {name: i for i, name in enumerate((*TASK_TYPES, *SPLITS.values()))}
    return sorted(set(names), key=lambda name: (order.get(name, len(order)), name))


def value_numbers(intent: Intent) -> list[str]:
    """The numbers a request would state for the intent's values, as said ("40", "21.5"); a
    value said by its name ("warm white") has none."""
    said = (
        re.match(r"\d+(?:\.\d+)?", VALUE_WORDS[key](value))
        for key, value in intent.data.items()
        if key in VALUE_WORDS and key != "hvac_mode"
    )
    return [number.group() for number in said if number is not None]


def says(text: str, number: str) -> bool:
    """Whether `text` states `number` (as a number of its own, not part of another)."""
    return re.search(rf"(?<![\d.]){re.escape(number)}(?![\d.]|\.\d)", text) is not None


def request_text(blueprint: Blueprint) -> str:
    """What the user says unprompted: the request and the follow-ups, not the answers."""
    task = blueprint.task
    return " ".join((task.turns[0], *task.followups))


def unmet(blueprint: Blueprint) -> str | None:
    """Why the blueprint does not need what its task type says, or None when it does."""
    task, kind = blueprint.task, blueprint.query_type.task_type
    intents, said = task.intents, request_text(blueprint)
    if kind in REQUEST_TYPES.values():
        return None if task.answers and not intents else f"{kind} without a reply check"
    guarded = any(i.only_if is not None for i in intents)
    if kind == "QT1":
        plain = not guarded and not task.followups and not blueprint.memory
        return None if len(intents) == 1 and plain else "QT1 with more than one atomic step"
    if kind == "QT2":
        return None if len(intents) > 1 or guarded else "QT2 with one unconditional intent"
    if kind == "QT4":
        later = task.followups and any(i.turn > 0 for i in intents)
        return None if later else "QT4 without a follow-up turn"
    if kind == "QT5":
        first = next((i for i in intents if value_numbers(i)), None)
        if first is None or not blueprint.memory:
            return "QT5 without a remembered value"
        memory, context = " ".join(blueprint.memory), " ".join((said, *blueprint.scenes))
        for number in value_numbers(first):
            if not says(memory, number) or says(context, number):
                return f"QT5 value {number} is not the memory's alone"
        return None
    # QT3: the request leaves out the device or the value of the intent to ask about or infer
    hidden = next((i for i in intents if i.clarify is not None), intents[0])
    home = blueprint.home()
    if hidden.clarify == "entity":
        room, domain = home.area_of(hidden.entity_id), hidden.domain
        fits = [e for e in home.entities if e.startswith(f"{domain}.") and home.area_of(e) == room]
        return None if len(fits) > 1 else "QT3 ambiguous request with one candidate"
    if any(says(said, number) for number in value_numbers(hidden)):
        return "QT3 request states its value"
    if hidden.clarify is None and device_name(home, hidden.entity_id) in said.lower():
        return "QT3 implicit request names its device"
    return None


def device_name(home: Home, entity_id: str) -> str:
    """The device's name as a request would say it, in lower case."""
    entry = home.entities.get(entity_id)
    name = entry.name if entry is not None and entry.name else entity_id.partition(".")[2]
    return name.replace("_", " ").lower()


def targets(count: int = SIZE) -> dict[str, int]:
    """Instances per task type: `count` split evenly, the remainder to the first types."""
    if count < 1:
        raise BenchError(f"count must be at least 1, got {count}")
    share, extra = divmod(count, len(TASK_TYPES))
    return {kind: share + (i < extra) for i, kind in enumerate(TASK_TYPES)}


# --- generation -----------------------------------------------------------------------------------


async def play(
    blueprint: Blueprint,
    policy: Policy,
    seed: int | None = None,
    limits: EpisodeLimits | None = None,
    *,
    backend: Backend | None = None,
    view: View | None = None,
    user: Callable[[Home], UserSimulator] | None = None,
) -> Trajectory:
    """An episode of `policy` on the blueprint in the twin (or on `backend`, which holds the
    blueprint's home, read by the verifier through `view`), with the scripted user (by `seed`,
    else the blueprint's) or the `user` made for the episode's home, the memory and the scenes
    in the prompt, verified by its conditions."""
    home, task = blueprint.home(), blueprint.task
    seed = blueprint.seed if seed is None else seed
    return await run_episode(
        policy,
        backend or TwinBackend(home),
        ScriptedUser(task, seed, home=home) if user is None else user(home),
        conditions=task.conditions(home),
        limits=limits or EpisodeLimits(),
        memory=blueprint.memory,
        scene=" ".join(blueprint.scenes) or None,
        view=view,
    )


def solved(trajectory: Trajectory) -> bool:
    """The benchmark's success: the task done (after the last tool call, or the reply a
    question's check reads) and nothing else changed (twin.reward.solved)."""
    steps = trajectory.steps
    collateral = steps[-1].collateral if steps else []
    return reward.solved(_Outcome(trajectory.done, collateral))


@dataclass(frozen=True, slots=True)
class _Outcome:
    """An episode's end as twin.reward.solved reads it."""

    done: bool
    collateral: Sequence[str]


@dataclass
class BenchGeneration:
    """The instances of the walks over the bench seeds (in distribution from `first`, the
    held-out split's from `held_out_first`), and what they dropped and why."""

    instances: list[BenchInstance]
    first: int
    walked: int = 0
    held_out_first: int = 0
    held_out_walked: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROPS, 0))
    seconds: float = 0.0

    def counts(self, split: str = "id") -> dict[str, int]:
        """Instances of the split ("id" or "ood") per task type."""
        found = Counter(i.task_type for i in self.instances if i.split == split)
        return {kind: found[kind] for kind in TASK_TYPES}


def generate(
    count: int = SIZE,
    *,
    held_out: int = 0,
    first: int = BENCH_SEEDS.start,
    on_instance: Callable[[BenchInstance], None] | None = None,
) -> BenchGeneration:
    """Walk the bench seeds from `first` until every task type has its share of `count`; then,
    for `held_out` instances of the out-of-distribution split, from HELD_OUT_FIRST further on
    with the held-out share (templates, phrases, names; a held-out language in one seed of
    LANGUAGE_EVERY)."""
    check_split(first, first + HELD_OUT_FIRST, bench=True)
    return asyncio.run(_generate(count, held_out, first, on_instance))


def generate_bench(count: int = SIZE, *, first: int = BENCH_SEEDS.start) -> list[BenchInstance]:
    """The benchmark's instances (`generate`'s), ordered by id."""
    return generate(count, first=first).instances


async def _generate(
    count: int, held_out: int, first: int, on_instance: Callable[[BenchInstance], None] | None
) -> BenchGeneration:
    started = time.perf_counter()
    out = BenchGeneration([], first, held_out_first=first + HELD_OUT_FIRST)
    out.instances, out.walked = await _walk(targets(count), first, "flywheel", out, on_instance)
    if held_out:
        ood, out.held_out_walked = await _walk(
            targets(held_out), out.held_out_first, "held_out", out, on_instance
        )
        out.instances += ood
    out.seconds = time.perf_counter() - started
    return out


async def _walk(
    wanted: Mapping[str, int],
    first: int,
    share: Share,
    out: BenchGeneration,
    on_instance: Callable[[BenchInstance], None] | None,
) -> tuple[list[BenchInstance], int]:
    """The instances of one walk (ordered by type) and the seeds walked; drops counted in
    `out`."""
    found: dict[str, list[BenchInstance]] = {kind: [] for kind in TASK_TYPES}
    prefix = HELD_OUT_PREFIX if share == "held_out" else ""
    languages = localise.held_out_languages() if share == "held_out" else ()
    seed = first
    while any(len(found[kind]) < n for kind, n in wanted.items()):
        if seed not in BENCH_SEEDS:
            raise BenchError(f"ran out of bench seeds at {seed}")
        spoken = languages[seed // LANGUAGE_EVERY % len(languages)] if languages else "en"
        language = spoken if seed % LANGUAGE_EVERY == 0 else "en"
        blueprint = make_blueprint(
            seed, error_rate=ERROR_RATE, bench=True, language=language, share=share
        )
        seed += 1
        if not isinstance(blueprint, Blueprint):
            out.dropped["rejected"] += 1
            continue
        kind = blueprint.query_type.task_type
        if len(found[kind]) >= wanted[kind]:
            continue
        if unmet(blueprint) is not None:
            out.dropped["unmet"] += 1
            continue
        teacher = TeacherPolicy(blueprint.task, blueprint.seed, language=blueprint.language)
        if not solved(await play(blueprint, teacher)):
            out.dropped["unsolved"] += 1
            continue
        number = len(found[kind])
        instance = BenchInstance(f"{prefix}{kind.lower()}-{number:04d}", kind, blueprint)
        found[kind].append(instance)
        if on_instance is not None:
            on_instance(instance)
    return [instance for kind in TASK_TYPES for instance in found[kind]], seed - first


# --- files ----------------------------------------------------------------------------------------


def generator_hash(count: int, first: int, held_out: int = 0) -> str:
    """A hash of what defines the instances: the config and the generating code and data (not
    the commit), so equal hashes mean `generate` gives the same files."""
    config = _config(count, first, held_out)
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode())
    flywheel = Path(str(profiles.__file__)).parent
    for path in sorted((flywheel / "blueprints").glob("*.py")):
        digest.update(path.read_bytes())
    for name in ("profiles.py", "phrases.yaml", "profiles.yaml", "names.yaml", "sentences.py"):
        digest.update((flywheel / name).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


def _config(count: int, first: int, held_out: int = 0) -> dict[str, Any]:
    config = {"version": VERSION, "count": count, "first": first, "error_rate": ERROR_RATE}
    return config | ({"held_out": held_out} if held_out else {})


def write_bench(directory: Path, generation: BenchGeneration) -> list[Path]:
    """The generated version's file set: instances (JSONL, Parquet where pyarrow is), manifest
    and card."""
    count = sum(generation.counts().values())
    held_out = sum(generation.counts("ood").values())
    manifest = {
        "name": "SmartHome-Bench",
        **_config(count, generation.first, held_out),
        "generator": generator_hash(count, generation.first, held_out),
        "counts": generation.counts(),
        "seeds": {
            "first": generation.first,
            "last": generation.first + generation.walked - 1,
            "walked": generation.walked,
            "reserved": [BENCH_SEEDS.start, BENCH_SEEDS.stop - 1],
        },
        "dropped": generation.dropped,
    }
    if held_out:
        manifest["held_out_counts"] = generation.counts("ood")
        manifest["held_out_seeds"] = {
            "first": generation.held_out_first,
            "walked": generation.held_out_walked,
            "languages": ["en", *localise.held_out_languages()],
        }
    return _write(directory, [instance.row() for instance in generation.instances], manifest)


def frozen_rows(version: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A frozen version's rows and manifest, as shipped; BenchError when the rows are not the
    ones the manifest's digest names."""
    if version not in FROZEN:
        raise BenchError(f"no frozen version {version!r}; frozen: {', '.join(FROZEN)}")
    shipped = files("agent.bench").joinpath(version)
    data = lzma.decompress(shipped.joinpath("instances.jsonl.xz").read_bytes())
    manifest: dict[str, Any] = json.loads(shipped.joinpath("manifest.json").read_text())
    if hashlib.sha256(data).hexdigest() != manifest["sha256"]:
        raise BenchError(f"SmartHome-Bench {version}'s shipped instances are damaged")
    return [json.loads(line) for line in data.decode().splitlines()], manifest


def write_frozen(directory: Path, version: str) -> list[Path]:
    """A frozen version's file set, the same bytes of instances.jsonl every time."""
    rows, manifest = frozen_rows(version)
    return _write(directory, rows, manifest)


def _write(directory: Path, rows: Sequence[dict[str, Any]], manifest: dict[str, Any]) -> list[Path]:
    written = datasets.write_dataset(directory, "instances", rows)
    path = directory / "manifest.json"
    write_text(path, json.dumps({**manifest, "files": [f.name for f in written]}, indent=2) + "\n")
    seeds = manifest["seeds"]
    about = ABOUT.format(
        count=len(rows), seeds=seeds["walked"], first=seeds["first"], version=manifest["version"]
    )
    card = datasets.card(f"SmartHome-Bench {manifest['version']}", written, spread(rows), about)
    write_text(directory / "README.md", card)
    return [*written, path, directory / "README.md"]


def spread(rows: Sequence[Mapping[str, Any]]) -> list[datasets.Section]:
    """The card's counts: by task type, domain, home type, clarity and phenomenon."""

    def counts(title: str, values: Iterable[Any]) -> datasets.Section:
        found = Counter(str(value).lower() for value in values)
        return datasets.Section(title, [(k, str(n)) for k, n in found.most_common()])

    return [
        datasets.Section("by task type", [(k, str(n)) for k, n in _types(rows).items()]),
        counts("by domain (instances acting on it)", (d for row in rows for d in row["domains"])),
        counts("by home type", (row["home_type"] for row in rows)),
        counts("by clarity", (row["clarity"] for row in rows)),
        counts("by phenomenon", (row["phenomenon"] or "none" for row in rows)),
    ]


def _types(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    found = Counter(row["task_type"] for row in rows)
    return {kind: found[kind] for kind in TASK_TYPES if kind in found}


ABOUT = (
    "SmartHome-Bench: {count} instances over the paper's five task types (QT1 atomic control, "
    "QT2 compositional and condition-dependent control, QT3 ambiguous intent, QT4 context-aware "
    "multi-turn, QT5 personalised memory; from v2 on also QS status questions and QI infeasible "
    "requests, scored by what the reply states), from bench seeds {first} onward ({seeds} "
    "walked), which "
    "the training flywheel refuses. Each row's `blueprint` is the JSON of an "
    "`agent.flywheel.blueprints.Blueprint` (profile, home seed, scenes, query type, memory, the "
    "task's turns and intents with their conditions); `agent.bench.instances.load_bench` reads "
    "them back. Every instance passed the triple filter, needs what its type says, and was "
    "solved by the scripted teacher with the scripted user. Score by the home's state: all goal "
    "conditions hold and nothing else changed. Regenerate with `homeflow bench generate --version "
    "{version}`."
)

"""SmartHome-Bench's instances: the enforced split, determinism, and that each task type needs
what it says, checked on the text and in real episodes in the twin."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent.backends.twin import TwinBackend
from agent.bench.instances import (
    BENCH_SEEDS,
    FROZEN,
    SIZE,
    VERSION,
    BenchError,
    BenchInstance,
    frozen_rows,
    generate,
    generate_bench,
    load_bench,
    play,
    request_text,
    says,
    solved,
    targets,
    unmet,
    value_numbers,
    write_bench,
    write_frozen,
)
from agent.cli import main
from agent.flywheel import mcts
from agent.flywheel.blueprints import (
    TASK_TYPES,
    Blueprint,
    SplitError,
    draft,
    make_blueprint,
)
from agent.flywheel.blueprints.scripter import _nudge
from agent.policies.teacher import TeacherPolicy
from agent.prompt import system_prompt
from agent.task import Intent, Task
from twin.homefile import dump_home
from twin.homemaker import make_home

COUNT = 42  # six of each type


@pytest.fixture(scope="module")
def sample() -> list[BenchInstance]:
    return generate_bench(COUNT)


def of_type(sample: list[BenchInstance], kind: str) -> list[BenchInstance]:
    found = [instance for instance in sample if instance.task_type == kind]
    assert len(found) == COUNT // len(TASK_TYPES)
    return found


# --- the split ------------------------------------------------------------------------------------


def test_the_flywheel_refuses_bench_seeds_and_the_bench_refuses_training_seeds() -> None:
    bench_seed = BENCH_SEEDS.start
    for refused in (
        lambda: make_blueprint(bench_seed),
        lambda: draft(bench_seed + 7),
        lambda: mcts.raw_candidate(bench_seed, 0.2),  # role-play's way in
        lambda: make_blueprint(3, bench=True),
        lambda: generate(5, first=3),
    ):
        with pytest.raises(SplitError):
            refused()
    training = next(b for s in range(20) if isinstance(b := make_blueprint(s), Blueprint))
    with pytest.raises(BenchError, match="not for the benchmark's use"):
        BenchInstance("qt1-0000", training.query_type.task_type, training)
    assert make_blueprint(BENCH_SEEDS.start - 1) is not None  # the edge is training's


def test_the_data_commands_refuse_bench_seeds_and_a_bench_directory(
    tmp_path: Path, sample: list[BenchInstance]
) -> None:
    runner = CliRunner()
    out = tmp_path / "blueprints"
    seed = str(BENCH_SEEDS.start - 1)  # a range that runs into the bench seeds
    result = runner.invoke(main, ["data", "blueprints", "--count", "2", "--seed", seed, "-o", out])
    assert result.exit_code == 2
    assert "not for training use" in result.output
    assert not out.exists()
    bench_dir = tmp_path / "bench"
    write_bench(bench_dir, generate(5))
    result = runner.invoke(
        main, ["data", "synthesize", "--blueprints", str(bench_dir), "-o", tmp_path / "sft"]
    )
    assert result.exit_code == 2
    assert "not for training use" in result.output
    assert not (tmp_path / "sft").exists()


def test_bench_homes_are_not_training_homes(sample: list[BenchInstance]) -> None:
    """By content: no home of the sample equals a training home of its type (seeds 0-39)."""
    kinds = {instance.blueprint.home_type for instance in sample}
    training = {dump_home(make_home(seed, kind)) for kind in kinds for seed in range(40)}
    bench = {dump_home(instance.blueprint.home()) for instance in sample}
    assert len(bench) == len(sample)  # and the bench's homes differ among themselves
    assert not bench & training


# --- determinism and files ------------------------------------------------------------------------


def test_generation_is_deterministic_and_the_files_read_back(
    tmp_path: Path, sample: list[BenchInstance]
) -> None:
    again = generate(COUNT)
    assert [i.to_json() for i in again.instances] == [i.to_json() for i in sample]
    assert again.counts() == targets(COUNT) == dict.fromkeys(TASK_TYPES, 6)
    assert again.dropped["unsolved"] == 0
    files = write_bench(tmp_path, again)
    assert {f.name for f in files} >= {"instances.jsonl", "manifest.json", "README.md"}
    assert load_bench(tmp_path) == sample
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["counts"] == targets(COUNT)
    assert manifest["version"] == VERSION
    assert manifest["seeds"]["first"] == BENCH_SEEDS.start
    assert manifest["seeds"]["walked"] == again.walked
    assert "| QT3 | 6 |" in (tmp_path / "README.md").read_text()
    stats = CliRunner().invoke(main, ["data", "stats", str(tmp_path)])
    assert stats.exit_code == 0, stats.output  # the flywheel's summary reads a benchmark too
    assert "by clarity" in stats.output
    assert "vocabulary (words)" in stats.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text(sample[0].to_json() + "\n" + '{"id": "qt1-0001"}\n')
    with pytest.raises(BenchError, match=r"bad\.jsonl:2"):
        load_bench(bad)


def test_the_full_size_is_split_evenly() -> None:
    expected = {"QT1": 240, "QT2": 240, "QT3": 240, "QT4": 240, "QT5": 240, "QS": 239, "QI": 239}
    assert targets() == expected
    assert sum(targets().values()) == SIZE == 1678


# --- what each task type needs --------------------------------------------------------------------


def test_every_instance_needs_what_its_type_says(sample: list[BenchInstance]) -> None:
    for instance in sample:
        blueprint, kind = instance.blueprint, instance.task_type
        assert blueprint.query_type.task_type == kind
        assert instance.id.startswith(kind.lower())
        assert unmet(blueprint) is None
        task = blueprint.task
        if kind == "QT1":
            assert len(task.intents) == 1
            assert not task.followups
            assert not blueprint.memory
            assert task.intents[0].only_if is None
            assert task.intents[0].clarify is None
        elif kind == "QT2":
            assert len(task.intents) > 1 or any(i.only_if for i in task.intents)
        elif kind == "QT4":
            assert task.followups
            assert {i.turn for i in task.intents} == {0, 1}


async def test_qt5_values_are_known_only_from_the_memory(sample: list[BenchInstance]) -> None:
    for instance in of_type(sample, "QT5"):
        blueprint = instance.blueprint
        intent = next(i for i in blueprint.task.intents if value_numbers(i))
        backend = TwinBackend(blueprint.home())
        blind = await system_prompt(backend, scene=instance.scene)
        told = await system_prompt(backend, memory=blueprint.memory, scene=instance.scene)
        for number in value_numbers(intent):
            assert not says(blind + request_text(blueprint), number), (instance.id, number)
            assert says(told, number), (instance.id, number)


def literal(task: Task, hidden: Intent, home_entities: list[str]) -> Task:
    """The task as an agent acting on the request alone would do it, without asking: the other
    device of the room, or another value than the one the user meant."""
    if hidden.clarify == "entity":
        other = next(e for e in home_entities if e != hidden.entity_id)
        guess = replace(hidden, entity_id=other, clarify=None)
    else:
        data = {
            k: _nudge(k, v) if k in ("temperature", "brightness_pct") else v
            for k, v in hidden.data.items()
        }
        guess = replace(hidden, data=data, clarify=None)
    return replace(task, intents=tuple(guess if i is hidden else i for i in task.intents))


async def test_qt3_requests_leave_out_what_a_literal_agent_would_need(
    sample: list[BenchInstance],
) -> None:
    guessed = 0
    for instance in of_type(sample, "QT3"):
        blueprint, task = instance.blueprint, instance.blueprint.task
        hidden = next((i for i in task.intents if i.clarify), task.intents[0])
        home = blueprint.home()
        said = request_text(blueprint)
        if hidden.clarify == "entity":
            room = home.area_of(hidden.entity_id)
            fits = [
                e
                for e in home.entities
                if e.startswith(f"{hidden.domain}.") and home.area_of(e) == room
            ]
            assert len(fits) > 1  # several devices fit what the user said
        else:
            assert not any(says(said, n) for n in value_numbers(hidden)), (instance.id, said)
            fits = []
        if hidden.clarify == "entity" or {"temperature", "brightness_pct"} & set(hidden.data):
            careless = TeacherPolicy(literal(task, hidden, sorted(fits)), 0)
            assert not solved(await play(blueprint, careless)), instance.id
            guessed += 1
        assert solved(await play(blueprint, TeacherPolicy(task, 0))), instance.id
    assert guessed >= 3


async def test_the_teacher_solves_every_sampled_instance_with_other_seeds(
    sample: list[BenchInstance],
) -> None:
    for instance in sample:
        trajectory = await play(instance.blueprint, TeacherPolicy(instance.blueprint.task, 1), 1)
        assert solved(trajectory), instance.id


# --- the frozen versions --------------------------------------------------------------------------

V1_SHA256 = "9c258b408962d0659048eed8f0f290415a3ff52700dac9fc381ba937895d1ae0"


def test_v1_is_frozen_byte_for_byte(tmp_path: Path) -> None:
    """v1 is written from the shipped rows, whatever the flywheel now does: the same bytes of
    instances.jsonl as generated at c8fe3a0, each instance's home and conditions still made."""
    assert FROZEN == ("v1",)
    result = CliRunner().invoke(main, ["bench", "generate", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    data = (tmp_path / "instances.jsonl").read_bytes()
    assert hashlib.sha256(data).hexdigest() == V1_SHA256
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["version"] == "v1"
    assert manifest["count"] == SIZE
    assert manifest["counts"] == {"QT1": 336, "QT2": 336, "QT3": 336, "QT4": 335, "QT5": 335}
    assert manifest["generator"] == "4ddcbbf1b041ec14"
    loaded = load_bench(tmp_path)
    assert len(loaded) == SIZE
    for instance in loaded[::97]:  # the homes the rows name are still the homes they were
        home = instance.blueprint.home()
        assert instance.blueprint.task.conditions(home)
    assert "--version v1" in (tmp_path / "README.md").read_text()


def test_frozen_versions_refuse_what_they_cannot_be(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["bench", "generate", "--count", "5", "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert "frozen" in result.output
    assert not tmp_path.joinpath("instances.jsonl").exists()
    with pytest.raises(BenchError, match="no frozen version"):
        frozen_rows("v0")
    with pytest.raises(BenchError, match="no frozen version"):
        write_frozen(tmp_path, VERSION)

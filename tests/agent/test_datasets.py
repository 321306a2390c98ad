"""Datasets: chat rows that load with `datasets` from JSONL and Parquet alike and go straight into
TRL's SFTTrainer, blueprint rows that read back, and cards that count what is there."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent.cli import main
from agent.flywheel.blueprints import Blueprint
from agent.flywheel.datasets import (
    TOOLS_JSON,
    blueprint_record,
    read_rows,
    recovers,
    repeats_call,
    summarise,
    synthesis_record,
    write_dataset,
)
from agent.flywheel.runner import read_records


@cache
def rows() -> list[dict[str, Any]]:
    """Linear synthesis over a few seeds: the verified trajectories as rows."""
    return [row for s in range(6) for row in synthesis_record(s, "linear", 0.2)["rows"]]


def test_a_row_is_a_chat_with_tool_calls_and_results() -> None:
    row = rows()[0]
    roles = [message["role"] for message in row["messages"]]
    assert roles[:2] == ["system", "user"]
    assert {"assistant", "tool"} <= set(roles)
    assert all(set(m) == {"role", "content", "tool_calls", "name"} for m in row["messages"])
    calls = [c for m in row["messages"] if m["role"] == "assistant" for c in m["tool_calls"] or []]
    assert calls
    assert len(calls) == row["tool_calls"] == len(row["tool_names"])
    for call in calls:
        assert set(call) == {"type", "function"}
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    tools = [m for m in row["messages"] if m["role"] == "tool"]
    assert [m["name"] for m in tools] == row["tool_names"]
    assert json.loads(row["tools"])[0]["function"]["name"] == "list_entities"
    assert row["done"]
    assert row["reward"] > 0
    assert row["id"] == f"{row['seed']}-linear-0"


def test_rows_round_trip_through_jsonl_and_parquet(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    files = write_dataset(tmp_path, "trajectories", rows())
    assert [f.name for f in files] == ["trajectories.jsonl", "trajectories.parquet"]
    assert read_rows(files[0]) == rows()
    from_json = datasets.load_dataset("json", data_files=str(files[0]), split="train")
    from_parquet = datasets.load_dataset("parquet", data_files=str(files[1]), split="train")
    assert from_json.features == from_parquet.features
    assert from_json.to_list() == from_parquet.to_list() == rows()


def test_sft_trainer_takes_the_rows_and_trains_only_on_the_assistant(
    tmp_path: Path, tiny: tuple[Any, Any]
) -> None:
    datasets = pytest.importorskip("datasets")
    trl = pytest.importorskip("trl")
    model, tokenizer = copy.deepcopy(tiny)  # training changes it; other tests share the fixture
    row = min(rows(), key=lambda r: len(json.dumps(r)))
    write_dataset(tmp_path, "trajectories", [row, row])
    dataset = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "trajectories.parquet"), split="train"
    )
    config = trl.SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=1,
        max_length=None,
        assistant_only_loss=True,
        report_to=[],
        use_cpu=True,
        save_strategy="no",
    )
    trainer = trl.SFTTrainer(
        model=model, args=config, train_dataset=dataset, processing_class=tokenizer
    )
    example = trainer.train_dataset[0]
    # SFTTrainer turns the assistant mask into labels: -100 where no loss is taken.
    ids, labels = example["input_ids"], example["labels"]
    trained = tokenizer.decode([t for t, label in zip(ids, labels, strict=True) if label != -100])
    ignored = tokenizer.decode([t for t, label in zip(ids, labels, strict=True) if label == -100])
    assistant = [m for m in row["messages"] if m["role"] == "assistant"]
    assert assistant[-1]["content"] in trained
    assert json.loads(assistant[0]["tool_calls"][0]["function"]["arguments"]) is not None
    assert '<tool_call>\n{"name": "' + assistant[0]["tool_calls"][0]["function"]["name"] in trained
    user = next(m["content"] for m in row["messages"] if m["role"] == "user")
    assert user in ignored
    assert user not in trained
    assert "<tool_response>" in ignored
    assert "<tool_response>" not in trained
    assert "# Tools" in ignored  # the tools column reached the chat template
    assert trainer.train().global_step == 1


def test_blueprint_rows_read_back() -> None:
    record = next(r for r in (blueprint_record(s, 0.2) for s in range(5)) if r["rows"])
    row = record["rows"][0]
    blueprint = Blueprint.from_json(row["blueprint"])
    assert blueprint.seed == row["seed"] == record["seed"]
    assert row["query_type"] == blueprint.query_type.label
    assert row["domains"] == sorted({i.domain for i in blueprint.task.intents})
    rejected = next(r for r in (blueprint_record(s, 0.2) for s in range(20)) if not r["rows"])
    assert rejected["rejected"] in {"executability", "boundary", "consistency", "scene"}


def test_the_cli_writes_blueprints_then_trajectories_with_cards_that_count(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    made = runner.invoke(
        main, ["data", "blueprints", "--count", "12", "--workers", "1", "-o", str(tmp_path / "bp")]
    )
    assert made.exit_code == 0, made.output
    assert "blueprints/s" in made.output
    blueprints = read_rows(tmp_path / "bp" / "blueprints.jsonl")
    records = read_records(tmp_path / "bp")
    assert len(records) == 12
    assert len(blueprints) == sum(len(r["rows"]) for r in records) > 0
    args = ["data", "synthesize", "--blueprints", str(tmp_path / "bp"), "--method", "linear"]
    synthesized = runner.invoke(main, [*args, "--workers", "1", "-o", str(tmp_path / "sft")])
    assert synthesized.exit_code == 0, synthesized.output
    sft = read_rows(tmp_path / "sft" / "trajectories.jsonl")
    assert {r["seed"] for r in sft} <= {r["seed"] for r in blueprints}
    card = (tmp_path / "sft" / "README.md").read_text()
    assert "data_files: trajectories.parquet" in card
    assert f"| rows | {len(sft)} |" in card
    assert f"| blueprints | {len({r['seed'] for r in sft})} |" in card
    assert f"| linear | {len(sft)} (100.0%) |" in card
    assert "`done` says whether it met its goal conditions" in card
    assert f"{len(sft)} trajectories ({len(sft)} verified)" in synthesized.output  # linear: all
    calls = [r["tool_calls"] for r in sft]
    assert f"| max | {max(calls)} |" in card
    bp_card = (tmp_path / "bp" / "README.md").read_text()
    rejected = sum(r["rejected"] == "executability" for r in records)
    assert f"| executability | {rejected} ({100 * rejected / 12:.1f}%) |" in bp_card
    assert f"| kept | {len(blueprints)} (" in bp_card
    stats = runner.invoke(main, ["data", "stats", str(tmp_path / "sft")])
    assert stats.exit_code == 0, stats.output
    assert "median" in stats.output  # tool calls per trajectory
    assert "distinct-2 (samples of 100)" in stats.output  # the users' language
    assert "most meant service" in (tmp_path / "bp" / "README.md").read_text()
    if any(r["hidden"] for r in sft):  # ambiguous requests: the teacher's leaks are counted
        assert "| hidden target read first | 0 |" in card


def test_summary_counts_query_types_and_domains() -> None:
    sections = {s.title: dict(s.rows) for s in summarise(rows())}
    assert sections["size"]["rows"] == str(len(rows()))
    by_clarity = sections["by clarity"]
    assert sum(int(v.split()[0]) for v in by_clarity.values()) == len(rows())
    domains = sections["by domain (share of rows)"]
    light = sum("light" in r["domains"] for r in rows())
    assert domains.get("light", "0").startswith(str(light))
    assert all(r["tools"] == TOOLS_JSON for r in rows())
    kinds = sections["by task type"]
    assert sum(int(v.split()[0]) for v in kinds.values()) == len(rows())
    assert all(kinds[r["task_type"]] != "0 (0.0%)" for r in rows())


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"function": {"name": name, "arguments": json.dumps(arguments)}}


def turn(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": list(calls)}


def result(success: bool) -> dict[str, Any]:
    return {"role": "tool", "content": json.dumps({"success": success})}


USER = {"role": "user", "content": "turn it on"}
REPLY = {"role": "assistant", "content": "Done.", "tool_calls": None}
WRONG = call("call_service", domain="light", service="turn_on", brightness=300)
RIGHT = call("call_service", domain="light", service="turn_on", brightness=100)
LOOK = call("get_state", entity_id="light.hall")


@pytest.mark.parametrize(
    ("messages", "recovered", "repeated"),
    [
        ([USER, turn(WRONG), result(False), turn(RIGHT), result(True), REPLY], 1, 0),
        ([USER, turn(WRONG), result(False), turn(WRONG), result(False), REPLY], 0, 1),
        ([USER, turn(LOOK, WRONG), result(True), result(False), turn(LOOK), result(True)], 1, 1),
        ([USER, turn(LOOK), result(True), turn(RIGHT), result(True), REPLY], 0, 0),
        ([USER, turn(LOOK), result(True), REPLY, USER, turn(LOOK), result(True), REPLY], 0, 0),
        ([USER, turn(WRONG), result(False), REPLY, USER, turn(WRONG), result(False)], 0, 0),
    ],
    ids=["corrects", "repeats-the-failure", "looks-twice", "no-failure", "asked-again", "retold"],
)
def test_recovery_is_a_failed_call_not_made_again(
    messages: list[dict[str, Any]], recovered: int, repeated: int
) -> None:
    """A result pairs with its message's calls in order; a call repeated after the user spoke
    again is no loop."""
    assert recovers(messages) is bool(recovered)
    assert repeats_call(messages) is bool(repeated)


def test_a_teacher_that_makes_mistakes_makes_data_that_recovers(tmp_path: Path) -> None:
    args = ["data", "synthesize", "--count", "8", "--method", "linear", "--mistake-rate", "1"]
    made = CliRunner().invoke(main, [*args, "--workers", "1", "-o", str(tmp_path / "sft")])
    assert made.exit_code == 0, made.output
    sft = read_rows(tmp_path / "sft" / "trajectories.jsonl")
    recovering = [row for row in sft if recovers(row["messages"])]
    assert len(recovering) >= len(sft) // 2, [r["query_type"] for r in sft]
    assert not any(repeats_call(row["messages"]) for row in recovering)
    card = (tmp_path / "sft" / "README.md").read_text()
    assert f"| that recover (not repeating the failed call) | {len(recovering)} |" in card
    config = json.loads((tmp_path / "sft" / "manifest.json").read_text())
    assert config["mistake_rate"] == 1


def test_cli_errors_are_clear(tmp_path: Path) -> None:
    runner = CliRunner()
    neither = runner.invoke(main, ["data", "synthesize", "-o", str(tmp_path / "x")])
    assert neither.exit_code == 2
    assert "exactly one of --blueprints DIR and --count N" in neither.output
    (tmp_path / "empty").mkdir()
    bad = runner.invoke(main, ["data", "stats", str(tmp_path / "empty")])
    assert bad.exit_code == 2
    assert "holds 0 .jsonl files" in bad.output
    (tmp_path / "other").mkdir()
    for row in ('{"seed": 1}', '{"seed": 1, "blueprint": "{\\"task\\": 3}"}', "[1]"):
        (tmp_path / "other" / "rows.jsonl").write_text(row + "\n")
        other = runner.invoke(main, ["data", "stats", str(tmp_path / "other")])
        assert other.exit_code == 2, other.output
        assert "a row is not one `homeflow data` writes" in other.output
    not_blueprints = runner.invoke(
        main, ["data", "synthesize", "--blueprints", str(tmp_path / "empty"), "-o", "y"]
    )
    assert not_blueprints.exit_code == 2
    assert "not a blueprint dataset" in not_blueprints.output

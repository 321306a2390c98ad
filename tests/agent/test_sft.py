"""SFT: a run config that names its mistakes, three variant configs with equal sample counts, and
training on real MCTS-Flow rows that lowers the loss on a fixed batch."""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from agent.cli import main
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.datasets import synthesis_record, write_dataset
from agent.policies.local import LocalPolicy
from agent.training.common import ADAPTER, ADAPTER_FILES, TrainingError, read_metrics
from agent.training.sft import (
    MIX,
    build_trainer,
    load_config,
    make_run,
    read_dataset,
    sample_rows,
    training_chats,
    trimming,
)

from .conftest import tiny_qwen3

CONFIGS = Path(__file__).parents[2] / "configs"


@cache
def rows() -> list[dict[str, Any]]:
    """The shortest verified MCTS-Flow trajectories of the first studios' blueprints (a small
    home keeps the prompt short)."""
    studios = [s for s in range(80) if _studio(s)][:4]
    found = [row for s in studios for row in synthesis_record(s, "mcts", 0.2)["rows"]]
    return sorted(found, key=lambda r: len(json.dumps(r)))[:6]


@cache
def dialogue() -> dict[str, Any]:
    """The shortest verified trajectory of a studio's blueprint with two replies or more (an
    answer to a clarifying question, a follow-up)."""
    found = [
        row
        for s in range(80)
        if _studio(s)
        for row in synthesis_record(s, "mcts", 0.2)["rows"]
        if sum(map(is_reply, row["messages"])) >= 2
    ]
    return min(found, key=lambda r: len(json.dumps(r)))


def _studio(seed: int) -> bool:
    found = make_blueprint(seed)
    return isinstance(found, Blueprint) and found.home_type == "studio"


@pytest.fixture(scope="module")
def small() -> tuple[Any, Any]:
    """(model, tokenizer): conftest's tiny Qwen3 over a BPE learnt from these rows, so that a
    trajectory is ~3k tokens rather than conftest's ~18k and 20 steps take seconds."""
    return tiny_qwen3([json.dumps(r) for r in rows()], 2000)


def dataset(tmp_path: Path) -> Path:
    directory = tmp_path / "mcts"
    write_dataset(directory, "trajectories", rows())
    return directory


def prompt_tokens(policy: LocalPolicy, tokenizer: Any, row: dict[str, Any]) -> int:
    """The tokens of a row's prompt up to its first reply."""
    first = next(i for i, m in enumerate(row["messages"]) if m["role"] == "assistant")
    text = policy.prompt(row["messages"][:first], json.loads(row["tools"]))
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def batch_loss(trainer: Any, examples: list[Any]) -> float:
    """The model's loss on `examples`, collated as in training (assistant tokens only)."""
    import torch

    batch = trainer.data_collator(examples)
    trainer.model.eval()
    with torch.no_grad():
        out = trainer.model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            labels=batch["labels"],
        )
    return float(out.loss)


def test_sft_lowers_the_loss_on_a_fixed_batch(tmp_path: Path, small: tuple[Any, Any]) -> None:
    pytest.importorskip("trl")
    model, tokenizer = copy.deepcopy(small)  # training changes it
    run = make_run(
        {
            "dataset": str(dataset(tmp_path)),
            "output": str(tmp_path / "out"),
            "max_samples": 4,
            "max_steps": 20,
            "learning_rate": 1e-2,
            "batch_size": 2,
            "max_length": None,
        }
    )
    trainer = build_trainer(run, model.train(), tokenizer, sample_rows(run, read_dataset(run)))
    assert len(trainer.train_dataset) == 4
    fixed = [trainer.train_dataset[i] for i in range(2)]
    before = batch_loss(trainer, fixed)
    assert trainer.train().global_step == 20
    after = batch_loss(trainer, fixed)
    assert after < 0.8 * before, (before, after)
    logged = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").open()]
    losses = [line["loss"] for line in logged if "loss" in line]
    assert len(losses) == 20
    assert [line["step"] for line in logged if "loss" in line] == list(range(1, 21))


def cli_config(tmp_path: Path, small: tuple[Any, Any], **settings: Any) -> Path:
    """A run config for the small model, saved as an HF folder, in batches of 2."""
    model, tokenizer = small
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    paths = {"model": tmp_path / "tiny", "dataset": dataset(tmp_path), "output": tmp_path / "out"}
    config = tmp_path / "sft.yaml"
    settings = {key: str(path) for key, path in paths.items()} | {"batch_size": 2} | settings
    config.write_text(yaml.safe_dump(settings))
    return config


def test_the_cli_trains_an_hf_folder_and_saves_it_with_its_metrics(
    tmp_path: Path, small: tuple[Any, Any]
) -> None:
    pytest.importorskip("trl")
    config = cli_config(tmp_path, small, max_samples=2)
    result = CliRunner().invoke(main, ["train", "sft", "--config", str(config), "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert "mean training loss" in result.output
    assert (tmp_path / "out" / "model.safetensors").exists()
    assert (tmp_path / "out" / "tokenizer.json").exists()
    logged = [json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").open()]
    assert sum("loss" in line for line in logged) == 2
    assert all(line["tokens_per_s"] > 0 for line in logged if "loss" in line)
    assert "tok/s" in result.output
    assert LocalPolicy.from_pretrained(tmp_path / "out").compact  # prompted as it was trained
    drawn = json.loads((tmp_path / "out" / MIX).read_text())
    assert drawn["rows"] == 2
    assert sum(drawn["drawn"]["task_type"].values()) == 2
    assert "training mix (2 rows)" in result.output


def test_a_base_model_without_a_chat_template_trains_on_chatml(
    tmp_path: Path, small: tuple[Any, Any]
) -> None:
    """Any causal LM: a tokenizer without a chat template trains on TRL's ChatML training
    template, and the saved model is prompted with it."""
    pytest.importorskip("trl")
    model, tokenizer = copy.deepcopy(small)
    tokenizer.chat_template = None
    config = cli_config(tmp_path, (model, tokenizer), max_samples=2)
    result = CliRunner().invoke(main, ["train", "sft", "--config", str(config), "--max-steps", "1"])
    assert result.exit_code == 0, result.output
    trained = LocalPolicy.from_pretrained(tmp_path / "out")
    assert trained.prompt([{"role": "user", "content": "hi"}], []).startswith("<|im_start|>")


def test_a_crashed_run_continues_from_its_last_checkpoint(
    tmp_path: Path, small: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """save_steps 1: a run that dies in its second step trains only that step when run again,
    past a checkpoint cut off mid-save and a metrics line cut short; a changed config is not
    continued from the checkpoint."""
    from trl import SFTTrainer  # type: ignore[attr-defined]

    steps: list[int] = []
    training_step = SFTTrainer.training_step

    def dies_once_in_step_2(self: Any, *args: Any, **kwargs: Any) -> Any:
        steps.append(self.state.global_step)
        if steps == [0, 1]:
            raise RuntimeError("power cut")
        return training_step(self, *args, **kwargs)

    monkeypatch.setattr(SFTTrainer, "training_step", dies_once_in_step_2)
    config = cli_config(tmp_path, small, max_samples=4, save_steps=1)
    command = ["train", "sft", "--config", str(config)]
    assert isinstance(CliRunner().invoke(main, command).exception, RuntimeError)
    assert (tmp_path / "out" / "checkpoint-1").is_dir()
    (tmp_path / "out" / "checkpoint-2").mkdir()  # the power cut came while saving step 2
    (tmp_path / "out" / "checkpoint-2" / "model.safetensors").write_bytes(b"\0" * 8)
    with (tmp_path / "out" / "metrics.jsonl").open("a") as metrics:
        metrics.write('{"step": 2, "lo')
    changed = cli_config(tmp_path, small, max_samples=4, save_steps=1, learning_rate=1e-3)
    refused = CliRunner().invoke(main, ["train", "sft", "--config", str(changed)])
    assert refused.exit_code == 2, refused.output  # a usage error
    assert "learning_rate: 5e-05 -> 0.001" in refused.output
    assert steps == [0, 1]  # nothing trained
    config = cli_config(tmp_path, small, max_samples=4, save_steps=2)  # how it runs may change
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "continuing from" in result.output
    assert "checkpoint-1" in result.output
    assert steps == [0, 1, 1]
    logged = read_metrics(tmp_path / "out" / "metrics.jsonl")
    assert [line["step"] for line in logged if "loss" in line] == [1, 2]


def test_a_model_trains_on_the_prompts_it_will_see(small: tuple[Any, Any]) -> None:
    """Every assistant turn of a training chat follows exactly the text LocalPolicy prompts with
    at that point of the conversation."""
    _, tokenizer = small
    for compact in (True, False):
        policy = LocalPolicy(small[0], tokenizer, compact=compact)
        row = rows()[0]
        (chat,) = training_chats([row], policy)
        tools = json.loads(row["tools"])
        rendered = tokenizer.apply_chat_template(
            chat["messages"], tools=chat.get("tools"), tokenize=False
        )
        turns = [i for i, m in enumerate(row["messages"]) if m["role"] == "assistant"]
        for turn in turns:
            assert rendered.startswith(policy.prompt(row["messages"][:turn], tools))


def test_the_three_variant_configs_load_with_equal_sample_counts() -> None:
    runs = {v: load_config(CONFIGS / f"sft_{v}.yaml") for v in ("roleplay", "linear", "mcts")}
    assert len({r.max_samples for r in runs.values()}) == 1
    assert next(iter(runs.values())).max_samples is not None
    assert len({r.dataset for r in runs.values()}) == 3
    assert all(r.model is None and r.lora is None for r in runs.values())
    for model, loaded in (("~/models/base", f"{Path.home()}/models/base"), ("org/lm", "org/lm")):
        settings = {"dataset": "~/data", "output": "~/out", "model": model}
        assert make_run(settings).model == loaded  # a folder, ~ allowed, or a hub id


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"lerning_rate": 1e-4}, "unknown keys ['lerning_rate']"),
        ({"lora": {"rank": 8}}, "lora: unknown keys ['rank']"),
        ({"dataset": None}, "config needs dataset"),
        ({"max_samples": 0}, "max_samples must be at least 1"),
        ({"save_steps": -2}, "save_steps must be 0"),
        ({"output": str(CONFIGS / "out")}, "inside the repository"),
        ({"mix": {"task_type": {"QT3": 0.5}}}, "mix needs max_samples"),
        ({"max_samples": 4, "mix": {"tone": {"plain": 0.5}}}, "mix maps facets"),
        ({"max_samples": 4, "mix": {"language": {"de": 1.5}}}, "shares are numbers in"),
        ({"max_samples": 4, "mix": {"recovers": {True: 0.2}}}, "values are strings"),
        ({"max_samples": 4, "mix": {"language": {"de": 0.6, "fr": 0.6}}}, "sum to more than 1"),
    ],
)
def test_bad_configs_are_refused_with_the_fix(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    base = {"dataset": str(tmp_path), "output": str(tmp_path / "out")}
    with pytest.raises(TrainingError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make_run(base | settings)


def test_the_cli_names_a_missing_dataset_and_too_few_rows(tmp_path: Path) -> None:
    config = tmp_path / "sft.yaml"
    runner = CliRunner()
    missing = {"dataset": str(tmp_path / "nowhere"), "output": str(tmp_path / "out")}
    config.write_text(yaml.safe_dump(missing))
    result = runner.invoke(main, ["train", "sft", "--config", str(config)])
    assert result.exit_code == 2
    assert "nowhere is not a directory" in result.output
    few = {"dataset": str(dataset(tmp_path)), "output": str(tmp_path / "out"), "max_samples": 99}
    config.write_text(yaml.safe_dump(few))
    result = runner.invoke(main, ["train", "sft", "--config", str(config)])
    assert result.exit_code == 2
    assert f"has {len(rows())} rows, fewer than max_samples=99" in result.output


def test_lora_trains_the_adapters_and_saves_them_merged_into_a_whole_model(
    tmp_path: Path, small: tuple[Any, Any]
) -> None:
    """The linear layers change (their adapters, merged), embeddings and norms do not, and the
    output loads as any model: no adapter files left for a loader to trip on; they are kept in
    its adapter folder."""
    import torch

    pytest.importorskip("peft")
    settings = {"max_samples": 2, "lora": {"r": 4}, "learning_rate": 1e-2}
    config = cli_config(tmp_path, copy.deepcopy(small), **settings)
    result = CliRunner().invoke(main, ["train", "sft", "--config", str(config), "--max-steps", "2"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out" / "adapter_config.json").exists()
    base = small[0].state_dict()
    trained = LocalPolicy.from_pretrained(tmp_path / "out", dtype="float32").model.state_dict()
    changed = {name for name, weight in trained.items() if not torch.equal(weight, base[name])}
    assert changed
    assert all(name.endswith("proj.weight") for name in changed), changed
    # The adapter is kept beside it, and loaded over its base it is the same model.
    adapter = tmp_path / "out" / ADAPTER
    assert set(ADAPTER_FILES) <= {path.name for path in adapter.iterdir()}
    again = LocalPolicy.from_pretrained(adapter, dtype="float32")
    assert again.compact  # prompted as it was trained
    weights = again.model.state_dict()
    assert weights.keys() == trained.keys()
    assert all(torch.allclose(weights[n], w, atol=1e-6) for n, w in trained.items())


def test_lora_without_peft_says_how_to_install_it(
    tmp_path: Path, small: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("trl")
    monkeypatch.setitem(sys.modules, "peft", None)  # as if not installed: importing it fails
    model, tokenizer = small
    run = make_run({"dataset": str(dataset(tmp_path)), "output": str(tmp_path), "lora": {"r": 4}})
    with pytest.raises(TrainingError, match=r"pip install 'homeflow\[lora\]'"):
        build_trainer(run, model, tokenizer, sample_rows(run, read_dataset(run)))


def with_longer_homes(count: int) -> list[dict[str, Any]]:
    """The first `count` rows, each with 400 more devices in its system prompt (a bigger home)."""
    longer = copy.deepcopy(rows()[:count])
    for row in longer:
        system = row["messages"][0]
        header = "# Home devices (entity id: name)\n"
        assert header in system["content"]
        system["content"] = system["content"].replace(
            header, header + "- light.attic: Attic\n" * 400
        )
    return longer


def test_every_variant_trains_on_exactly_max_samples_rows_that_fit(
    tmp_path: Path, small: tuple[Any, Any]
) -> None:
    """A row whose first reply ends past max_length has no whole turn to learn from: such rows
    are passed over, so the count trained on is max_samples."""
    pytest.importorskip("trl")
    model, tokenizer = small
    policy = LocalPolicy(model, tokenizer, compact=True)
    longer = with_longer_homes(3)
    mixed = [*rows()[:3], *longer]
    cut = max(reply_tokens(policy, tokenizer, row) for row in rows()[:3])
    assert cut < min(reply_tokens(policy, tokenizer, row) for row in longer)  # they miss it
    run = make_run(
        {"dataset": str(dataset(tmp_path)), "output": str(tmp_path), "max_length": cut}
        | {"max_samples": 3}
    )
    chosen = sample_rows(run, mixed, trimming(policy, cut))
    assert len(chosen) == 3
    assert not any("light.attic" in row["messages"][0]["content"] for row in chosen)
    trainer = build_trainer(run, model, tokenizer, chosen)
    assert len(trainer.train_dataset) == 3
    with pytest.raises(TrainingError, match="3 rows whose first reply fits max_length"):
        sample_rows(replace(run, max_samples=4), mixed, trimming(policy, cut))


def reply_tokens(policy: LocalPolicy, tokenizer: Any, row: dict[str, Any]) -> int:
    """The tokens of a row up to its first reply."""
    end = next(i for i, m in enumerate(row["messages"]) if is_reply(m)) + 1
    return tokens(policy, tokenizer, row | {"messages": row["messages"][:end]})


def tokens(policy: LocalPolicy, tokenizer: Any, row: dict[str, Any]) -> int:
    """The tokens of a whole row as `policy` renders it."""
    text = policy.prompt(row["messages"], json.loads(row["tools"]))
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def is_reply(message: dict[str, Any]) -> bool:
    return message["role"] == "assistant" and not message.get("tool_calls")


def test_a_long_row_is_cut_after_a_reply_never_among_its_tool_calls(
    small: tuple[Any, Any],
) -> None:
    """At any max_length a trimmed row ends on a reply: the model never learns that a dialogue
    stops after a tool call. A row that fits is kept to its last reply; one whose first reply
    does not fit is None."""
    model, tokenizer = small
    policy = LocalPolicy(model, tokenizer, compact=True)
    row = dialogue()
    replies = [i + 1 for i, m in enumerate(row["messages"]) if is_reply(m)]
    whole = tokens(policy, tokenizer, row)
    kept = trimming(policy, whole)(row)
    assert kept is not None
    assert kept["messages"] == row["messages"][: replies[-1]]  # not the user's "that's all"
    assert trimming(policy, None)(row) is row
    seen = set()
    for max_length in range(prompt_tokens(policy, tokenizer, row), whole, 25):
        cut = trimming(policy, max_length)(row)
        if cut is None:
            continue
        assert is_reply(cut["messages"][-1])
        assert cut["messages"] == row["messages"][: len(cut["messages"])]
        assert tokens(policy, tokenizer, cut) <= max_length
        seen.add(len(cut["messages"]))
    assert seen
    assert seen < set(replies)  # some cut short, each after a reply
    assert trimming(policy, prompt_tokens(policy, tokenizer, row) - 1)(row) is None


def test_the_mix_sets_each_facets_share_of_the_rows(tmp_path: Path) -> None:
    """Quotas of max_samples by the largest remainder; the values a mix does not list share the
    rest; a mix the rows cannot fill names the quota short of rows."""
    combos = [(lang, kind) for lang in ("en", "de", "fr") for kind in ("QT1", "QT3")] * 4
    pool = [
        dict(rows()[0], id=str(n), language=lang, task_type=kind)
        for n, (lang, kind) in enumerate(combos)
    ]
    base = {"dataset": str(tmp_path), "output": str(tmp_path / "out"), "max_samples": 5}
    run = make_run(base | {"mix": {"language": {"de": 0.4, "en": 0.2}, "task_type": {"QT3": 0.4}}})
    chosen = sample_rows(run, pool)
    assert len(chosen) == 5
    languages = sorted(row["language"] for row in chosen)
    assert languages == ["de", "de", "en", "fr", "fr"]  # fr is the rest: 5 - 2 - 1
    assert sum(row["task_type"] == "QT3" for row in chosen) == 2
    short = make_run(base | {"mix": {"language": {"it": 0.2}}})
    with pytest.raises(TrainingError, match="language=it: 0 of 1"):
        sample_rows(short, pool)


def test_packed_rows_train_on_the_same_assistant_tokens(
    tmp_path: Path, small: tuple[Any, Any]
) -> None:
    """Packing (TRL's, no attention across rows) puts several rows in one sequence and keeps
    the loss on each row's assistant tokens: the packed sequence learns the same tokens."""
    pytest.importorskip("trl")
    model, tokenizer = copy.deepcopy(small)
    settings = {"dataset": str(dataset(tmp_path)), "output": str(tmp_path / "out")}
    settings |= {"max_samples": 2, "max_length": 8192, "batch_size": 2}
    run = make_run(settings)
    chosen = sample_rows(run, read_dataset(run))
    padded = build_trainer(run, model, tokenizer, chosen)
    packed = build_trainer(replace(run, packing=True), model, tokenizer, chosen)
    assert len(packed.train_dataset) == 1  # two rows in one sequence
    assert learnt(packed.train_dataset[0]) == sum(learnt(padded.train_dataset[i]) for i in range(2))


def learnt(example: dict[str, Any]) -> int:
    """The tokens a tokenized example trains on (TRL folds the assistant mask into labels)."""
    return sum(label != -100 for label in example["labels"])

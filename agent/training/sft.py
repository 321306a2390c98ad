"""Supervised fine-tuning on the flywheel's trajectories with TRL's SFTTrainer: a YAML run config,
the loss on assistant turns only, optional LoRA, and the loss of every step logged.

torch, transformers, datasets and trl are imported here only, when a run is built.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import Progress

from agent.flywheel.datasets import DatasetError, Row, dataset_file, read_rows
from agent.policies import PolicyError
from agent.policies.local import load

LORA_HINT = "LoRA needs peft: pip install 'homeflow[lora]' (or pip install peft)"
METRICS = "metrics.jsonl"
# Where a tokenizer's own template cannot mask assistant turns (SmolLM2's ignores tools): TRL's
# ChatML training template with Hermes tool calls, the protocol LocalPolicy prompts in.
FALLBACK_TEMPLATE = "qwen2_5_training.jinja"
_REPO = Path(__file__).resolve().parents[2]


class SFTError(ValueError):
    """A run config or dataset that cannot be trained on; the message says what to fix."""


@dataclass(frozen=True)
class Lora:
    """peft's LoraConfig, the few settings that matter."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"


@dataclass(frozen=True)
class SFTRun:
    """One SFT run. `model` is an HF folder, or None for SmolLM2-135M from its wheel; `max_samples`
    rows are drawn from the dataset with `seed` (the same count for every variant compared);
    `max_steps` > 0 overrides `epochs`."""

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
    seed: int = 0

    def __post_init__(self) -> None:
        """Refuse settings that train nothing or write into the source tree."""
        if self.max_samples is not None and self.max_samples < 1:
            raise SFTError(f"max_samples must be at least 1 or null, got {self.max_samples}")
        if self.epochs <= 0 or self.learning_rate <= 0 or self.batch_size < 1:
            raise SFTError("epochs and learning_rate must be > 0 and batch_size at least 1")
        if self.max_length is not None and self.max_length < 16:
            raise SFTError(f"max_length must be at least 16 or null, got {self.max_length}")
        if (_REPO / ".git").exists() and self.output.resolve().is_relative_to(_REPO):
            raise SFTError(f"output {self.output} is inside the repository; weights go elsewhere")


def load_config(path: Path, **overrides: Any) -> SFTRun:
    """The run in a YAML file, with `overrides` (such as max_steps) applied."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise SFTError(f"Cannot read {path}: {err}") from err
    if not isinstance(raw, dict):
        raise SFTError(f"{path} must hold a mapping of settings")
    return make_run(raw | overrides)


def make_run(raw: Mapping[str, Any]) -> SFTRun:
    """An SFTRun from plain settings, naming any key it does not know."""
    _check_keys(raw, SFTRun, "config")
    for key in ("dataset", "output"):
        if not isinstance(raw.get(key), str):
            raise SFTError(f"config needs {key}: a directory path")
    settings = dict(raw)
    settings["dataset"] = Path(raw["dataset"]).expanduser()
    settings["output"] = Path(raw["output"]).expanduser()
    lora = raw.get("lora")
    if lora is not None:
        if not isinstance(lora, dict):
            raise SFTError("lora must be a mapping (r, alpha, dropout, target_modules) or null")
        _check_keys(lora, Lora, "lora")
        settings["lora"] = Lora(**lora)
    try:
        return SFTRun(**settings)
    except TypeError as err:
        raise SFTError(f"config: {err}") from err


def sample_rows(run: SFTRun) -> list[Row]:
    """The run's rows: `max_samples` of the dataset's, drawn with the run's seed."""
    if not run.dataset.is_dir():
        raise SFTError(f"dataset {run.dataset} is not a directory; make one with `homeflow data`")
    try:
        rows = read_rows(dataset_file(run.dataset))
    except DatasetError as err:
        raise SFTError(str(err)) from err
    if not rows or "messages" not in rows[0]:
        raise SFTError(f"{run.dataset} holds no trajectories (`homeflow data synthesize`)")
    if run.max_samples is None:
        return rows
    if len(rows) < run.max_samples:
        raise SFTError(
            f"{run.dataset} has {len(rows)} rows, fewer than max_samples={run.max_samples}; "
            "synthesize more or lower max_samples for every variant compared"
        )
    return random.Random(run.seed).sample(rows, run.max_samples)


def build_trainer(
    run: SFTRun, model: Any, tokenizer: Any, rows: list[Row], console: Console | None = None
) -> Any:
    """An SFTTrainer for the run on the given model and rows, logging to the console and
    metrics.jsonl."""
    import torch
    from datasets import Dataset  # type: ignore[import-untyped]
    from transformers import PrinterCallback
    from trl import SFTConfig, SFTTrainer  # type: ignore[attr-defined]

    _ensure_training_template(tokenizer)
    dataset = Dataset.from_list([{"messages": r["messages"], "tools": r["tools"]} for r in rows])
    args = SFTConfig(
        output_dir=str(run.output),
        num_train_epochs=run.epochs,
        max_steps=run.max_steps,
        learning_rate=run.learning_rate,
        per_device_train_batch_size=run.batch_size,
        max_length=run.max_length,
        assistant_only_loss=True,
        seed=run.seed,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        disable_tqdm=True,
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),  # TRL's default needs it
    )
    trainer: Any = SFTTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=_peft_config(run.lora),
        callbacks=[_metrics_callback(run.output / METRICS, console or Console())],
    )
    trainer.remove_callback(PrinterCallback)  # the progress bar and metrics.jsonl say it
    if len(trainer.train_dataset) == 0:
        raise SFTError(f"no row keeps an assistant token within max_length={run.max_length}")
    return trainer


def unmark_gguf(model: Any) -> None:
    """Make a model loaded from a GGUF file (SmolLM2's wheel) trainable: transformers dequantises
    its weights to float32 on load but still marks it quantized, which the Trainer refuses."""
    if getattr(model, "hf_quantizer", None) is None:
        return
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def train(run: SFTRun, console: Console | None = None) -> dict[str, float]:
    """Load the run's model, train it, and save it with its tokenizer to the output directory;
    the final training metrics."""
    rows = sample_rows(run)  # the dataset's mistakes before the wait for the model
    try:
        model, tokenizer = load(run.model)
    except PolicyError as err:
        raise SFTError(str(err)) from err
    unmark_gguf(model)
    model.train()
    trainer = build_trainer(run, model, tokenizer, rows, console)
    result = trainer.train()
    trainer.save_model(str(run.output))
    metrics: dict[str, float] = result.metrics
    return metrics


def _check_keys(raw: Mapping[str, Any], kind: type, where: str) -> None:
    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SFTError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")


def _ensure_training_template(tokenizer: Any) -> None:
    """A chat template that marks assistant turns: TRL patches the ones it knows; others get
    FALLBACK_TEMPLATE."""
    import trl
    from trl.chat_template_utils import get_training_chat_template

    try:
        get_training_chat_template(tokenizer)
    except ValueError:
        templates = Path(trl.__file__).parent / "chat_templates"
        tokenizer.chat_template = (templates / FALLBACK_TEMPLATE).read_text(encoding="utf-8")


def _peft_config(lora: Lora | None) -> Any:
    if lora is None:
        return None
    try:
        from peft import LoraConfig  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise SFTError(LORA_HINT) from err
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )


def _metrics_callback(path: Path, console: Console) -> Any:
    """A TrainerCallback that shows a progress bar and appends every log (loss per step) to
    `path` as JSON lines."""
    from transformers import TrainerCallback

    class MetricsLog(TrainerCallback):
        def __init__(self) -> None:
            self.progress = Progress(console=console)
            self.task: Any = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
            self.progress.start()
            self.task = self.progress.add_task("sft", total=state.max_steps)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.progress.update(self.task, completed=state.global_step)

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            line = {"step": state.global_step, "epoch": state.epoch, **(logs or {})}
            with path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(line) + "\n")
            if "loss" in line:
                self.progress.update(self.task, description=f"sft loss {line['loss']:.4f}")

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.progress.stop()

    return MetricsLog()

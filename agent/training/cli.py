"""`homeflow train sft|rl --config FILE`: SFT, then step-wise RL, from a YAML run config."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from . import rl, sft
from .common import METRICS, TrainingError

Command = Callable[..., None]


def config_option(examples: str) -> Callable[[Command], Command]:
    """--config, the run's YAML file, with the bundled configs of its kind as examples."""
    return click.option(
        "--config",
        "config_path",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help=f"The run's YAML config ({examples}).",
    )


max_steps_option = click.option(
    "--max-steps", type=click.IntRange(min=1), default=None, help="Stop after N optimizer steps."
)


@click.group()
def train() -> None:
    """Train agents: SFT on verified trajectories, then step-wise RL in the twin."""


@train.command("sft")
@config_option("configs/sft_*.yaml")
@max_steps_option
def sft_command(config_path: Path, max_steps: int | None) -> None:
    """Fine-tune a causal LM on a flywheel dataset, loss on assistant turns only; the loss of
    every step goes to OUTPUT/metrics.jsonl and the model to OUTPUT."""
    _run(sft, config_path, max_steps, "mean training loss", "train_loss")


@train.command("rl")
@config_option("configs/rl_*.yaml")
@max_steps_option
def rl_command(config_path: Path, max_steps: int | None) -> None:
    """Step-wise RLVE from an SFT model: episodes with a simulated user in the twin, actions
    sampled in groups at the same state and rewarded by the verifier, the auditor and the code
    and turn checks (GRPO, TRL); rewards, KL and entropy of every step go to
    OUTPUT/metrics.jsonl and the model to OUTPUT. Scale out with `accelerate launch` (see
    docs/scale_out.md)."""
    _run(rl, config_path, max_steps, "mean loss", "train_loss")


def _run(kind: Any, config_path: Path, max_steps: int | None, label: str, key: str) -> None:
    overrides = {} if max_steps is None else {"max_steps": max_steps}
    console = Console()
    try:
        run = kind.load_config(config_path, **overrides)
        metrics = kind.train(run, console)
    except TrainingError as err:
        raise click.UsageError(str(err)) from err
    console.print(
        f"{label} {metrics.get(key, float('nan')):.4f}; model and {METRICS} in {run.output}"
    )

"""`homeflow train`: SFT (and, to come, step-wise RL) from a YAML run config."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from . import sft


@click.group()
def train() -> None:
    """Train agents: SFT on verified trajectories, then step-wise RL in the twin."""


@train.command("sft")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The run's YAML config (configs/sft_*.yaml).",
)
@click.option("--max-steps", type=click.IntRange(min=1), default=None, help="Stop after N steps.")
def sft_command(config_path: Path, max_steps: int | None) -> None:
    """Fine-tune a causal LM on a flywheel dataset, loss on assistant turns only; the loss of
    every step goes to OUTPUT/metrics.jsonl and the model to OUTPUT."""
    overrides = {} if max_steps is None else {"max_steps": max_steps}
    console = Console()
    try:
        run = sft.load_config(config_path, **overrides)
        metrics = sft.train(run, console)
    except sft.SFTError as err:
        raise click.UsageError(str(err)) from err
    loss = metrics.get("train_loss", float("nan"))
    console.print(f"mean training loss {loss:.4f}; model and {sft.METRICS} in {run.output}")

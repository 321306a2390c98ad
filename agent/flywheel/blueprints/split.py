"""The seed split: SmartHome-Bench's seeds are never drawn for training, nor training's for it."""

from __future__ import annotations

from ...errors import AgentError

# Seeds reserved for SmartHome-Bench (agent.bench): the flywheel never draws them, and the bench
# draws nothing else. A blueprint's profile and home come from its seed, so they are apart too.
BENCH_SEEDS = range(2**40, 2**41)


class SplitError(AgentError, ValueError):
    """A seed from the other side of the training/benchmark split."""


def check_split(*seeds: int, bench: bool = False) -> None:
    """Refuse benchmark seeds for training, or training seeds for the benchmark (the first
    one on the wrong side is named)."""
    for seed in seeds:
        if (seed in BENCH_SEEDS) != bench:
            side = "the benchmark's" if bench else "training"
            raise SplitError(f"seed {seed} is not for {side} use (bench seeds: {BENCH_SEEDS})")

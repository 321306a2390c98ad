"""The training recipe on one GPU, prepared for the day a machine has one: SFT from a run config on
a flywheel dataset, then the trained model on SmartHome-Bench and on the Assist-format cases, with
the throughput and the scores printed as markdown.

    .venv/bin/python bench/gpu_run.py --data DATASET [--config configs/sft_mcts.yaml]
        [--bench smarthome-bench-v2] [--cases agent/bench/external] [--work DIR]
        [--max-steps N] [--subset 3]

The same recipe as on the CPU (the config, the data, bfloat16 where the device multiplies it:
agent.training.common.precision_args, agent.policies.local.bf16_fast), with TRL's generation;
everything goes to --work (never the repository), and a stage whose output exists is skipped, so
a run that was cut off continues. tests/agent/test_gpu_run.py runs it on the CPU with a tiny
model's config. Weights, wheels and the benchmark must already be on the machine: nothing is
downloaded.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
from training_run import LIMITS, homeflow  # the CPU run's evaluation limits (bench/)

from agent.bench.evaluate import OVERALL, RESULTS
from agent.bench.instances import SPLITS
from agent.policies.local import bf16_fast
from agent.training.common import METRICS, read_metrics
from agent.training.sft import load_config, train


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="A trajectory dataset.")
    parser.add_argument("--config", type=Path, default=Path("configs/sft_mcts.yaml"))
    parser.add_argument("--bench", type=Path, help="A SmartHome-Bench folder to evaluate on.")
    parser.add_argument("--cases", type=Path, help="A folder of Assist-format cases.")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache/homeflow/gpu_run")
    parser.add_argument("--max-steps", type=int, help="The config's max_steps, overridden.")
    parser.add_argument("--subset", type=int, default=3, help="Bench instances per type.")
    args = parser.parse_args()
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU (the CPU)"
    print(f"device: {device}; bfloat16: {bf16_fast()}\n")
    model = args.work / "sft"
    rows = [_train(args, model)]
    if args.bench is not None:
        limits = ["--subset", str(args.subset), *LIMITS]
        rows.append(_evaluate(args.bench, model, args.work / "bench", limits))
    if args.cases is not None:
        rows.append(_evaluate(args.cases, model, args.work / "cases", []))
    print("| stage | what | seconds |")
    print("|---|---|---:|")
    for stage, what, seconds in rows:
        print(f"| {stage} | {what} | {seconds:.0f} |")


def _train(args: argparse.Namespace, output: Path) -> tuple[str, str, float]:
    """SFT as the config says, on `--data`, into `output` (skipped once a model is saved there):
    the report's row, with the median training throughput."""
    overrides: dict[str, Any] = {"dataset": str(args.data), "output": str(output)}
    if args.max_steps is not None:
        overrides["max_steps"] = args.max_steps
    run = load_config(args.config, **overrides)
    started = time.perf_counter()
    if not (output / "config.json").is_file():
        train(run)
    seconds = time.perf_counter() - started
    logs = read_metrics(output / METRICS)
    speeds = [log["tokens_per_s"] for log in logs if "tokens_per_s" in log]
    steps = max((log["step"] for log in logs), default=0)
    speed = f", {statistics.median(speeds):.0f} tokens/s (median)" if speeds else ""
    return "SFT", f"{steps} steps{speed}", seconds


def _evaluate(folder: Path, model: Path, output: Path, extra: list[str]) -> tuple[str, str, float]:
    """The trained model on a benchmark or a folder of cases, with guided decoding (the chat's
    setting), resuming where a cut-off run stopped: the report's row, with success per split
    and overall, and the generation's tokens per second."""
    command = homeflow("bench", "run", str(folder), "--guided", "--policy", f"local:{model}")
    command += ["--workers", "1", "-o", str(output), *extra]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    seconds = time.perf_counter() - started
    summary = json.loads((output / RESULTS).read_text(encoding="utf-8"))["summary"]
    shown = [
        f"{name} {100 * summary[name]['success']:.1f}%"
        for name in (*SPLITS.values(), OVERALL)
        if name in summary
    ]
    overall = summary[OVERALL]
    if overall["latency_s"]:
        shown.append(f"{overall['output_tokens'] / overall['latency_s']:.0f} tokens/s generated")
    return f"eval {folder.name}", ", ".join(shown), seconds


if __name__ == "__main__":
    main()

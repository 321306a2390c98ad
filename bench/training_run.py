"""The measured training run of issue 9 on one CPU: SmolLM2-135M base -> SFT on MCTS-Flow data ->
step-wise RL, beside SFT on role-play data with the same sample count, each evaluated on the same
fixed SmartHome-Bench subset.

Every stage is a `homeflow` command run in a subprocess and skipped once its output exists, so an
interrupted run continues where it stopped (the evaluations resume per instance). Work goes to
--work (weights, datasets, trajectories: never into the repository); each evaluation's results,
the comparison table with paired tests, the per-type bar chart and the training curves go to
--report (committed).

    .venv/bin/python bench/training_run.py [--work DIR] [--report docs/training]

The budget is set by the constants below, sized for 2 CPU cores, as measured there: 1.5-2.5 min
per SFT step of 4 rows at 2,048 tokens; about an hour per RL step of 2 episodes and 8 actions
(sequences of ~6k tokens, forward and backward on one core); per benchmark instance, about 25
core-seconds for the base model and 50 for a trained one, which keeps calling tools up to the
limit. That is 10-15 hours in all, over several sittings: every stage resumes.

`--plan` prints the commands without running them; `--only` runs some stages, so that
independent ones (the RL training and the other evaluations) can run side by side:

    .venv/bin/python bench/training_run.py --only "data rl" rl &
    .venv/bin/python bench/training_run.py --only "eval base" "eval sft_roleplay" "eval sft_mcts"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from agent.bench.evaluate import RESULTS
from agent.bench.report import shareable
from agent.training.common import METRICS, read_metrics
from twin.atomic import write_text

BENCH_SEED_COUNT = 500  # blueprint seeds synthesised per SFT dataset
SFT = {"max_samples": 96, "epochs": 1, "batch_size": 4, "max_length": 2048, "learning_rate": 2e-4}
SFT |= {"save_steps": 4}  # a stopped SFT stage continues from its last 4 steps
RL_SEEDS = 1_000_000  # the RL blueprints' first seed, apart from the SFT data's
RL = {
    "max_steps": 2,
    "episodes_per_step": 2,
    "num_generations": 4,
    "learning_rate": 1e-5,
    "max_tool_calls": 4,  # shorter episodes, shorter trained sequences (8 calls passed 8k tokens)
    "max_new_tokens": 128,  # a tool call takes 30-80
    "save_steps": 1,  # a stopped run continues from its last step
}
SUBSET = 40  # the first N instances of each of the five task types: 200
LIMITS = ["--max-turns", "3", "--max-tool-calls", "8"]
MODELS = ("base", "sft_roleplay", "sft_mcts", "rl")


def homeflow(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent.cli", *args]


def stages(work: Path, bench: Path) -> list[tuple[str, Path, list[str]]]:
    """(name, the output that marks it done, command), in order."""
    out: list[tuple[str, Path, list[str]]] = []
    for method in ("mcts", "roleplay"):
        data = work / "data" / method
        count = str(BENCH_SEED_COUNT)
        out.append(
            (
                f"data {method}",
                data / "README.md",
                homeflow(
                    "data", "synthesize", "--count", count, "--method", method, "-o", str(data)
                ),
            )
        )
        config = write_config(
            work / "configs" / f"sft_{method}.yaml",
            {"dataset": str(data), "output": str(work / "sft" / method), "seed": 0} | SFT,
        )
        out.append(
            (
                f"sft {method}",
                work / "sft" / method / "homeflow.json",
                homeflow("train", "sft", "--config", str(config)),
            )
        )
    paths = {
        "base": "local",
        "sft_roleplay": f"local:{work / 'sft' / 'roleplay'}",
        "sft_mcts": f"local:{work / 'sft' / 'mcts'}",
        "rl": f"local:{work / 'rl'}",
    }
    for name in MODELS:
        if name == "rl":
            blueprints = work / "data" / "rl"
            make = ("--count", "200", "--seed", str(RL_SEEDS), "-o", str(blueprints))
            out.append(("data rl", blueprints / "README.md", homeflow("data", "blueprints", *make)))
            settings = {
                "model": str(work / "sft" / "mcts"),
                "blueprints": str(blueprints),
                "output": str(work / "rl"),
                "seed": 0,
            }
            rl_config = write_config(work / "configs" / "rl.yaml", settings | RL)
            done = work / "rl" / "homeflow.json"
            out.append(("rl", done, homeflow("train", "rl", "--config", str(rl_config))))
        results = work / "eval" / name
        command = homeflow(
            "bench",
            "run",
            str(bench),
            "--policy",
            paths[name],
            "--subset",
            str(SUBSET),
            "--guided",
            *LIMITS,
            "--workers",
            "2",
            "-o",
            str(results),
        )
        out.append((f"eval {name}", results / "results.json", command))
    return out


def write_config(path: Path, settings: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, yaml.safe_dump(settings, sort_keys=False))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("~/.cache/homeflow/measured").expanduser(),
        help="where the data, models and evaluations go (default: %(default)s)",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=Path("docs/training"),
        help="where the results, table, charts and curves go (default: %(default)s)",
    )
    parser.add_argument("--plan", action="store_true", help="print the commands and stop")
    parser.add_argument(
        "--only", nargs="+", metavar="STAGE", help="run only these stages (no report)"
    )
    args = parser.parse_args()
    bench = args.work / "smarthome-bench-v1"
    todo = [
        ("bench", bench / "manifest.json", homeflow("bench", "generate", "-o", str(bench))),
        *stages(args.work, bench),
    ]
    if args.only:
        unknown = set(args.only) - {name for name, _, _ in todo}
        if unknown:
            parser.error(f"no stage {sorted(unknown)}; --plan lists them")
        todo = [stage for stage in todo if stage[0] in args.only]
    # Evaluation workers share the 2 cores: one thread each.
    env = os.environ | {"OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    for name, done, command in todo:
        if args.plan:
            print(f"{name}: {' '.join(command)}")
            continue
        if done.exists():
            print(f"{name}: done ({done})")
            continue
        print(f"{name}: {' '.join(command)}", flush=True)
        subprocess.run(command, check=True, env=env if name.startswith("eval") else None)
    if not args.plan and not args.only:
        report(args.work, args.report)


def report(work: Path, out: Path) -> None:
    """Each evaluation's results (results/NAME.json, the home folder written ~), the comparison
    table and chart (homeflow bench compare of those) and the training curves."""
    (out / "results").mkdir(parents=True, exist_ok=True)
    results = [out / "results" / f"{name}.json" for name in MODELS]
    for name, path in zip(MODELS, results, strict=True):
        text = (work / "eval" / name / RESULTS).read_text(encoding="utf-8")
        write_text(path, shareable(text))
    compare = homeflow("bench", "compare", *map(str, results), "-o", str(out / "bench"))
    subprocess.run(compare, check=True)
    curves = {
        name: read_metrics(work / path / METRICS)
        for name, path in (("sft_mcts", "sft/mcts"), ("sft_roleplay", "sft/roleplay"), ("rl", "rl"))
    }
    write_text(out / "curves.json", json.dumps(curves, indent=1))
    _plot(curves, out / "curves.png")


def _plot(curves: dict[str, list[dict[str, float]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (sft, rl) = plt.subplots(1, 2, figsize=(11, 4))
    for name in ("sft_mcts", "sft_roleplay"):
        points = [(m["step"], m["loss"]) for m in curves[name] if "loss" in m]
        sft.plot(*zip(*points, strict=True), label=name)
    sft.set(title="SFT training loss", xlabel="step", ylabel="loss")
    sft.legend()
    points = [(m["step"], m["reward"]) for m in curves["rl"] if "reward" in m]
    rl.plot(*zip(*points, strict=True), marker="o", label="mean step reward")  # a few steps
    rl.set(title="Step-wise RL", xlabel="step", ylabel="reward")
    rl.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()

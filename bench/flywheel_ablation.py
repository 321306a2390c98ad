"""The paper's synthesis ablation (4.3.1): MCTS-Flow vs blueprint-grounded linear generation vs
pure role-play, with the scripted teacher slipping at a stated `--careless` rate.

Seeds are taken in order until `--blueprints` of them give accepted blueprints; MCTS-Flow and
linear run on those. Role-play has no triple filter, so it runs on every seed of that range the
scripter drew a candidate for (accepted or not), and the verifier judges its one rollout after
the fact. Prints per method: generation success rate, verified trajectories, policy calls,
trajectories per policy call, diversity (distinct tool-call sequences and distinct user
utterances per blueprint), prefix reuses, rollouts saved and wall time.

    .venv/bin/python bench/flywheel_ablation.py [--blueprints 1000] [--careless 0.1] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

from rich.console import Console
from rich.table import Table

from agent.flywheel.blueprints import Rejected, make_blueprint
from agent.flywheel.mcts import Synthesis, SynthesisConfig, roleplay, summarise, synthesize_sync

CHUNK = 25


def run_seeds(seeds: range, config: SynthesisConfig) -> list[tuple[int, bool, list[Synthesis]]]:
    """(seed, accepted, syntheses) for each seed: MCTS and linear on an accepted blueprint,
    role-play on any candidate."""
    out = []
    for seed in seeds:
        blueprint = make_blueprint(seed)
        found = []
        if not isinstance(blueprint, Rejected) or blueprint.filter != "scene":
            found.append(asyncio.run(roleplay(seed, replace(config, method="roleplay"))))
        if not isinstance(blueprint, Rejected):
            found += [
                synthesize_sync(blueprint, replace(config, method=method))
                for method in ("mcts", "linear")
            ]
        out.append((seed, not isinstance(blueprint, Rejected), found))
    return out


def ablation(count: int, config: SynthesisConfig, workers: int) -> tuple[list[Synthesis], float]:
    """The syntheses over the seeds that give `count` accepted blueprints, and the wall time."""
    started = time.perf_counter()
    results: list[tuple[int, bool, list[Synthesis]]] = []
    start = 0
    with ProcessPoolExecutor(workers) as pool:
        while sum(accepted for _, accepted, _ in results) < count:
            batch = [range(s, s + CHUNK) for s in range(start, start + CHUNK * workers * 4, CHUNK)]
            start = batch[-1].stop
            for chunk in pool.map(run_seeds, batch, [config] * len(batch)):
                results += chunk
    accepted = 0
    kept: list[Synthesis] = []
    for _, ok, found in sorted(results, key=lambda result: result[0]):
        if accepted == count:
            break
        accepted += ok
        kept += found
    return kept, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blueprints", type=int, default=1000)
    parser.add_argument("--careless", type=float, default=0.1)
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--k-user", type=int, default=1)
    parser.add_argument("--k-agent", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = SynthesisConfig(
        k_user=args.k_user,
        k_agent=args.k_agent,
        iterations=args.iterations,
        careless=args.careless,
        seed=args.seed,
    )
    syntheses, wall = ablation(args.blueprints, config, args.workers)
    table = Table(
        title=(
            f"Synthesis ablation: {args.blueprints} blueprints, careless={args.careless}, "
            f"k_user={args.k_user}, k_agent={args.k_agent}, {args.iterations} MCTS rollouts, "
            f"{wall:.1f} s wall on {args.workers} workers"
        )
    )
    for column in (
        "method",
        "blueprints",
        "success",
        "verified traj.",
        "policy calls",
        "traj./call",
        "distinct/call",
        "tool seqs/bp",
        "utterances/bp",
        "prefix reuses",
        "calls saved",
        "CPU s",
    ):
        table.add_column(column, justify="left" if column == "method" else "right")
    summaries = summarise(syntheses)
    for method in ("mcts", "linear", "roleplay"):
        s = summaries[method]
        table.add_row(
            method,
            str(s.blueprints),
            f"{s.success_rate:.2%}",
            str(s.trajectories),
            str(s.policy_calls),
            f"{s.trajectories_per_call:.4f}",
            f"{s.distinct_per_call:.4f}",
            f"{s.tool_sequences_per_blueprint:.2f}",
            f"{s.utterances_per_blueprint:.2f}",
            str(s.prefix_reuses),
            str(s.rollouts_saved),
            f"{s.wall_s:.1f}",
        )
    Console(width=160).print(table)


if __name__ == "__main__":
    main()

"""SFT throughput with and without packing, in the same run: the tokens per second TRL's
SFTTrainer trains SmolLM2-135M on, padded batches against packed sequences.

    .venv/bin/python bench/sft_packing.py DATASET [--rows 16] [--batch-size 4] [--max-length 2048]
        [--threads 2]

DATASET is a trajectory dataset (`homeflow data synthesize`). The same `--rows` rows (drawn and
trimmed as `homeflow train sft` draws them) train one epoch each way, from the same weights, with
the run's precision (bfloat16 autocast where the machine multiplies it fast); throughput counts
the tokens of the sequences trained on (TRL's `num_tokens`, padding excluded). Prints a markdown
table. Packing pays where attention has a variable-length kernel (flash attention on a GPU); on
the CPU sdpa masks the whole packed block, so it may cost.
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from agent.policies.local import LocalPolicy, bf16_fast, load
from agent.training.sft import build_trainer, make_run, read_dataset, sample_rows, trimming


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer = load(dtype="float32")
    with tempfile.TemporaryDirectory() as output:
        settings = {"dataset": str(args.dataset), "output": output, "max_samples": args.rows}
        settings |= {"batch_size": args.batch_size, "max_length": args.max_length}
        run = make_run(settings)
        policy = LocalPolicy(model, tokenizer, compact=run.compact)
        rows = sample_rows(run, read_dataset(run), trimming(policy, run.max_length))
        results = {
            packing: _train(replace(run, packing=packing), copy.deepcopy(model), tokenizer, rows)
            for packing in (False, True)
        }
    print(f"bf16_fast() on this machine: {bf16_fast()}; {args.threads} threads; {len(rows)} rows,")
    print(f"batches of {args.batch_size}, max_length {args.max_length}, one epoch each way\n")
    print("| | sequences | steps | tokens | seconds | tokens/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for packing, (sequences, steps, tokens, seconds) in results.items():
        cells = ["packed" if packing else "padded", sequences, steps, f"{tokens:,}"]
        cells += [f"{seconds:.0f}", f"{tokens / seconds:.0f}"]
        print("| " + " | ".join(map(str, cells)) + " |")
    padded, packed = (tokens / seconds for _, _, tokens, seconds in results.values())
    print(f"\npacked against padded: {packed / padded:.2f}x the tokens per second")


def _train(run: Any, model: Any, tokenizer: Any, rows: list[Any]) -> tuple[int, int, int, float]:
    """(sequences, steps, tokens trained on, seconds) of one epoch of `run` on `rows`."""
    trainer = build_trainer(run, model.train(), tokenizer, rows)
    started = time.perf_counter()
    steps = trainer.train().global_step
    seconds = time.perf_counter() - started
    tokens = max(int(log.get("num_tokens", 0)) for log in trainer.state.log_history)
    return len(trainer.train_dataset), steps, tokens, seconds


if __name__ == "__main__":
    main()

"""bfloat16 against float32 for SmolLM2-135M on this machine, in the same run: the speed of a
prompt's forward pass and of greedy generation, whether greedy decoding says the same, and the
training loss.

    .venv/bin/python bench/precision.py [--prompts 8] [--new-tokens 32] [--threads 2]

For the first user turn of `--prompts` flywheel blueprints (the compact prompt of their home, with
its tools, as `--policy local` prompts), it times the prompt's forward pass and a greedy generation
of `--new-tokens` tokens with the model in float32 and in bfloat16, and counts the prompts whose
first generated token is the same and the tokens generated alike before the first difference.
Then it takes the teacher's trajectories of those blueprints and compares the language-model loss
of float32 weights computed in float32 and under bfloat16 autocast (what `homeflow train` does
where bfloat16 is fast). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import statistics
import time
from typing import Any, NamedTuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from agent.backends.twin import TwinBackend
from agent.bench.instances import play
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.policies.local import LocalPolicy, bf16_fast, load
from agent.policies.teacher import TeacherPolicy
from agent.prompt import system_prompt


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    full, tokenizer = load(dtype="float32")
    half = copy.deepcopy(full).to(torch.bfloat16)
    blueprints = _blueprints(args.prompts)
    policy = LocalPolicy(full, tokenizer, compact=True)
    prompts = [_prompt(policy, blueprint) for blueprint in blueprints]
    slow, fast = (_generate(model, prompts, args.new_tokens) for model in (full, half))
    pairs = list(zip(slow.outputs, fast.outputs, strict=True))
    first = sum(a[0] == b[0] for a, b in pairs)
    alike = [_alike(a, b) for a, b in pairs]
    losses = [_losses(full, tokenizer, policy, blueprint) for blueprint in blueprints]
    gap = [abs(mixed - exact) / exact for exact, mixed in losses]
    tokens = sum(len(p) for p in prompts)
    print(f"bf16_fast() on this machine: {bf16_fast()}; {args.threads} threads")
    print(f"{len(prompts)} prompts, {tokens / len(prompts):.0f} tokens on average\n")
    print("| | float32 | bfloat16 | ratio |")
    print("|---|---:|---:|---:|")
    print(_row("prompt tokens/s", tokens / slow.prefill, tokens / fast.prefill))
    made = args.new_tokens * len(prompts)
    print(_row("generated tokens/s", made / slow.generate, made / fast.generate))
    print(f"\nsame first token: {first} of {len(prompts)}; greedy tokens alike before the first")
    print(f"difference: median {statistics.median(alike)} of {args.new_tokens}, min {min(alike)}")
    print(
        f"training loss, float32 against bfloat16 autocast: mean {statistics.mean(gap):.2%} "
        f"apart, at most {max(gap):.2%} ({len(losses)} teacher trajectories)"
    )


def _blueprints(count: int) -> list[Blueprint]:
    found: list[Blueprint] = []
    seed = 0
    while len(found) < count:
        blueprint = make_blueprint(seed)
        seed += 1
        if isinstance(blueprint, Blueprint) and blueprint.language == "en":
            found.append(blueprint)
    return found


def _prompt(policy: LocalPolicy, blueprint: Blueprint) -> list[int]:
    backend = TwinBackend(blueprint.home())
    system = asyncio.run(system_prompt(backend))
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": blueprint.task.turns[0]},
    ]
    text = policy.prompt(messages, backend.tool_schemas)
    return list(policy.tokenizer(text, add_special_tokens=False)["input_ids"])


class Timing(NamedTuple):
    """Seconds of forward passes over the prompts and of greedy generation past them, and the
    tokens generated."""

    prefill: float
    generate: float
    outputs: list[list[int]]


def _generate(model: Any, prompts: list[list[int]], new_tokens: int) -> Timing:
    prefill = generate = 0.0
    outputs = []
    with torch.inference_mode():
        for ids in prompts:
            tensor = torch.tensor([ids])
            start = time.perf_counter()
            model(tensor)
            took = time.perf_counter() - start
            prefill += took
            start = time.perf_counter() + took  # generate() reads the prompt again: not counted
            out = model.generate(
                tensor,
                max_new_tokens=new_tokens,
                min_new_tokens=new_tokens,
                do_sample=False,
                pad_token_id=0,
            )
            generate += time.perf_counter() - start
            outputs.append(out[0, len(ids) :].tolist())
    return Timing(prefill, generate, outputs)


def _alike(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))


def _losses(model: Any, tokenizer: Any, policy: LocalPolicy, blueprint: Blueprint) -> Any:
    """The teacher's trajectory's loss in float32 and under bfloat16 autocast."""
    trajectory = asyncio.run(play(blueprint, TeacherPolicy(blueprint.task, 0), 0))
    text = policy.prompt(trajectory.messages, TwinBackend(blueprint.home()).tool_schemas)
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"][:, :2048]
    with torch.inference_mode():
        exact = float(model(ids, labels=ids).loss)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            mixed = float(model(ids, labels=ids).loss)
    return exact, mixed


def _row(label: str, slow: float, fast: float) -> str:
    return f"| {label} | {slow:.0f} | {fast:.0f} | {fast / slow:.2f}x |"


if __name__ == "__main__":
    main()

"""The RL rollout's group of actions with its prompt computed once, against once per action, in the
same run: SmolLM2-135M sampling `--generations` actions at an episode's final state.

    .venv/bin/python bench/rl_prefix.py [--states 4] [--generations 4] [--new-tokens 64]
        [--threads 2]

For `--states` flywheel blueprints the scripted teacher plays the episode, and the state is the
dialogue before its final action (the step-wise variant's state; agent.training.rl.final_state),
prompted as `--policy local` prompts. Three ways sample the group there, each from the same seed:
once per action (one batched generate with num_return_sequences, as the rollout did), with one
prefill of the prompt (rl.Sampler.group on a fresh policy), and after the episode's own message
at that state left its KV cache (rl.Sampler.group after Sampler.act, as a rollout plays it). It
prints the prompt tokens computed, seconds, and actions' tokens per second; whether the samples
are the same is checked too. TRL's loss pass still computes each action's prompt anew (its
per-sequence forward), which this does not change.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch
import transformers

from agent.bench.instances import play
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.policies import Message
from agent.policies.local import bf16_fast, load, save_prompt_settings
from agent.policies.teacher import TeacherPolicy
from agent.training import rl
from twin.tools import TOOL_SCHEMAS

WAYS = ("once per action", "one prefill", "episode's cache")
TOOLS = list(TOOL_SCHEMAS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--states", type=int, default=4)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer = load()
    with tempfile.TemporaryDirectory() as folder:
        save_prompt_settings(folder, compact=True)  # as `--policy local` prompts SmolLM2
        run = rl.RLRun(
            model=Path(folder),
            blueprints=Path(folder),
            output=Path(folder) / "out",
            num_generations=args.generations,
            max_new_tokens=args.new_tokens,
        )
        prefilled: list[int] = []  # the prompt tokens each forward pass computes (not decoding)
        model.register_forward_pre_hook(
            lambda module, a, kwargs: prefilled.append(_prefill(kwargs["input_ids"])),
            with_kwargs=True,
        )
        trainer = SimpleNamespace(use_vllm=False, processing_class=tokenizer)
        totals = {way: [0, 0, 0.0] for way in WAYS}  # prompt tokens, action tokens, seconds
        same, prompts = 0, 0
        for state in _states(args.states):
            sampler = rl.Sampler(run, trainer, model)
            results = [_timed(_plain, sampler, state, totals[WAYS[0]], prefilled)]
            results.append(_timed(_group, sampler, state, totals[WAYS[1]], prefilled))
            sampler.act(state, TOOLS)  # the episode's own message here
            results.append(_timed(_group, sampler, state, totals[WAYS[2]], prefilled))
            same += results[0] == results[1] == results[2]
            prompts += len(results[0][0])
    print(
        f"bf16_fast() on this machine: {bf16_fast()}; {args.threads} threads; model {model.dtype}"
    )
    print(f"{args.states} states, {prompts / args.states:.0f} prompt tokens on average; groups of")
    print(f"{args.generations} actions of up to {args.new_tokens} tokens\n")
    print("| group | prompt tokens computed | seconds | action tokens/s | ratio |")
    print("|---|---:|---:|---:|---:|")
    base = totals[WAYS[0]][1] / totals[WAYS[0]][2]
    for way, (computed, made, seconds) in totals.items():
        speed = made / seconds
        print(f"| {way} | {computed:,} | {seconds:.1f} | {speed:.1f} | {speed / base:.2f}x |")
    print(f"\nthe same samples all three ways: {same} of {args.states} states")


def _states(count: int) -> list[list[Message]]:
    """The dialogues before the teacher's final action in `count` English blueprints."""
    found: list[list[Message]] = []
    seed = 0
    while len(found) < count:
        blueprint = make_blueprint(seed)
        seed += 1
        if isinstance(blueprint, Blueprint) and blueprint.language == "en":
            teacher = TeacherPolicy(blueprint.task, blueprint.seed)
            messages = asyncio.run(play(blueprint, teacher)).messages
            found.append(messages[: rl.final_state(messages)])
    return found


def _prefill(ids: Any) -> int:
    """The prompt tokens a forward pass computes: none where it decodes one token a row."""
    return int(ids.numel()) if ids.shape[1] > 1 else 0


def _timed(
    way: Any, sampler: Any, state: list[Message], total: list[Any], prefilled: list[int]
) -> tuple[list[int], list[list[int]]]:
    """The group `way` draws from seed 0, its prompt tokens, action tokens and seconds added to
    `total`."""
    prefilled.clear()
    transformers.set_seed(0)
    started = time.perf_counter()
    prompt, actions = way(sampler, state)
    total[2] += time.perf_counter() - started
    total[0] += sum(prefilled)
    total[1] += sum(map(len, actions))
    return prompt, actions


def _plain(sampler: Any, state: list[Message]) -> tuple[list[int], list[list[int]]]:
    """The group drawn the way that computes the prompt once per action."""
    local = sampler.local
    prompt = local.tokenizer(local.prompt(state, TOOLS), add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        output = local.model.generate(
            torch.tensor([prompt]),
            do_sample=True,
            temperature=sampler.run.temperature,
            num_return_sequences=sampler.run.num_generations,
            max_new_tokens=sampler.run.max_new_tokens,
            eos_token_id=local.stop_ids,
            pad_token_id=local.stop_ids[0],
        )
    return prompt, [rl._until_stop(row[len(prompt) :].tolist(), local.stop_ids) for row in output]


def _group(sampler: Any, state: list[Message]) -> tuple[list[int], list[list[int]]]:
    """The group as the rollout draws it."""
    prompt, actions, _ = sampler.group(state, TOOLS)
    return prompt, actions


if __name__ == "__main__":
    main()

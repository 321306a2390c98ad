# ruff: noqa: F811  (the `server` and `sharp` fixtures are imported)
"""Step-wise RLVE: rewards of hand-made actions, states replayed exactly, the states each variant
trains, a GRPO step that moves a tiny policy toward the rewarded action, and the CLI."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import random
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from agent.backends.twin import TwinBackend
from agent.bench.instances import play
from agent.cli import main
from agent.envs import DialogueEnv
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.datasets import blueprint_row, write_dataset
from agent.policies import AssistantMessage, Message, ToolCall
from agent.policies.teacher import TeacherPolicy
from agent.training import rl
from agent.training.common import TrainingError, read_metrics
from tests.agent.test_local_policy import sharp  # noqa: F401
from tests.agent.test_openai_policy import FakeServer, completion, server  # noqa: F401
from twin.reward import ActionOutcome

LIGHT = "light.studio_ceiling_light"


@cache
def blueprint() -> Blueprint:
    """The first flywheel blueprint that asks one thing, in one turn: a studio's ceiling light
    off (one condition, state(LIGHT) == "off"). Found by seed, not pinned to one, so that the
    scripter's wording may change."""
    for number in range(2000):
        found = make_blueprint(number)
        if not isinstance(found, Blueprint) or found.memory or found.task.followups:
            continue
        asked = [(intent.entity_id, intent.service) for intent in found.task.intents]
        if len(found.task.turns) == 1 and asked == [(LIGHT, "turn_off")]:
            return found
    raise AssertionError("no blueprint asks for the studio's ceiling light off")


def blueprint_seed() -> int:
    return blueprint().seed


@cache
def teacher_messages() -> list[Message]:
    return asyncio.run(
        play(blueprint(), TeacherPolicy(blueprint().task, blueprint_seed()))
    ).messages


def start() -> list[Message]:
    """The state before the agent's first message: system prompt and request."""
    return teacher_messages()[: rl.states(teacher_messages())[0]]


def call(domain: str, service: str, entity_id: str) -> ToolCall:
    arguments = {"domain": domain, "service": service, "target": {"entity_id": entity_id}}
    return ToolCall("c1", "call_service", arguments)


def rewards(outcome: ActionOutcome, variant: str = "step") -> dict[str, float]:
    kwargs = {"outcome": [outcome.__dict__ | {}], "code_limit": [1000], "turn_limit": [3]}
    return {f.__name__: f([None], **kwargs)[0] for f in rl.REWARDS[variant]}


def score(action: AssistantMessage, before: Sequence[str] = ()) -> ActionOutcome:
    """The action's outcome in HomeEnv-v1 at the dialogue's start, after the agent's `before`."""
    env = DialogueEnv(blueprint(), tokens=lambda code: len(code.split()))
    env.reset(options={"user_seed": blueprint_seed()})
    for earlier in before:
        env.step(earlier)
    (outcome,) = rl._outcomes(env, env.snapshot(), [action])
    return outcome


class TeacherSampler:
    """The scripted teacher in the place of the rollout's sampler."""

    def __init__(self) -> None:
        self.teacher = TeacherPolicy(blueprint().task, blueprint_seed())

    def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        return asyncio.run(self.teacher.act(messages, tools))


def test_the_right_action_is_rewarded_by_the_verifier_and_ends_the_task() -> None:
    action = AssistantMessage("", (call("light", "turn_off", LIGHT),))
    outcome = score(action)
    assert (outcome.conditions, outcome.progress, outcome.success) == (1, 1.0, True)
    assert rewards(outcome) == {
        "verifier_reward": 1.0,
        "auditor_reward": 0.0,
        "format_reward": 0.0,
        "code_check": 0.0,
        "code_length": 0.0,
        "turn_check": 0.0,
    }
    assert rewards(outcome, "st")["outcome_reward"] == 1.0


def test_collateral_unknown_entities_and_unreadable_calls_are_penalised_exactly() -> None:
    home = blueprint().home()
    other = next(e for e in home.states if e != LIGHT and e.startswith("light."))
    flip = "turn_off" if home.states[other].state == "on" else "turn_on"
    collateral = score(AssistantMessage("", (call("light", flip, other),)))
    assert rewards(collateral)["verifier_reward"] == -1.0
    assert rewards(collateral, "st")["outcome_reward"] == 0.0
    unknown = score(AssistantMessage("", (call("light", "turn_off", "light.nowhere"),)))
    assert rewards(unknown)["auditor_reward"] == -0.3  # twin.auditor.PENALTIES["unknown_entity"]
    assert rewards(unknown)["verifier_reward"] == 0.0
    broken = score(AssistantMessage("", (), ("not JSON",)))
    assert rewards(broken)["format_reward"] == -1.0
    # Looking and replying change nothing: no reward either way.
    look = score(AssistantMessage("", (ToolCall("c1", "get_state", {"entity_id": LIGHT}),)))
    assert sum(rewards(look).values()) == 0.0
    assert sum(rewards(score(AssistantMessage("Done."))).values()) == 0.0


def test_code_check_code_length_and_turn_check() -> None:
    sneaky = ToolCall("c1", "pyexec", {"code": "getattr(hass, 'states')"})
    outcome = score(AssistantMessage("", (sneaky,)))
    assert rewards(outcome)["code_check"] == -1.0
    assert rewards(outcome)["auditor_reward"] == -1.0  # the sandbox refused it: restricted_code
    long = ToolCall("c1", "pyexec", {"code": "x = 1\n" + "y = 2 # pad\n" * 400})
    assert rewards(score(AssistantMessage("", (long,))))["code_length"] == -1.0
    short = ToolCall("c1", "pyexec", {"code": "x = 1"})
    assert rewards(score(AssistantMessage("", (short,))))["code_length"] == 0.0
    late = ["Which light do you mean?"] * 3  # each answered by the user: turn 4
    assert rewards(score(AssistantMessage("Done."), late))["turn_check"] == -1.0
    # The runner's answers to malformed calls come as user messages; they are not turns.
    assert score(AssistantMessage("Done."), ["<tool_call>{</tool_call>"] * 2).turn == 1


def test_a_state_is_the_episodes_home_restored_exactly() -> None:
    """The final action stepped again from the env's snapshot before it gives the home the
    teacher's episode ended with."""
    home = blueprint().home()
    trajectory = asyncio.run(
        play(
            blueprint(),
            TeacherPolicy(blueprint().task, blueprint_seed()),
            backend=TwinBackend(home),
        )
    )
    env = DialogueEnv(blueprint())
    saved = rl._play(env, TeacherSampler(), blueprint_seed())
    final = rl.final_state(env.trajectory.messages)
    action = env.trajectory.messages[final]
    env.restore(saved[final])
    assert env.step(action)[4]["outcome"]["success"]
    assert {e: s.as_dict() for e, s in env.home.states.items()} == {
        e: s.as_dict() for e, s in home.states.items()
    }
    assert trajectory.done


def test_step_trains_every_state_and_st_only_the_final_action() -> None:
    messages = teacher_messages()
    found = rl.states(messages)
    assert len(found) >= 2
    rng = random.Random(0)
    assert {rl.choose_state(messages, "step", rng) for _ in range(200)} == set(found)
    final = rl.choose_state(messages, "st", rng)
    assert messages[final]["tool_calls"]
    assert not any(messages[i].get("tool_calls") for i in found if i > final)


def test_bad_configs_are_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = {"model": str(tmp_path), "blueprints": str(tmp_path), "output": str(tmp_path / "out")}
    for settings, message in [
        ({"variant": "mc"}, "variant must be one of"),
        ({"num_generations": 1}, "num_generations must be at least 2"),
        ({"user": "llama"}, "user must be scripted or openai"),
        ({"beeta": 0.1}, r"unknown keys \['beeta'\]"),
        ({"save_steps": -1}, "save_steps must be 0"),
        ({"vllm_mode": "remote"}, "vllm_mode must be one of"),
        ({"vllm_server": "http://10.0.0.2:8000"}, "vllm_server is for use_vllm: true"),
        ({"output": str(Path(__file__).parent / "out")}, "inside the repository"),
    ]:
        with pytest.raises(TrainingError, match=message):
            rl.make_run(base | settings)
    with monkeypatch.context() as patch:
        patch.setattr(rl.importlib.util, "find_spec", lambda name: None)  # a machine without vLLM
        with pytest.raises(TrainingError, match=r"'trl\[vllm\]'"):
            rl.make_run(base | {"use_vllm": True})
    with pytest.raises(TrainingError, match="homeflow data blueprints"):
        rl.read_blueprints(tmp_path / "nowhere")
    bench = dataclasses.replace(blueprint(), seed=2**40)  # the benchmark's first seed
    write_dataset(tmp_path / "bench", "blueprints", [blueprint_row(bench)])
    with pytest.raises(TrainingError, match="the benchmark is never trained on"):
        rl.read_blueprints(tmp_path / "bench")
    run = rl.make_run(base)
    assert (run.kl, run.entropy) == (3e-3, 0.0)
    assert (
        rl.make_run(base | {"variant": "st"}).kl,
        rl.make_run(base | {"variant": "st"}).entropy,
    ) == (0.0, 1e-4)


# --- GRPO on a tiny model ---------------------------------------------------------------------


@pytest.fixture
def tiny_folder(tmp_path: Path, tiny: tuple[Any, Any]) -> Path:
    """conftest's tiny Qwen3, saved: GRPO loads its KL reference from the folder."""
    pytest.importorskip("trl")
    model, tokenizer = tiny
    model.save_pretrained(tmp_path / "tiny")
    tokenizer.save_pretrained(tmp_path / "tiny")
    return tmp_path / "tiny"


def blueprints_dir(tmp_path: Path) -> Path:
    write_dataset(tmp_path / "bp", "blueprints", [blueprint_row(blueprint())])
    return tmp_path / "bp"


def run_settings(tmp_path: Path, folder: Path, **more: Any) -> dict[str, Any]:
    return {
        "model": str(folder),
        "blueprints": str(blueprints_dir(tmp_path)),
        "output": str(tmp_path / "out"),
        "max_steps": 1,
        "episodes_per_step": 1,
        "num_generations": 2,
        "max_new_tokens": 8,
        "max_turns": 1,
        "max_tool_calls": 2,
    } | more


def action_text(entity_id: str) -> str:
    arguments = {"domain": "light", "service": "turn_off", "target": {"entity_id": entity_id}}
    return (
        f"<tool_call>\n{json.dumps({'name': 'call_service', 'arguments': arguments})}\n</tool_call>"
    )


def test_a_grpo_step_moves_the_policy_toward_the_rewarded_action(
    tmp_path: Path, tiny_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the state where the group acts, one action turns the right light off (+1) and the
    other names no entity (-0.3): one step makes the first likelier against the second."""
    import torch

    from agent.policies.local import load

    model, tokenizer = load(tiny_folder)
    good, bad = (
        tokenizer(action_text(e) + "<|im_end|>", add_special_tokens=False)["input_ids"]
        for e in (LIGHT, "light.nowhere")
    )
    prompts: list[list[int]] = []

    def group(sampler: rl.Sampler, messages: list[Message], tools: list[dict[str, Any]]) -> Any:
        prompt = tokenizer(sampler.local.prompt(messages, tools), add_special_tokens=False)[
            "input_ids"
        ]
        prompts.append(prompt)
        return prompt, [good, bad], None

    monkeypatch.setattr(rl.Sampler, "group", group)
    run = rl.make_run(run_settings(tmp_path, tiny_folder, learning_rate=0.05))
    trainer = rl.build_trainer(run, model, tokenizer, [blueprint()])

    def margin() -> float:
        def logp(completion: list[int]) -> float:
            ids = torch.tensor([prompts[0] + completion])
            with torch.no_grad():
                logits = trainer.model(ids).logits[0, len(prompts[0]) - 1 : -1]
            return float(logits.log_softmax(-1).gather(1, torch.tensor(completion)[:, None]).sum())

        return logp(good) - logp(bad)

    trainer.train()
    after = margin()
    fresh, _ = load(tiny_folder)
    trainer.model = fresh
    assert after > margin() + 1.0
    logged = [
        json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    ]
    assert logged[0]["rewards/verifier_reward/mean"] == pytest.approx(0.5)
    assert logged[0]["rewards/auditor_reward/mean"] == pytest.approx(-0.15)


def test_the_st_rollout_acts_at_the_final_action(
    tmp_path: Path, tiny_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ST: the group's prompt is the dialogue before the episode's final action."""
    from agent.policies.local import load

    model, tokenizer = load(tiny_folder)
    seen: list[list[Message]] = []

    play_env = rl._play

    def teacher_episode(env: Any, sampler: Any, seed: int) -> Any:
        return play_env(
            env, TeacherSampler(), blueprint_seed()
        )  # the teacher's episode, worded as play's

    def group(sampler: rl.Sampler, messages: list[Message], tools: list[dict[str, Any]]) -> Any:
        seen.append(messages)
        ids = tokenizer("Done.<|im_end|>", add_special_tokens=False)["input_ids"]
        return [1, 2], [ids, ids], None

    monkeypatch.setattr(rl, "_play", teacher_episode)
    monkeypatch.setattr(rl.Sampler, "group", group)
    run = rl.make_run(run_settings(tmp_path, tiny_folder, variant="st"))
    trainer = rl.build_trainer(run, model, tokenizer, [blueprint()])
    out = rl.Rollout(run)([blueprint().to_json()] * 2, trainer)
    messages = teacher_messages()
    assert seen == [messages[: rl.final_state(messages)]]
    assert out["prompt_ids"] == [[1, 2], [1, 2]]
    assert [o["success"] for o in out["outcome"]] == [False, False]  # "Done." before acting


@pytest.mark.parametrize("lora", [None, {"r": 4}])
def test_the_cli_runs_rl_and_saves_the_model_with_its_metrics(
    tmp_path: Path, tiny_folder: Path, lora: dict[str, int] | None
) -> None:
    """With LoRA too: the adapters are saved merged, as a whole model."""
    config = tmp_path / "rl.yaml"
    config.write_text(yaml.safe_dump(run_settings(tmp_path, tiny_folder, lora=lora)))
    result = CliRunner().invoke(main, ["train", "rl", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "model.safetensors").exists()
    assert not (tmp_path / "out" / "adapter_config.json").exists()
    logged = [
        json.loads(line) for line in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    ]
    assert "reward" in logged[0]
    assert "kl" in logged[0]


def test_a_crashed_run_continues_from_its_last_checkpoint(
    tmp_path: Path, tiny_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """save_steps 1: a run that dies in step 2 continues there, with step 1 neither redone nor
    logged twice; a changed config is not continued from the checkpoint."""
    rollouts: list[int] = []
    rollout = rl.Rollout.__call__

    def dies_once_in_step_2(self: rl.Rollout, prompts: list[Any], trainer: Any) -> Any:
        rollouts.append(trainer.state.global_step)
        if rollouts == [0, 1]:
            raise RuntimeError("power cut")
        return rollout(self, prompts, trainer)

    monkeypatch.setattr(rl.Rollout, "__call__", dies_once_in_step_2)
    config = tmp_path / "rl.yaml"
    config.write_text(
        yaml.safe_dump(run_settings(tmp_path, tiny_folder, max_steps=2, save_steps=1))
    )
    command = ["train", "rl", "--config", str(config)]
    assert isinstance(CliRunner().invoke(main, command).exception, RuntimeError)
    out = tmp_path / "out"
    assert (out / "checkpoint-1").is_dir()
    assert not (out / "model.safetensors").exists()
    with (out / "metrics.jsonl").open("a") as log:  # as if logged after the checkpoint
        log.write(json.dumps({"step": 2, "reward": 99.0}) + "\n")
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(run_settings(tmp_path, tiny_folder, max_steps=8)))
    refused = CliRunner().invoke(main, ["train", "rl", "--config", str(changed)])
    assert refused.exit_code == 2, refused.output  # a usage error
    assert "max_steps: 2 -> 8" in refused.output
    assert rollouts == [0, 1]  # nothing trained
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output
    assert "continuing from" in result.output
    assert rollouts == [0, 1, 1]
    logged = [line for line in read_metrics(out / "metrics.jsonl") if "reward" in line]
    assert [line["step"] for line in logged] == [1, 2]
    assert logged[1]["reward"] != 99.0
    assert (out / "model.safetensors").exists()


class FakeVLLM:
    """TRL's VLLMGeneration.generate as the trainer calls it: the prompts hold each group's
    prompt num_generations times, and one completion (with top-k logprobs) comes per prompt."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[list[int]], int]] = []

    def generate(self, prompts: list[list[int]], images: Any, num_generations: int) -> Any:
        self.calls.append((prompts, num_generations))
        completions = [[7 + i, 2] for i in range(len(prompts))]
        logprobs = [[[-0.5, -3.0], [-0.1, -4.0]] for _ in prompts]
        return prompts, completions, logprobs, None


def test_a_vllm_group_asks_for_every_action(tmp_path: Path, tiny: tuple[Any, Any]) -> None:
    run = rl.make_run(run_settings(tmp_path, tmp_path, num_generations=3))
    model, tokenizer = tiny
    vllm = FakeVLLM()
    trainer = SimpleNamespace(use_vllm=True, vllm_generation=vllm, processing_class=tokenizer)
    prompt, completions, logprobs = rl.Sampler(run, trainer, model).group(start(), [])
    assert vllm.calls == [([prompt] * 3, 3)]
    assert completions == [[7, 2], [8, 2], [9, 2]]
    assert logprobs == [[-0.5, -0.1]] * 3


def test_a_group_computes_its_prompt_once_and_samples_as_without_it(
    tmp_path: Path,
    sharp: tuple[Any, Any],
) -> None:
    """The group's actions share one prefill of the prompt (none at all where the episode's
    last generation left it cached) and are the samples a plain batched generation draws."""
    import torch
    import transformers

    run = rl.make_run(run_settings(tmp_path, tmp_path, num_generations=3, max_new_tokens=6))
    model, tokenizer = copy.deepcopy(sharp[0]), sharp[1]
    sampler = rl.Sampler(run, SimpleNamespace(use_vllm=False, processing_class=tokenizer), model)
    encoded: list[int] = []  # the tokens each forward pass computes, over the batch
    model.register_forward_pre_hook(
        lambda module, args, kwargs: encoded.append(kwargs["input_ids"].numel()), with_kwargs=True
    )
    prompt = tokenizer(sampler.local.prompt(start(), []), add_special_tokens=False)["input_ids"]
    stops = sampler.local.stop_ids
    transformers.set_seed(0)
    with torch.inference_mode():
        plain = model.generate(
            torch.tensor([prompt]),
            do_sample=True,
            temperature=run.temperature,
            num_return_sequences=3,
            max_new_tokens=6,
            eos_token_id=stops,
            pad_token_id=stops[0],
        )
    expected = [rl._until_stop(row[len(prompt) :].tolist(), stops) for row in plain]
    assert encoded[0] == 3 * len(prompt)  # the plain way: the prompt once per action
    for played in (False, True):
        if played:  # an episode's message at this state leaves its cache to reuse
            sampler.act(start(), [])
        encoded.clear()
        transformers.set_seed(0)
        assert sampler.group(start(), []) == (prompt, expected, None)
        assert encoded[0] == (3 if played else len(prompt) - 1)  # decoding, or one prefill
        assert sum(encoded) < 2 * len(prompt)
    assert sampler.local._kept is None  # the group's cache is not kept for the episode


async def test_an_llm_user_speaks_in_the_episodes(
    server: FakeServer, tmp_path: Path, tiny: tuple[Any, Any]
) -> None:
    """`user: openai:URL#MODEL`: the server plays the user of every episode."""
    query = json.dumps({"query": "Thanks, that's all.", "reason": "done"})
    call = {"id": "u1", "type": "function", "function": {"name": "post_process"}}
    call["function"]["arguments"] = query  # type: ignore[index]
    server.replies = [completion({"content": None, "tool_calls": [call]})] * 4
    settings = {"user": f"openai:{server.url}#user", "max_turns": 2, "max_new_tokens": 4}
    run = rl.make_run(run_settings(tmp_path, tmp_path, **settings))
    model, tokenizer = tiny
    sampler = rl.Sampler(run, SimpleNamespace(use_vllm=False, processing_class=tokenizer), model)
    prompt, actions, _, outcomes = await rl.Rollout(run).group(
        blueprint(), sampler, random.Random(0)
    )
    assert server.requests
    assert {body["model"] for body, _ in server.requests} == {"user"}
    assert len(actions) == len(outcomes) == 2
    assert prompt

"""Step-wise RLVE (paper 3.4.2, D.2) on TRL's GRPO machinery: online episodes in the twin with a
simulated user, and group-relative advantages over several actions sampled at the same state.

Each training prompt is an RL blueprint (its JSON text, from `homeflow data blueprints`). For each
group of `num_generations` copies of a prompt, the rollout (`Rollout`, TRL's `rollout_func`)
plays one whole episode of the blueprint with the current policy, sampling, against the scripted
(or an LLM) user and the twin. It then picks one of the agent's states in it (the dialogue before
one of its messages, and the home as it was then): any of them, uniformly, in the step-wise
variant; the final action's (the last message that called a tool) in the ST variant. There it
samples `num_generations` actions and runs each on its own copy of that state. The outcome of an
action (`Outcome`) feeds the reward functions, and GRPO normalises the rewards within the group:
the advantage of an action is against the others taken in the same state.

Rewards (summed; TRL logs each), for N goal conditions:

- verifier_reward (step): +1/N per condition newly satisfied, -1/N per one newly broken, -1/N per
  entity newly changed that no condition covers.
- auditor_reward (step): the auditor's penalty for each call it refused or that failed
  (twin.auditor.PENALTIES: -1 forbidden ... -0.2 invalid data).
- outcome_reward (ST): 1 if after the action every condition holds and nothing else changed.
- format_reward: -1 if a tool call in the message cannot be read.
- code_check (CodeCheck): -1 if pyexec code uses a construct the sandbox refuses (getattr,
  setattr, eval, exec, compile, open, dunders...).
- code_length (CodeLength): -1 if pyexec code is longer than `code_limit` tokens (1,000).
- turn_check (TurnCheck): -1 if the state lies beyond `turn_limit` user turns (3).

The step-wise variant keeps a KL penalty to the SFT reference (beta 3e-3) and no entropy bonus; ST
uses no KL and an entropy bonus of 1e-4 (paper table 9). torch, transformers, datasets and trl
are imported here only, when a run is built.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from twin.auditor import Policy as AuditPolicy
from twin.home import Home
from twin.pyexec import restricted
from twin.tools import TOOL_SCHEMAS
from twin.verifier import Verifier

from ..backends.twin import TwinBackend
from ..bench.instances import play
from ..episode import Limits
from ..flywheel.blueprints import Blueprint, SplitError, check_split
from ..flywheel.datasets import DatasetError, dataset_file, read_rows
from ..flywheel.mcts import Players, SynthesisConfig
from ..policies import AssistantMessage, Message, PolicyError
from ..policies.local import LocalPolicy, load, prompt_settings, save_prompt_settings
from .common import (
    METRICS,
    Lora,
    TrainingError,
    check_output,
    checkpoint_args,
    claim_output,
    fit,
    make_settings,
    metrics_callback,
    peft_config,
    read_settings,
)

VARIANTS = ("step", "st")
# KL to the reference and entropy bonus per variant, as in the paper's table 9.
VARIANT_DEFAULTS = {"step": (3e-3, 0.0), "st": (0.0, 1e-4)}
SCRIPTED = "scripted"
MALFORMED = '"malformed_tool_call"'
VLLM_MODES = ("colocate", "server")
TOOLS = list(TOOL_SCHEMAS)  # the twin backend's, pyexec included
RewardFunction = Callable[..., list[float]]


@dataclass(frozen=True)
class RLRun:
    """One RL run: `model` is an SFT output folder (the policy and the KL reference);
    `blueprints` a directory made by `homeflow data blueprints` (seeds apart from the SFT data's);
    each optimizer step trains `episodes_per_step` states with `num_generations` actions each,
    `micro_batch` sequences a forward pass (1 keeps memory low; raise it on a GPU).
    `beta` (KL) and `entropy_coef` default to the variant's; `user` is "scripted" or
    `openai:URL#MODEL` (an LLM user); `use_vllm` samples the group's actions with vLLM as TRL
    runs it (`vllm_mode` colocate, or server at `vllm_server`, e.g. http://10.0.0.2:8000, by
    default this node's port 8000); the episodes leading to a state are sampled with
    transformers. `save_steps` > 0 keeps a checkpoint every that many steps, and a run whose
    output holds one continues from it."""

    model: Path
    blueprints: Path
    output: Path
    variant: str = "step"
    max_steps: int = 100
    episodes_per_step: int = 2
    num_generations: int = 4
    micro_batch: int = 1
    learning_rate: float = 5e-6
    beta: float | None = None
    entropy_coef: float | None = None
    temperature: float = 1.0
    max_new_tokens: int = 256
    max_turns: int = 4
    max_tool_calls: int = 8
    turn_limit: int = 3
    code_limit: int = 1000
    user: str = SCRIPTED
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    vllm_server: str | None = None
    lora: Lora | None = None
    save_steps: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        """Refuse settings that train nothing, or weights written into the source tree."""
        if self.variant not in VARIANTS:
            raise TrainingError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.num_generations < 2:
            raise TrainingError("num_generations must be at least 2: advantages compare actions")
        if min(self.max_steps, self.episodes_per_step, self.max_turns, self.max_tool_calls) < 1:
            raise TrainingError(
                "max_steps, episodes_per_step, max_turns and max_tool_calls must be >= 1"
            )
        if self.micro_batch < 1 or self.num_generations * self.episodes_per_step % self.micro_batch:
            raise TrainingError(
                "micro_batch must divide num_generations * episodes_per_step (the actions a step "
                f"trains), got {self.micro_batch}"
            )
        if self.learning_rate <= 0 or self.temperature <= 0 or self.max_new_tokens < 1:
            raise TrainingError("learning_rate and temperature must be > 0, max_new_tokens >= 1")
        if self.user != SCRIPTED and not self.user.startswith("openai:"):
            raise TrainingError(f"user must be scripted or openai:URL#MODEL, got {self.user!r}")
        self._check_vllm()
        checkpoint_args(self.save_steps)  # refuses a negative one
        check_output(self.output)

    def _check_vllm(self) -> None:
        """Refuse vLLM settings that TRL would reject only after the model has loaded."""
        if self.vllm_mode not in VLLM_MODES:
            raise TrainingError(f"vllm_mode must be one of {VLLM_MODES}, got {self.vllm_mode!r}")
        if self.vllm_server is not None and not (self.use_vllm and self.vllm_mode == "server"):
            raise TrainingError("vllm_server is for use_vllm: true with vllm_mode: server")
        if self.use_vllm and importlib.util.find_spec("vllm") is None:
            raise TrainingError("use_vllm needs vLLM: pip install 'trl[vllm]' (on a GPU machine)")

    @property
    def kl(self) -> float:
        return VARIANT_DEFAULTS[self.variant][0] if self.beta is None else self.beta

    @property
    def entropy(self) -> float:
        default = VARIANT_DEFAULTS[self.variant][1]
        return default if self.entropy_coef is None else self.entropy_coef


def load_config(path: Path, **overrides: Any) -> RLRun:
    """The run in a YAML file, with `overrides` (such as max_steps) applied."""
    return make_run(read_settings(path, overrides))


def make_run(raw: Mapping[str, Any]) -> RLRun:
    """An RLRun from plain settings, naming any key it does not know."""
    try:
        return RLRun(**make_settings(raw, RLRun, ("model", "blueprints", "output")))
    except TypeError as err:
        raise TrainingError(f"config: {err}") from err


def read_blueprints(directory: Path) -> list[Blueprint]:
    """The RL blueprints in a directory made by `homeflow data blueprints`."""
    if not directory.is_dir():
        raise TrainingError(
            f"blueprints {directory} is not a directory; make one with `homeflow data blueprints`"
        )
    try:
        rows = read_rows(dataset_file(directory))
    except DatasetError as err:
        raise TrainingError(str(err)) from err
    if not rows or "blueprint" not in rows[0]:
        raise TrainingError(f"{directory} holds no blueprints (`homeflow data blueprints`)")
    blueprints = [Blueprint.from_json(row["blueprint"]) for row in rows]
    try:
        check_split(*(blueprint.seed for blueprint in blueprints))
    except SplitError as err:
        raise TrainingError(f"{directory}: the benchmark is never trained on ({err})") from err
    return blueprints


# --- states and outcomes ------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one action did at a state: what the rewards are computed from (JSON-able)."""

    conditions: int
    progress: float = 0.0
    collateral: int = 0
    penalties: float = 0.0
    malformed: int = 0
    restricted: int = 0
    code_tokens: int = 0
    turn: int = 1
    success: bool = False


def states(messages: Sequence[Message]) -> list[int]:
    """The agent's states in an episode: the index of each of its messages."""
    return [i for i, message in enumerate(messages) if message["role"] == "assistant"]


def final_state(messages: Sequence[Message]) -> int:
    """The final action's state: the agent's last message that called a tool, else its last."""
    acting = [i for i in states(messages) if messages[i].get("tool_calls")]
    return (acting or states(messages))[-1]


def user_turns(messages: Sequence[Message]) -> int:
    """The user's utterances so far; the episode runner's answers to a malformed call (user
    messages holding a malformed_tool_call error) are not turns."""
    return sum(
        message["role"] == "user" and MALFORMED not in (message.get("content") or "")
        for message in messages
    )


def choose_state(messages: Sequence[Message], variant: str, rng: random.Random) -> int:
    """The state the group acts in: any of the agent's, uniformly (step), or the final
    action's (ST); after the last message if the agent never spoke."""
    found = states(messages)
    if not found:
        return len(messages)
    return final_state(messages) if variant == "st" else rng.choice(found)


async def home_at(blueprint: Blueprint, messages: Sequence[Message]) -> tuple[Home, Verifier]:
    """The blueprint's home after the tool calls of `messages`, replayed in order (the twin is
    deterministic), and a verifier of its conditions from the start, up to date."""
    home = blueprint.home()
    verifier = Verifier(home, blueprint.task.conditions(home))
    backend = TwinBackend(home)
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call["function"]
            await backend.run_tool(function["name"], json.loads(function["arguments"]))
    verifier.step(home)
    return home, verifier


async def outcomes_at(
    blueprint: Blueprint,
    messages: Sequence[Message],
    actions: Sequence[AssistantMessage],
    code_tokens: Callable[[str], int],
) -> list[Outcome]:
    """Run each action at the state after `messages`, on its own copy of the home: the state
    is replayed once and restored before each action."""
    home, verifier = await home_at(blueprint, messages)
    state = home.snapshot()
    turn = user_turns(messages)
    found = []
    for action in actions:
        home.restore(state)
        found.append(await _outcome(home, copy.copy(verifier), action, code_tokens, turn))
    return found


async def _outcome(
    home: Home,
    verifier: Verifier,
    action: AssistantMessage,
    code_tokens: Callable[[str], int],
    turn: int,
) -> Outcome:
    backend = TwinBackend(home)
    auditor = AuditPolicy()
    before = set(verifier.collateral(home))
    progress = penalties = 0.0
    codes: list[str] = []
    for call in action.tool_calls:
        result = await backend.run_tool(call.name, call.arguments)
        progress += verifier.step(home).reward
        failure = result.get("error") if result.get("success") is False else None
        if isinstance(failure, dict):
            penalties += auditor.verdict_for(failure["code"], failure["message"]).penalty
        if call.name == "pyexec" and isinstance(call.arguments.get("code"), str):
            codes.append(call.arguments["code"])
    report = verifier.step(home)
    return Outcome(
        conditions=len(verifier.conditions),
        progress=progress,
        collateral=len(set(report.collateral) - before),
        penalties=penalties,
        malformed=len(action.parse_errors),
        restricted=sum(len(restricted(code)) for code in codes),
        code_tokens=max(map(code_tokens, codes), default=0),
        turn=turn,
        success=report.done and not report.collateral,
    )


# --- rewards: TRL reward functions over the rollout's `outcome` column ---------------------------


def _outcomes(kwargs: Mapping[str, Any]) -> list[Outcome]:
    return [Outcome(**o) for o in kwargs["outcome"]]


def verifier_reward(completions: list[Any], **kwargs: Any) -> list[float]:
    """Conditions newly satisfied minus newly broken, minus entities newly changed that no
    condition covers, each 1/N of the task's N conditions."""
    return [o.progress - o.collateral / max(1, o.conditions) for o in _outcomes(kwargs)]


def auditor_reward(completions: list[Any], **kwargs: Any) -> list[float]:
    """The auditor's penalties for the calls it refused or that failed."""
    return [o.penalties for o in _outcomes(kwargs)]


def outcome_reward(completions: list[Any], **kwargs: Any) -> list[float]:
    """1 if after the action the task is done with nothing else changed, else 0 (ST)."""
    return [float(o.success) for o in _outcomes(kwargs)]


def format_reward(completions: list[Any], **kwargs: Any) -> list[float]:
    """-1 for a message with a tool call that cannot be read."""
    return [-1.0 if o.malformed else 0.0 for o in _outcomes(kwargs)]


def code_check(completions: list[Any], **kwargs: Any) -> list[float]:
    """CodeCheck: -1 for pyexec code with a restricted construct."""
    return [-1.0 if o.restricted else 0.0 for o in _outcomes(kwargs)]


def code_length(completions: list[Any], code_limit: list[int], **kwargs: Any) -> list[float]:
    """CodeLength: -1 for pyexec code longer than the limit, in tokens."""
    outcomes = _outcomes(kwargs)
    return [
        -1.0 if o.code_tokens > limit else 0.0
        for o, limit in zip(outcomes, code_limit, strict=True)
    ]


def turn_check(completions: list[Any], turn_limit: list[int], **kwargs: Any) -> list[float]:
    """TurnCheck: -1 for acting beyond the turn limit."""
    outcomes = _outcomes(kwargs)
    return [-1.0 if o.turn > limit else 0.0 for o, limit in zip(outcomes, turn_limit, strict=True)]


REWARDS: dict[str, list[RewardFunction]] = {
    "step": [verifier_reward, auditor_reward, format_reward, code_check, code_length, turn_check],
    "st": [outcome_reward, format_reward, code_check, code_length, turn_check],
}


# --- the rollout ----------------------------------------------------------------------------------


class Sampler:
    """The trainer's current model, sampling at the run's temperature: one message to play an
    episode with (a Policy), or a group of actions at a state (as token ids)."""

    def __init__(self, run: RLRun, trainer: Any, model: Any) -> None:
        self.run = run
        self.trainer = trainer
        self.local = LocalPolicy(
            model,
            trainer.processing_class,
            max_new_tokens=run.max_new_tokens,
            **prompt_settings(run.model),
        )

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The next message of an episode, sampled."""
        return await asyncio.to_thread(
            self.local.generate, messages, tools, temperature=self.run.temperature
        )

    def group(
        self, messages: list[Message], tools: list[dict[str, Any]]
    ) -> tuple[list[int], list[list[int]], list[list[float]] | None]:
        """The prompt's token ids, `num_generations` sampled completions (each ending with its
        stop token unless cut off at max_new_tokens) and, from vLLM, their tokens' logprobs."""
        import torch

        tokenizer = self.local.tokenizer
        prompt = tokenizer(self.local.prompt(messages, tools), add_special_tokens=False)[
            "input_ids"
        ]
        count = self.run.num_generations
        if self.trainer.use_vllm:  # as TRL's own generation calls it: the prompt once per action
            _, completions, logprobs, _ = self.trainer.vllm_generation.generate(
                prompts=[prompt] * count, images=None, num_generations=count
            )
            return prompt, completions, [[top[0] for top in seq] for seq in logprobs]
        stops = self.local.stop_ids
        with torch.inference_mode():
            output = self.local.model.generate(
                torch.tensor([prompt], device=self.local.model.device),
                do_sample=True,
                temperature=self.run.temperature,
                num_return_sequences=count,
                max_new_tokens=self.local.room(len(prompt), self.run.max_new_tokens),
                eos_token_id=stops,
                pad_token_id=tokenizer.pad_token_id or stops[0],
            )
        completions = [_until_stop(row[len(prompt) :].tolist(), stops) for row in output]
        return prompt, completions, None


def _until_stop(ids: list[int], stops: Sequence[int]) -> list[int]:
    """Token ids up to and with the first stop token (the rest is padding)."""
    for position, token in enumerate(ids):
        if token in stops:
            return ids[: position + 1]
    return ids


class Rollout:
    """TRL's rollout_func: per group of identical prompts (one RL blueprint), an episode with the
    current policy, a state in it, and the group's actions there with their outcomes."""

    def __init__(self, run: RLRun) -> None:
        self.run = run
        self.limits = Limits(max_turns=run.max_turns, max_tool_calls=run.max_tool_calls)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, Any]:
        from trl.models.utils import unwrap_model_for_generation

        size = self.run.num_generations
        out: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "outcome": []}
        logprobs: list[list[float]] = []
        # Seeded by step, so a run continued from a checkpoint draws what it would have drawn.
        rng = random.Random(f"{self.run.seed}:{trainer.state.global_step}")
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator) as model:
            sampler = Sampler(self.run, trainer, model)
            for start in range(0, len(prompts), size):
                blueprint = Blueprint.from_json(prompts[start])
                prompt, actions, sampled, outcomes = asyncio.run(
                    self.group(blueprint, sampler, rng)
                )
                out["prompt_ids"] += [prompt] * size
                out["completion_ids"] += actions
                out["outcome"] += [asdict(o) for o in outcomes]
                logprobs += sampled or []
        count = len(out["outcome"])
        return out | {
            "logprobs": logprobs or None,
            "code_limit": [self.run.code_limit] * count,
            "turn_limit": [self.run.turn_limit] * count,
        }

    async def group(
        self, blueprint: Blueprint, sampler: Sampler, rng: random.Random
    ) -> tuple[list[int], list[list[int]], list[list[float]] | None, list[Outcome]]:
        """One episode, its chosen state, and the group's actions there with their outcomes."""
        seed = rng.randrange(2**31)  # the user words each episode anew
        players = Players(SynthesisConfig(user=self.run.user))  # its session lives in this loop
        try:
            user = lambda home: players.user(blueprint, seed, home)  # noqa: E731
            episode = await play(blueprint, sampler, seed, self.limits, user=user)
        finally:
            await players.close()
        before = episode.messages[: choose_state(episode.messages, self.run.variant, rng)]
        prompt, actions, logprobs = await asyncio.to_thread(sampler.group, before, TOOLS)
        tokenizer = sampler.local.tokenizer

        def tokens(code: str) -> int:
            return len(tokenizer(code, add_special_tokens=False)["input_ids"])

        replies = [sampler.local.reply(ids) for ids in actions]
        outcomes = await outcomes_at(blueprint, before, replies, tokens)
        return prompt, actions, logprobs, outcomes


# --- the trainer ----------------------------------------------------------------------------------


def build_trainer(
    run: RLRun,
    model: Any,
    tokenizer: Any,
    blueprints: list[Blueprint],
    console: Console | None = None,
) -> Any:
    """A GRPOTrainer for the run: the blueprints as prompts, the rollout, the variant's rewards,
    logging to the console and metrics.jsonl."""
    import os

    import torch
    from datasets import Dataset  # type: ignore[import-untyped]
    from transformers import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer  # type: ignore[attr-defined]

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is TRL's experimental API
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    dataset = Dataset.from_list([{"prompt": b.to_json()} for b in blueprints])
    args = GRPOConfig(
        output_dir=str(run.output),
        max_steps=run.max_steps,
        learning_rate=run.learning_rate,
        per_device_train_batch_size=run.micro_batch,
        gradient_accumulation_steps=run.num_generations * run.episodes_per_step // run.micro_batch,
        num_generations=run.num_generations,
        max_completion_length=run.max_new_tokens,
        temperature=run.temperature,
        beta=run.kl,
        entropy_coef=run.entropy,
        use_vllm=run.use_vllm,
        vllm_mode=run.vllm_mode,
        vllm_server_base_url=run.vllm_server,
        seed=run.seed,
        logging_steps=1,
        report_to=[],
        **checkpoint_args(run.save_steps),
        disable_tqdm=True,
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    )
    trainer: Any = GRPOTrainer(
        model=model,
        reward_funcs=list[Any](REWARDS[run.variant]),
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        peft_config=peft_config(run.lora),
        rollout_func=Rollout(run),
        callbacks=[
            metrics_callback(run.output / METRICS, console or Console(), f"rl {run.variant}")
        ],
    )
    trainer.remove_callback(PrinterCallback)
    return trainer


def train(run: RLRun, console: Console | None = None) -> dict[str, float]:
    """Load the SFT model, train it with step-wise RLVE (from the output's last checkpoint, if
    any), and save it, with its tokenizer and prompt settings, to the output directory; the final
    training metrics."""
    blueprints = read_blueprints(run.blueprints)
    claim_output(run)
    try:
        model, tokenizer = load(run.model)
    except PolicyError as err:
        raise TrainingError(str(err)) from err
    model.train()
    metrics = fit(build_trainer(run, model, tokenizer, blueprints, console), run.output, console)
    save_prompt_settings(run.output, compact=prompt_settings(run.model).get("compact", False))
    return metrics

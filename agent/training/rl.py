"""Step-wise RLVE (paper 3.4.2, D.2) on TRL's GRPO machinery: online episodes in the twin with a
simulated user, and group-relative advantages over several actions sampled at the same state.

Each training prompt is an RL blueprint (its JSON text, from `homeflow data blueprints`). For each
group of `num_generations` copies of a prompt, the rollout (`Rollout`, TRL's `rollout_func`)
plays one whole episode of the blueprint in HomeEnv-v1 (agent.envs) with the current policy,
sampling, against the scripted (or an LLM) user and the twin. It then picks one of the agent's
states in it (the dialogue before one of its messages, and the home as it was then): any of them,
uniformly, in the step-wise variant; the final action's (the last message that called a tool) in
the ST variant. There it samples `num_generations` actions and steps each in the env from its
snapshot of that state. The outcome of an
action (twin.reward.ActionOutcome) feeds the reward functions, and GRPO normalises the rewards
within the group: the advantage of an action is against the others taken in the same state.

The rewards are twin.reward's terms for the variant (step: verifier_reward, auditor_reward; ST:
outcome_reward; both: format_reward, code_check, code_length, turn_check), one TRL reward function
each, so TRL logs every term and sums them into the step reward.

The step-wise variant keeps a KL penalty to the SFT reference (beta 3e-3) and no entropy bonus; ST
uses no KL and an entropy bonus of 1e-4 (paper table 9). torch, transformers, datasets, trl and
gymnasium (agent.envs) are imported here only, when a run is built.
"""

from __future__ import annotations

import asyncio
import importlib.util
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from twin.reward import TERMS, VARIANTS, ActionOutcome, reward_terms
from twin.tools import TOOL_SCHEMAS

from ..episode import EpisodeLimits
from ..flywheel.blueprints import Blueprint, SplitError, check_split
from ..flywheel.datasets import DatasetError, dataset_file, read_rows
from ..flywheel.mcts import Players, SynthesisConfig
from ..policies import AssistantMessage, ContextFull, Message, PolicyError
from ..policies.local import (
    LocalPolicy,
    load,
    prompt_settings,
)
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
    precision_args,
    read_settings,
)

if TYPE_CHECKING:
    from ..envs import DialogueEnv, EnvState

# KL to the reference and entropy bonus per variant, as in the paper's table 9.
VARIANT_DEFAULTS = {"step": (3e-3, 0.0), "st": (0.0, 1e-4)}
SCRIPTED = "scripted"
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


def states(messages: Sequence[Message]) -> list[int]:
    """The agent's states in an episode: the index of each of its messages."""
    return [i for i, message in enumerate(messages) if message["role"] == "assistant"]


def final_state(messages: Sequence[Message]) -> int:
    """The final action's state: the agent's last message that called a tool, else its last."""
    acting = [i for i in states(messages) if messages[i].get("tool_calls")]
    return (acting or states(messages))[-1]


def choose_state(messages: Sequence[Message], variant: str, rng: random.Random) -> int:
    """The state the group acts in: any of the agent's, uniformly (step), or the final
    action's (ST); after the last message if the agent never spoke."""
    found = states(messages)
    if not found:
        return len(messages)
    return final_state(messages) if variant == "st" else rng.choice(found)


# --- rewards: TRL reward functions over the rollout's `outcome` column ---------------------------


def _reward_function(variant: str, term: str) -> RewardFunction:
    """TRL's reward function for one of the variant's terms, named for it (TRL logs the name),
    over the rollout's `outcome`, `code_limit` and `turn_limit` columns."""

    def reward(
        completions: list[Any], code_limit: list[int], turn_limit: list[int], **kwargs: Any
    ) -> list[float]:
        rows = zip(kwargs["outcome"], code_limit, turn_limit, strict=True)
        return [
            reward_terms(ActionOutcome(**o), variant, code_limit=c, turn_limit=t)[term]
            for o, c, t in rows
        ]

    reward.__name__ = reward.__qualname__ = term
    return reward


REWARDS = {
    variant: [_reward_function(variant, term) for term in terms] for variant, terms in TERMS.items()
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

    def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The next message of an episode, sampled."""
        return self.local.generate(messages, tools, temperature=self.run.temperature)

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
        # The prompt is computed once (or taken from the episode's cache), not once per action.
        cache = self.local.prefix_cache(prompt)
        if cache is not None:
            cache.batch_repeat_interleave(count)
        ids = torch.tensor([prompt] * count, device=self.local.model.device)
        with torch.inference_mode():
            output = self.local.model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                past_key_values=cache,
                do_sample=True,
                temperature=self.run.temperature,
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
        self.limits = EpisodeLimits(max_turns=run.max_turns, max_tool_calls=run.max_tool_calls)

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
    ) -> tuple[list[int], list[list[int]], list[list[float]] | None, list[ActionOutcome]]:
        """One episode, its chosen state, and the group's actions there with their outcomes,
        all played in HomeEnv-v1: the episode stepped with sampled messages, then each action
        stepped from the env's state at the chosen message."""
        from ..envs import DialogueEnv  # gymnasium, with the train extra

        seed = rng.randrange(2**31)  # the user words each episode anew
        players = Players(SynthesisConfig(user=self.run.user))  # its session lives in this loop
        tokenizer = sampler.local.tokenizer

        def tokens(code: str) -> int:
            return len(tokenizer(code, add_special_tokens=False)["input_ids"])

        env = DialogueEnv(
            blueprint,
            self.limits,
            user=lambda home: players.user(blueprint, seed, home),
            loop=asyncio.get_running_loop(),
            variant=self.run.variant,
            code_limit=self.run.code_limit,
            turn_limit=self.run.turn_limit,
            tokens=tokens,
        )
        try:
            saved = await asyncio.to_thread(_play, env, sampler, seed)
            messages = env.trajectory.messages
            before = messages[: choose_state(messages, self.run.variant, rng)]
            prompt, actions, logprobs = await asyncio.to_thread(sampler.group, before, TOOLS)
            replies = [sampler.local.reply(ids) for ids in actions]
            outcomes = await asyncio.to_thread(_outcomes, env, saved[len(before)], replies)
        finally:
            env.close()
            await players.close()
        return prompt, actions, logprobs, outcomes


def _play(env: DialogueEnv, sampler: Sampler, seed: int) -> dict[int, EnvState]:
    """Play the env's episode with the sampler; the env's state before each agent message, by
    the message's index."""
    env.reset(options={"user_seed": seed})
    saved: dict[int, EnvState] = {}
    over = False
    while not over:
        trajectory = env.trajectory
        saved[len(trajectory.messages)] = env.snapshot()
        try:
            reply = sampler.act(list(trajectory.messages), env.tool_schemas)
        except ContextFull:
            break
        _, _, terminated, truncated, _ = env.step(reply)
        over = terminated or truncated
    return saved


def _outcomes(
    env: DialogueEnv, state: EnvState, actions: Sequence[AssistantMessage]
) -> list[ActionOutcome]:
    """Each action's outcome, stepped from `state`."""
    found = []
    for action in actions:
        env.restore(state)
        found.append(ActionOutcome(**env.step(action)[4]["outcome"]))
    return found


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
        **precision_args(),
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
        model, tokenizer = load(run.model, dtype="float32")
    except PolicyError as err:
        raise TrainingError(str(err)) from err
    model.train()
    trainer = build_trainer(run, model, tokenizer, blueprints, console)
    compact = prompt_settings(run.model).get("compact", False)
    return fit(trainer, run.output, console, base=run.model, compact=compact)

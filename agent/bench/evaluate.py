"""SmartHome-Bench's evaluator: any policy plays each instance once on the instance's twin home,
and the home's state decides (every goal condition holds and nothing else changed), never the text.

An evaluation lives in a directory kept by agent.flywheel.runner (resumable, parallel, with a
progress bar): one record per instance, its score and its whole trajectory. `summarise` turns the
records into success per task type and overall, with mean tool calls, output tokens, policy
latency, and the auditor's refusals; `write_results` writes them as results.json and the
trajectories as trajectories.jsonl, which report.py turns into tables and charts.
"""

from __future__ import annotations

import asyncio
import json
import statistics
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from twin.atomic import write_text
from twin.auditor import PENALTIES
from twin.tools import POLICY_CODES

from ..episode import EpisodeLimits, Trajectory
from ..flywheel import runner
from ..flywheel.blueprints import Blueprint
from ..flywheel.datasets import repeats_call
from ..policies import AssistantMessage, Message, Policy
from ..policies.guided import home_choices
from ..policies.openai import OpenAIPolicy
from ..policies.specs import SpecError, openai_policy, parse_policy, policy_kind
from ..policies.teacher import TeacherPolicy
from .assist import EVALUATION, AssistCase, evaluate_case, job
from .conversation import ConversationAgentError, check_agent, is_agent
from .ha import Server, play_on_server
from .instances import HELD_OUT_PREFIX, SPLITS, BenchInstance, in_order, play, solved

if TYPE_CHECKING:
    from twin.home import Home

    from ..policies.local import LocalPolicy

TEACHER, NOOP = "teacher", "noop"
POLICY_FORMS = "teacher|noop|local[:PATH]|openai:URL#MODEL"
OVERALL = "overall"
RESULTS, TRAJECTORIES = "results.json", "trajectories.jsonl"
Record = dict[str, Any]
DEFAULT_LIMITS = EpisodeLimits()
T = TypeVar("T")
Instance = BenchInstance | AssistCase  # a benchmark instance or an assist case


class NoOpPolicy:
    """The lower bound: replies to every turn without touching the home."""

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """An acknowledgement, and nothing done."""
        return AssistantMessage("Okay.")


def check_policy(spec: str, server: Server | None = None) -> str:
    """`spec` if it names a policy the evaluator can run (a Home Assistant conversation agent's
    id with a `server`); SpecError or ConversationAgentError say the forms otherwise."""
    if is_agent(spec):
        if server is None:
            raise ConversationAgentError(
                f"{spec} is Home Assistant's conversation agent: run it with --backend ha"
            )
        check_agent(spec)
    elif spec not in (TEACHER, NOOP):
        try:
            policy_kind(spec)
        except SpecError:
            raise SpecError(f"use {POLICY_FORMS}, got {spec!r}") from None
    return spec


def make_policy(spec: str, blueprint: Blueprint, guided: bool = False) -> Policy:
    """The policy of `spec` for one instance: the teacher knows its task (the upper bound), the
    others are `model_policy`'s."""
    if spec == TEACHER:
        return TeacherPolicy(blueprint.task, blueprint.seed, language=blueprint.language)
    return model_policy(spec, blueprint.home, guided)


def model_policy(spec: str, home: Callable[[], Home], guided: bool = False) -> Policy:
    """The no-op, a server's model, or a local model, loaded once per process and, `guided`,
    held to the values the `home()` it will act on has."""
    if spec == NOOP:
        return NoOpPolicy()
    if policy_kind(spec) == "openai":
        return openai_policy(spec)
    local = _local(spec, guided)
    if guided:
        local.choices = home_choices(home())
    return local


@cache
def _local(spec: str, guided: bool) -> LocalPolicy:
    return cast("LocalPolicy", parse_policy(spec, {} if guided else None))


# --- one instance ---------------------------------------------------------------------------------


def score(trajectory: Trajectory) -> Record:
    """An episode's outcome by the home's state after its last tool call, and what it cost."""
    collateral = list(trajectory.steps[-1].collateral) if trajectory.steps else []
    return {
        "success": solved(trajectory),
        "done": trajectory.done,
        "collateral": collateral,
        **costs(trajectory),
    }


def costs(trajectory: Trajectory) -> Record:
    """What an episode cost, how it ended, and whether the agent repeated an identical call
    (with no user message between: the loop small models fall into)."""
    return {
        "tool_calls": trajectory.tool_calls,
        "output_tokens": trajectory.completion_tokens,
        "violations": violations(trajectory.messages),
        "latency_s": trajectory.policy_latency_s,
        "end_reason": trajectory.end_reason,
        "turns": trajectory.turns,
        "repeats": repeats_call(trajectory.messages),
    }


# The auditor's refusals that are mistakes: asking the user to confirm an action is none.
VIOLATIONS = frozenset(code for code in POLICY_CODES if PENALTIES[code] < 0)


def violations(messages: Iterable[Message]) -> int:
    """Tool results in which the auditor refused a call as a mistake (VIOLATIONS)."""
    count = 0
    for message in messages:
        if message.get("role") != "tool":
            continue
        try:
            result = json.loads(message.get("content") or "")
        except json.JSONDecodeError:
            continue
        error = result.get("error") if isinstance(result, dict) else None
        count += isinstance(error, dict) and error.get("code") in VIOLATIONS
    return count


def evaluate_instance(
    job: Mapping[str, str],
    policy: str,
    max_turns: int,
    max_tool_calls: int,
    guided: bool,
    server: Server | None = None,
) -> Record:
    """The runner's work for one instance (`{"id", "type", "blueprint": JSON}`): its record,
    played on the twin, or on a Home Assistant `server` (where `policy` may be a conversation
    agent's id); an assist case's (`"case"` in the job) is assist.evaluate_case's."""
    if "case" in job:
        return evaluate_case(job, policy, max_turns, max_tool_calls, guided, server)
    limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=max_tool_calls)
    blueprint = Blueprint.from_json(job["blueprint"])
    agent: Policy | str = policy if is_agent(policy) else make_policy(policy, blueprint, guided)
    if server is None:
        episode = play(blueprint, cast(Policy, agent), limits=limits)
    else:
        episode = play_on_server(server, job["id"], blueprint, agent, limits)
    trajectory = asyncio.run(closing(agent, episode))
    record = {"id": job["id"], "type": job["type"], **score(trajectory)}
    return record | {"trajectory": asdict(trajectory)}


async def closing(agent: Policy | str, episode: Awaitable[T]) -> T:
    """`episode`'s result, closing a server policy's connections after it (they live in this
    event loop)."""
    try:
        return await episode
    finally:
        if isinstance(agent, OpenAIPolicy):
            await agent.close()


# --- a whole run ----------------------------------------------------------------------------------


def evaluate(
    instances: Sequence[Instance],
    directory: Path,
    policy: str,
    *,
    limits: EpisodeLimits = DEFAULT_LIMITS,
    guided: bool = False,
    workers: int | None = 1,
    config: Mapping[str, Any] | None = None,
    progress: bool = True,
    server: Server | None = None,
) -> runner.Outcome:
    """Run (or continue) `policy` on `instances` in `directory`; `config` adds what defines the
    run beyond the policy and limits (the benchmark, the subset), so that a directory holds one.
    With a Home Assistant `server`, on it, one instance at a time (ha.py says why). Assist
    cases (assist.py) run the same way, scored by their format's rule."""
    check_policy(policy, server)
    cases = [i for i in instances if isinstance(i, AssistCase)]
    # Not the server's address: a Home Assistant restarted elsewhere (bench/ha_agent.py starts a
    # fresh one each time) continues the same run.
    where = {} if server is None else {"backend": "ha"}
    defined = {
        "evaluation": EVALUATION if cases else "smarthome-bench",
        "policy": policy,
        "max_turns": limits.max_turns,
        "max_tool_calls": limits.max_tool_calls,
        "guided": guided,
        **where,
        **(config or {}),
    }
    jobs = [(i.id, _job(i)) for i in instances]
    work = partial(
        evaluate_instance,
        policy=policy,
        max_turns=limits.max_turns,
        max_tool_calls=limits.max_tool_calls,
        guided=guided,
        server=server,
    )
    workers = workers if server is None else 1
    return runner.run(
        directory, jobs, work, defined, workers=workers, progress=progress, description=policy
    )


def _job(instance: Instance) -> dict[str, str]:
    if isinstance(instance, AssistCase):
        return job(instance)
    blueprint = instance.blueprint.to_json()
    return {"id": instance.id, "type": instance.task_type, "blueprint": blueprint}


def select(
    instances: Sequence[Instance],
    subset: int | None = None,
    types: Sequence[str] | None = None,
) -> list[Instance]:
    """The instances of `types` (all without), and of each type only the first `subset` (of
    each split's, where the benchmark has an out-of-distribution one)."""
    chosen: list[Instance] = []
    taken: dict[tuple[str, str], int] = {}
    for instance in instances:
        kind = instance.task_type
        key = (kind, instance.split if isinstance(instance, BenchInstance) else "id")
        if (types is None or kind in types) and (subset is None or taken.get(key, 0) < subset):
            chosen.append(instance)
            taken[key] = taken.get(key, 0) + 1
    return chosen


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per task type (in the benchmark's order), per split where the out-of-distribution one
    is among the records (ID and OOD, side by side), and overall: instances, success rate,
    mean tool calls, output tokens and policy seconds per instance, auditor violations in all,
    and the shares of episodes that ended at the tool-call limit and that repeated a call
    (records from before these were kept count as neither)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        groups.setdefault(record["type"], []).append(record)
    ordered = {name: groups[name] for name in in_order(groups)}
    held = [r for r in records if str(r.get("id", "")).startswith(HELD_OUT_PREFIX)]
    if held:
        ordered[SPLITS["id"]] = [r for r in records if r not in held]
        ordered[SPLITS["ood"]] = held
    ordered[OVERALL] = list(records)
    return {
        name: {
            "instances": len(group),
            "success": statistics.fmean(r["success"] for r in group) if group else 0.0,
            "tool_calls": _mean(group, "tool_calls"),
            "output_tokens": _mean(group, "output_tokens"),
            "latency_s": _mean(group, "latency_s"),
            "violations": sum(r["violations"] for r in group),
            "at_call_limit": _share(group, lambda r: r.get("end_reason") == "max_tool_calls"),
            "repeats": _share(group, lambda r: bool(r.get("repeats"))),
        }
        for name, group in ordered.items()
    }


def write_results(directory: Path) -> Path:
    """results.json (what ran, the summary and each instance's score, by id) and
    trajectories.jsonl (each instance's trajectory) from the evaluation in `directory`; the
    results' path."""
    ordered = sorted(runner.read_records(directory), key=lambda record: record["id"])
    results = {
        "name": directory.name,
        "config": json.loads((directory / "manifest.json").read_text(encoding="utf-8")),
        "summary": summarise(ordered),
        "instances": [
            {k: v for k, v in r.items() if k not in ("key", "trajectory")} for r in ordered
        ],
    }
    lines = "".join(
        json.dumps({"id": r["id"], "trajectory": r["trajectory"]}, ensure_ascii=False) + "\n"
        for r in ordered
    )
    write_text(directory / TRAJECTORIES, lines)
    path = directory / RESULTS
    write_text(path, json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    return path


def _mean(group: Sequence[Mapping[str, Any]], key: str) -> float:
    return statistics.fmean(r[key] for r in group) if group else 0.0


def _share(group: Sequence[Mapping[str, Any]], holds: Callable[[Mapping[str, Any]], bool]) -> float:
    return statistics.fmean(holds(r) for r in group) if group else 0.0

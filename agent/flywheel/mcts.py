"""MCTS-Flow (paper 3.3.2, 4.3.2) and the two baselines of the paper's ablation.

MCTS-Flow searches a tree of dialogue prefixes for a blueprint. A node is a prefix (the messages
so far, the twin's state as a snapshot and the verifier's view of it) whose next speaker is the
user or the agent; a child adds one user utterance (the scripted user, with a fresh seed) or one
whole agent turn (the policy, with a fresh seed, acting until it replies). Agent nodes get
`k_agent` children and user nodes `k_user` (asymmetric branching, k_agent > k_user by default):
the agent's moves are where episodes go wrong.

Each iteration selects down the tree by UCT and grows one new child at the first node where the
new child wins, then rolls out from it to the end, each step a node of the tree. An unexpanded
slot is scored as a child with one visit at its parent's mean value, so the search deepens where
a prefix is good and widens where it fails: a failed late turn is re-sampled from its own
parent, and the verified prefix above it is reused, not regenerated (rollout saving). A leaf's
value is twin.reward.episode_value: 1 for success (twin.reward.solved: every condition holds,
nothing else changed) and otherwise half the verifier's progress (share of conditions satisfied,
minus collateral changes per condition); it is backed up to the root. Every successful leaf is
a Trajectory in run_episode's format; leaves with the same tool calls and utterances count once.

Baselines: "linear" is one rollout down the same tree (blueprint-grounded, verified: the user
sees the verifier's status and the leaf is checked); "roleplay" has no blueprint filter and no
verification while generating: the scripter's raw candidate for the seed (as an LLM would write
it, unfiltered) is played once with its fixed user turns, then the verifier judges the end state
post hoc; a goal it cannot evaluate (an intent or condition that does not compile on the home)
counts as a failure.
"""

from __future__ import annotations

import asyncio
import copy
import json
import math
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import aiohttp

from twin.errors import TwinError
from twin.home import Home, Snapshot
from twin.reward import episode_value, solved
from twin.verifier import Report, Verifier

from ..backends.twin import TwinBackend
from ..episode import EpisodeLimits, EpisodeRun, Trajectory, run_episode
from ..policies import Message, Policy
from ..policies.careless import CarelessTeacher
from ..policies.openai import OpenAIPolicy
from ..policies.specs import SpecError, openai_policy, parse_policy, policy_kind
from ..policies.teacher import TeacherPolicy
from ..prompt import system_prompt
from ..task import Answer, Intent, Task, TaskError
from .blueprints import Blueprint, Candidate, Rejected, draft
from .user import LLMUser, ScriptedUser, UserSimulator

METHODS = ("mcts", "linear", "roleplay")
SCRIPTED = "scripted"
STRATEGY_TRIES = 16  # seeds tried for an agent candidate with a strategy its siblings lack
# The policy kinds (agent.policies.specs) that may play the teacher, and the user.
TEACHERS, USERS = ("local", "openai"), ("openai",)
USER, AGENT = "user", "agent"
# The policy for a task and a seed: each agent turn is sampled with its own seed.
PolicyFactory = Callable[[Task, int], Policy]


@dataclass(frozen=True)
class SynthesisConfig:
    """How to synthesise: the method, branching, search budget (rollouts), the UCT constant,
    the teacher's fallibility (`careless` slips, `mistake_rate` recoverable errors), the seed,
    the episode limits, and the scripter's error rate (for roleplay's unfiltered candidates).

    `teacher` is "scripted" (the careless teacher) or a policy spec, `local[:PATH]` or
    `openai:URL#MODEL`; `user` is "scripted" or `openai:URL#MODEL` (an LLMUser; role-play keeps
    its fixed turns). A server samples at `temperature` with each node's seed, so that the
    children of a node are variants; a local model decodes greedily."""

    method: str = "mcts"
    k_user: int = 1
    k_agent: int = 3
    iterations: int = 8
    c_uct: float = 1.0
    careless: float = 0.1
    mistake_rate: float = 0.0
    seed: int = 0
    limits: EpisodeLimits = field(default_factory=EpisodeLimits)
    error_rate: float = 0.2
    teacher: str = SCRIPTED
    user: str = SCRIPTED
    temperature: float = 0.8

    def __post_init__(self) -> None:
        """Refuse settings that make no search."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if self.k_user < 1 or self.k_agent < 1 or self.iterations < 1:
            raise ValueError("k_user, k_agent and iterations must be at least 1")
        if self.c_uct < 0 or not 0 <= self.careless <= 1 or not 0 <= self.mistake_rate <= 1:
            raise ValueError("c_uct must be >= 0; careless and mistake_rate 0-1")
        check_spec(self.teacher, TEACHERS)
        check_spec(self.user, USERS)


def check_spec(spec: str, kinds: Sequence[str]) -> str:
    """`spec` if it is "scripted" or a well-formed spec of one of the policy `kinds`."""
    forms = {"local": "local[:PATH]", "openai": "openai:URL#MODEL"}
    if spec != SCRIPTED and spec.partition(":")[0] not in kinds:
        *others, last = [SCRIPTED, *(forms[kind] for kind in kinds)]
        raise SpecError(f"use {', '.join(others)} or {last}, got {spec!r}")
    if spec != SCRIPTED:
        policy_kind(spec)
    return spec


class Players:
    """Who speaks at each node, from the config: the agent (the factory given, else the
    teacher's spec) and the user. Servers share one HTTP session, which `close` closes."""

    def __init__(self, config: SynthesisConfig, policy: PolicyFactory | None = None) -> None:
        self.config = config
        self.policy = policy
        self._session: aiohttp.ClientSession | None = None

    def agent(self, task: Task, seed: int, language: str = "en") -> Policy:
        """The agent for one turn (or one role-play episode), sampled by `seed`; the scripted
        teacher replies in the user's `language`."""
        teacher, config = self.config.teacher, self.config
        if self.policy is not None:
            return self.policy(task, seed)
        if teacher == SCRIPTED:
            return CarelessTeacher(task, seed, config.careless, config.mistake_rate, language)
        if policy_kind(teacher) == "local":
            return _local(teacher)
        return self._server(teacher, seed)

    def distinct(
        self, task: Task, seed: int, siblings: Sequence[int], messages: Sequence[Message]
    ) -> int | None:
        """A seed for an agent candidate whose next tool calls (the scripted teacher's, a pure
        function of the seed and the conversation; none for a question or the reply) none of
        its siblings' seeds gives: the k_agent candidates of a node then try different ways
        (look first or ask, which query, batched calls, a slip) instead of spending policy
        calls on the same one (the same calls in other words make the same trajectory). `seed`
        when the agent is no scripted teacher; None when no other message comes in
        STRATEGY_TRIES seeds (the node has all the candidates worth a call)."""
        if self.policy is not None or self.config.teacher != SCRIPTED:
            return seed
        config = self.config

        def planned(candidate: int) -> str:  # the careful plan: slips are chance, no strategy
            teacher = TeacherPolicy(task, candidate, config.mistake_rate)
            calls = [(c.name, c.arguments) for c in teacher.next_message(messages).tool_calls]
            return json.dumps(calls, sort_keys=True)  # a text: a question or the reply

        taken = {planned(s) for s in siblings}
        tries = (seed, *(zlib.crc32(f"{seed}:{k}".encode()) for k in range(1, STRATEGY_TRIES)))
        return next((s for s in tries if planned(s) not in taken), None)

    def user(self, blueprint: Blueprint, seed: int, home: Home) -> UserSimulator:
        """The user for one utterance, sampled by `seed`, reading `home` as it is."""
        if self.config.user == SCRIPTED:
            return ScriptedUser(blueprint.task, seed, home=home)
        scene = blueprint.scenes[0] if blueprint.scenes else None
        llm = self._server(self.config.user, seed)
        return LLMUser(llm, blueprint.task, home=home, profile=blueprint.profile, scene=scene)

    def _server(self, spec: str, seed: int) -> OpenAIPolicy:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        options = {"temperature": self.config.temperature, "seed": seed}
        return openai_policy(spec, session=self._session, **options)

    async def close(self) -> None:
        """Close the servers' session, if one was opened."""
        if self._session is not None:
            await self._session.close()
            self._session = None


@cache
def _local(spec: str) -> Policy:
    """A local model, loaded once per process (it is greedy: every seed plays the same)."""
    return parse_policy(spec)


@dataclass
class Synthesis:
    """What one blueprint yielded: the trajectories (verified successes; for roleplay its one
    rollout with the post-hoc verdict in `done`) and what they cost."""

    blueprint_seed: int
    method: str
    trajectories: list[Trajectory] = field(default_factory=list)
    policy_calls: int = 0
    user_calls: int = 0
    rollouts: int = 0
    prefix_reuses: int = 0
    rollouts_saved: int = 0
    wall_s: float = 0.0

    @property
    def verified(self) -> list[Trajectory]:
        """The trajectories the verifier passed."""
        return [t for t in self.trajectories if t.done]

    @property
    def success(self) -> bool:
        """Whether at least one verified trajectory came out."""
        return bool(self.verified)


@dataclass(eq=False)
class Node:
    """A dialogue prefix; `role` speaks next. Value and visits are UCT's statistics."""

    role: str
    trajectory: Trajectory
    snapshot: Snapshot
    verifier: Verifier
    report: Report
    parent: Node | None = None
    depth: int = 0
    terminal: bool = False
    success: bool = False
    seed: int = 0  # the seed its last speaker was sampled with
    # For an agent node: the seed of its next candidate, None once no other strategy is left.
    next_seed: int | None = None
    full: bool = False
    children: list[Node] = field(default_factory=list)
    visits: int = 0
    value: float = 0.0
    exhausted: bool = False

    @property
    def mean(self) -> float:
        return self.value / self.visits if self.visits else 0.0


def uct(mean: float, visits: int, parent_visits: int, c: float) -> float:
    """UCT: mean value plus c * sqrt(ln N(parent) / N(child)); unvisited comes first."""
    if visits == 0:
        return math.inf
    return mean + c * math.sqrt(math.log(max(parent_visits, 1)) / visits)


def select(root: Node, width: Callable[[Node], int], c: float) -> Node:
    """The node to grow a child under: down the tree by UCT, where an unexpanded slot scores as
    a child with one visit at its node's mean; on ties the existing child (deeper reuse) wins."""
    node = root
    while True:
        options = [
            (uct(child.mean, child.visits, node.visits, c), 1, child)
            for child in node.children
            if not child.exhausted
        ]
        if len(node.children) < width(node):
            options.append((uct(node.mean, 1, node.visits, c), 0, node))
        best = max(options, key=lambda option: option[:2])[2]
        if best is node:
            return node
        node = best


class Search:
    """One blueprint's tree (`root`, once run) and its counters (`out`)."""

    def __init__(
        self, blueprint: Blueprint, config: SynthesisConfig, policy: PolicyFactory | None = None
    ) -> None:
        self.blueprint = blueprint
        self.config = config
        self.players = Players(config, policy)
        self.home = blueprint.home()
        self.backend = TwinBackend(self.home)
        self.out = Synthesis(blueprint.seed, config.method)
        self.root: Node | None = None
        self._ids = 0
        self._keys: set[str] = set()

    async def run(self, iterations: int) -> Synthesis:
        started = time.perf_counter()
        root = self.root = await self._root()
        try:
            for _ in range(iterations):
                if root.exhausted:
                    break
                node = select(root, self._width, self.config.c_uct)
                self.out.prefix_reuses += node.depth
                leaf = await self._expand(node)
                while not leaf.terminal:
                    leaf = await self._expand(leaf)
                self._backup(leaf)
        finally:
            await self.players.close()
        # Leaves' own calls counted in _backup, less what was spent: the calls reuse saved.
        self.out.rollouts_saved -= self.out.policy_calls
        self.out.wall_s = time.perf_counter() - started
        return self.out

    async def _root(self) -> Node:
        conditions = self.blueprint.task.conditions(self.home)
        verifier = Verifier(self.home, conditions)
        report = verifier.step(self.home)
        scene = self.blueprint.scenes[0] if self.blueprint.scenes else None
        prompt = await system_prompt(self.backend, memory=self.blueprint.memory, scene=scene)
        trajectory = Trajectory(
            messages=[{"role": "system", "content": prompt}], conditions=list(conditions)
        )
        return Node(USER, trajectory, self.home.snapshot(), verifier, report)

    def _width(self, node: Node) -> int:
        """k_agent or k_user; one closing line once the task is done (its wording adds nothing)."""
        if node.terminal:
            return 0
        if node.role == AGENT:
            return len(node.children) if node.full else self.config.k_agent
        return 1 if node.trajectory.done else self.config.k_user

    def _seed(self, node: Node) -> int:
        self._ids += 1
        text = f"{self.config.seed}:{self.blueprint.seed}:{self._ids}:{len(node.children)}"
        return zlib.crc32(text.encode())

    async def _expand(self, node: Node) -> Node:
        """A new child of `node`: the next user utterance or agent turn, from a fresh seed."""
        started = time.perf_counter()
        seed = self._seed(node)
        self.home.restore(node.snapshot)
        trajectory = replace(
            node.trajectory,
            messages=list(node.trajectory.messages),
            steps=list(node.trajectory.steps),
        )
        verifier, report = copy.copy(node.verifier), node.report
        role = AGENT if node.role == USER else USER
        terminal = success = False
        if node.role == USER:
            if trajectory.turns >= self.config.limits.max_turns and not trajectory.done:
                trajectory.end_reason, terminal = "max_turns", True
            else:
                user = self.players.user(self.blueprint, seed, self.home)
                utterance = await user.next_turn(trajectory.messages, report.conditions)
                self.out.user_calls += 1
                terminal = utterance is None or trajectory.done
                if utterance is not None:
                    trajectory.messages.append({"role": "user", "content": utterance})
                    trajectory.turns += 0 if terminal else 1
                success = trajectory.done and solved(report)
        else:
            task, siblings = self.blueprint.task, [child.seed for child in node.children]
            messages = node.trajectory.messages
            if node.next_seed is not None:
                seed = node.next_seed
            elif (found := self.players.distinct(task, seed, siblings, messages)) is not None:
                seed = found
            agent = self.players.agent(task, seed, self.blueprint.language)
            run = EpisodeRun(agent, self.backend, verifier, self.config.limits)
            run.trajectory, run.report = trajectory, report
            before = trajectory.policy_calls
            terminal = not await run.agent_turn()
            self.out.policy_calls += trajectory.policy_calls - before
            report = run.report or report
            probe = zlib.crc32(f"{seed}:next".encode())
            node.next_seed = self.players.distinct(task, probe, [*siblings, seed], messages)
            node.full = node.next_seed is None
        trajectory.wall_s += time.perf_counter() - started
        child = Node(
            role,
            trajectory,
            self.home.snapshot(),
            verifier,
            report,
            parent=node,
            depth=node.depth + 1,
            terminal=terminal,
            success=success,
            seed=seed,
        )
        node.children.append(child)
        return child

    def _backup(self, leaf: Node) -> None:
        """Count the rollout, keep a new success, and back its value up to the root."""
        self.out.rollouts += 1
        self.out.rollouts_saved += leaf.trajectory.policy_calls
        if leaf.success and (key := _key(leaf.trajectory)) not in self._keys:
            self._keys.add(key)
            self.out.trajectories.append(leaf.trajectory)
        value = episode_value(leaf.report, leaf.success)
        node: Node | None = leaf
        while node is not None:
            node.visits += 1
            node.value += value
            node.exhausted = node.terminal or (
                len(node.children) >= self._width(node)
                and all(child.exhausted for child in node.children)
            )
            node = node.parent


async def synthesize(
    blueprint: Blueprint, config: SynthesisConfig, policy: PolicyFactory | None = None
) -> Synthesis:
    """Trajectories for `blueprint` by `config.method`; `policy(task, seed)` makes the agent
    (by default the one `config.teacher` names)."""
    if config.method == "roleplay":
        return await roleplay(blueprint.seed, config, policy)
    search = Search(blueprint, config, policy)
    return await search.run(config.iterations if config.method == "mcts" else 1)


def synthesize_sync(
    blueprint: Blueprint, config: SynthesisConfig, policy: PolicyFactory | None = None
) -> Synthesis:
    """`synthesize`, for code without an event loop (such as a process pool's worker)."""
    return asyncio.run(synthesize(blueprint, config, policy))


async def roleplay(
    seed: int, config: SynthesisConfig, policy: PolicyFactory | None = None
) -> Synthesis:
    """Pure role-play for a blueprint seed: the scripter's raw candidate (not filtered), played
    once with its fixed turns and no verifier, then judged post hoc (uncheckable = failure)."""
    started = time.perf_counter()
    out = Synthesis(seed, "roleplay")
    drawn = raw_candidate(seed, config.error_rate)
    if drawn is None:
        return out
    home, candidate, raw, memory, scene = drawn
    intents = _compiling(raw)
    try:
        answers = tuple(Answer(**item) for item in candidate.answers)
        task = Task(candidate.turns, tuple(intents), candidate.followups, answers)
    except (TaskError, TypeError):
        return out
    verifier = None
    if len(intents) == len(raw):
        try:
            verifier = Verifier(home, task.conditions(home))
        except TwinError:
            verifier = None
    players = Players(config, policy)
    try:
        trajectory = await run_episode(
            players.agent(task, zlib.crc32(f"{config.seed}:{seed}:roleplay".encode())),
            TwinBackend(home),
            (*task.turns, *task.followups),
            limits=config.limits,
            memory=memory,
            scene=scene,
        )
    finally:
        await players.close()
    trajectory.done = False
    if verifier is not None:
        report = verifier.step(home, trajectory.last_reply)
        trajectory.conditions = [c.text for c in verifier.conditions]
        trajectory.done = solved(report)
    out.trajectories.append(trajectory)
    out.policy_calls, out.user_calls, out.rollouts = trajectory.policy_calls, trajectory.turns, 1
    out.wall_s = time.perf_counter() - started
    return out


def raw_candidate(
    seed: int, error_rate: float
) -> tuple[Home, Candidate, tuple[dict[str, Any], ...], tuple[str, ...], str | None] | None:
    """The scripter's candidate for `seed` before the triple filter (what make_blueprint draws):
    its home, the candidate (turns, follow-ups), raw intents, memory lines and scene; None when
    the home needs nothing."""
    drafted = draft(seed, error_rate=error_rate)
    if isinstance(drafted, Rejected):
        return None
    intents = tuple(dict(item) for item in drafted.candidate.intents)
    scene = drafted.scenes[0] if drafted.scenes else None
    return drafted.home, drafted.candidate, intents, drafted.memory, scene


def _compiling(raw: Iterable[dict[str, Any]]) -> list[Intent]:
    out = []
    for item in raw:
        try:
            out.append(Intent(**item))
        except (TaskError, TwinError, TypeError):
            continue
    return out


def _key(trajectory: Trajectory) -> str:
    """What makes two trajectories the same: their tool calls and utterances."""
    return json.dumps([tool_sequence(trajectory), utterances(trajectory)], sort_keys=True)


def tool_sequence(trajectory: Trajectory) -> list[list[Any]]:
    """The tool calls in order, with their arguments."""
    return [[step.name, step.arguments] for step in trajectory.steps]


def actions(trajectory: Trajectory) -> list[list[Any]]:
    """What the agent did, in order: its tool calls, with their arguments, and where it asked
    the user (a reply that ends in a question), whatever the wording: the trajectory's
    strategy (looking first or asking first are two)."""
    done: list[list[Any]] = []
    for message in trajectory.messages:
        if message.get("role") != "assistant":
            continue
        calls = message.get("tool_calls") or []
        done += [[c["function"]["name"], _arguments(c["function"]["arguments"])] for c in calls]
        if not calls and str(message.get("content") or "").rstrip().endswith("?"):
            done.append(["ask"])
    return done


def _arguments(text: Any) -> Any:
    try:
        return json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        return text


def utterances(trajectory: Trajectory) -> list[str]:
    """What the user said, in order."""
    return [str(m.get("content")) for m in trajectory.messages if m.get("role") == "user"]


# --- the summary --------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodSummary:
    """One method over many blueprints. Diversity counts are means over all its blueprints (a
    blueprint with no verified trajectory counts 0)."""

    method: str
    blueprints: int
    success_rate: float
    trajectories: int
    policy_calls: int
    trajectories_per_call: float
    distinct_per_call: float  # verified trajectories with actions of their own (`actions`)
    tool_sequences_per_blueprint: float
    utterances_per_blueprint: float
    prefix_reuses: int
    rollouts_saved: int
    wall_s: float


def summarise(syntheses: Sequence[Synthesis]) -> dict[str, MethodSummary]:
    """Per method: generation success rate, verified trajectories per policy call, diversity."""
    by_method: dict[str, list[Synthesis]] = {}
    for synthesis in syntheses:
        by_method.setdefault(synthesis.method, []).append(synthesis)
    out = {}
    for method, group in by_method.items():
        count = len(group)
        verified = sum(len(s.verified) for s in group)
        calls = sum(s.policy_calls for s in group)
        sequences = sum(
            len({json.dumps(tool_sequence(t), sort_keys=True) for t in s.verified}) for s in group
        )
        strategies = sum(
            len({json.dumps(actions(t), sort_keys=True) for t in s.verified}) for s in group
        )
        said = sum(len({u for t in s.verified for u in utterances(t)}) for s in group)
        out[method] = MethodSummary(
            method,
            count,
            sum(s.success for s in group) / count,
            verified,
            calls,
            verified / calls if calls else 0.0,
            strategies / calls if calls else 0.0,
            sequences / count,
            said / count,
            sum(s.prefix_reuses for s in group),
            sum(s.rollouts_saved for s in group),
            sum(s.wall_s for s in group),
        )
    return out

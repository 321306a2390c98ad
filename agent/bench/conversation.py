"""SmartHome-Bench for any Home Assistant conversation agent (`--agent conversation.ENTITY`).

Each user turn goes to Home Assistant's `/api/conversation/process` with the agent's id and one
`conversation_id` for the whole dialogue, in Home Assistant's language; the agent acts inside Home
Assistant, so its tool calls are not visible here. The scripted user answers each reply, and the
verifier judges the mirror of the home after each reply: a trajectory step is one agent turn.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from twin.verifier import Verifier

from ..backends.home_assistant import HomeAssistantBackend
from ..episode import Dialogue, EpisodeLimits, Step, Trajectory, View
from ..errors import AgentError
from ..flywheel.blueprints import Blueprint
from ..flywheel.user import ScriptedUser
from ..policies import AssistantMessage

PROCESS = "/api/conversation/process"
DOMAIN = "conversation"
STEP = "conversation/process"  # a step's name: one agent turn, judged after its reply


class ConversationAgentError(AgentError):
    """Home Assistant's conversation API refused or failed a turn; the message says what to do."""


class ConversationAgentNotFoundError(ConversationAgentError):
    """Home Assistant has no conversation agent of that id."""


def is_agent(spec: str) -> bool:
    """Whether `spec` names a Home Assistant conversation agent rather than a HomeFlow policy."""
    return spec.startswith(f"{DOMAIN}.")


def check_agent(agent_id: str) -> str:
    """`agent_id` if it is a conversation entity's id; ConversationAgentError otherwise."""
    domain, _, name = agent_id.partition(".")
    if domain != DOMAIN or not name:
        raise ConversationAgentError(
            f"a conversation agent is a {DOMAIN}.* entity, e.g. {DOMAIN}.home_assistant "
            f"(Home Assistant's Assist), got {agent_id!r}"
        )
    return agent_id


@dataclass
class Conversation:
    """One dialogue with a Home Assistant conversation agent."""

    backend: HomeAssistantBackend
    agent_id: str
    conversation_id: str | None = None

    async def say(self, text: str) -> dict[str, Any]:
        """The agent's answer to `text` (its `response`), in this dialogue."""
        body = {"text": text, "agent_id": self.agent_id}
        if self.conversation_id is not None:
            body["conversation_id"] = self.conversation_id
        status, answer = await self.backend.request("POST", PROCESS, body)
        if status != 200 or not isinstance(answer, dict):
            raise self._refused(status, answer)
        self.conversation_id = answer.get("conversation_id") or self.conversation_id
        response: dict[str, Any] = answer["response"]
        return response

    def _refused(self, status: int, answer: Any) -> ConversationAgentError:
        where = f"Home Assistant at {self.backend.url}"
        if status == 400 and "agent ID" in str(answer):
            return ConversationAgentNotFoundError(
                f"{where} has no conversation agent {self.agent_id!r}; pass one it lists "
                "(Settings > Voice assistants, or the conversation.* entities in /api/states), "
                f"e.g. {DOMAIN}.home_assistant"
            )
        if status == 404:
            return ConversationAgentError(
                f"{where} has no conversation API ({PROCESS} answered 404); add `conversation:` "
                "(or `default_config:`) to its configuration.yaml and restart it"
            )
        return ConversationAgentError(
            f"{where} answered {status} to {PROCESS} for {self.agent_id}: {answer}; see its log"
        )


def speech(response: dict[str, Any]) -> str:
    """What the agent said (its plain speech; empty when it said nothing)."""
    said: str = response.get("speech", {}).get("plain", {}).get("speech", "")
    return said


async def converse(
    backend: HomeAssistantBackend,
    agent_id: str,
    blueprint: Blueprint,
    limits: EpisodeLimits,
    view: View,
) -> Trajectory:
    """An episode of the blueprint's task with the agent `agent_id`, the scripted user answering
    its replies, judged on `view` (the mirror of the home) after each reply."""
    started = time.perf_counter()
    home, task = blueprint.home(), blueprint.task
    user = ScriptedUser(task, blueprint.seed, home=home)
    conditions = list(task.conditions(home))
    before = await view()
    verifier = Verifier(before, conditions)
    dialogue = Dialogue(verifier, limits)
    dialogue.report = verifier.step(before)
    trajectory = dialogue.trajectory
    trajectory.conditions = conditions
    conversation = Conversation(backend, agent_id)
    while True:
        status = dialogue.report.conditions if dialogue.report is not None else None
        utterance = await user.next_turn(list(trajectory.messages), status)
        if utterance is None or not dialogue.hear(utterance):
            break
        await _turn(dialogue, conversation, utterance, view)
    if trajectory.done:
        trajectory.end_reason = "done"
    trajectory.wall_s = time.perf_counter() - started
    return trajectory


async def converse_turns(
    backend: HomeAssistantBackend,
    agent_id: str,
    utterances: Sequence[str],
    limits: EpisodeLimits,
    view: View,
) -> Trajectory:
    """An episode of fixed user turns (an assist case's sentence) with the agent `agent_id`,
    without conditions: the caller judges the home (`view` is read after each reply)."""
    started = time.perf_counter()
    dialogue = Dialogue(None, limits)
    conversation = Conversation(backend, agent_id)
    for utterance in utterances:
        if not dialogue.hear(utterance):
            break
        await _turn(dialogue, conversation, utterance, view)
    dialogue.trajectory.wall_s = time.perf_counter() - started
    return dialogue.trajectory


async def _turn(dialogue: Dialogue, conversation: Conversation, utterance: str, view: View) -> None:
    """One user turn: the agent's reply, recorded, and the verifier's view of the home after it."""
    started = time.perf_counter()
    response = await conversation.say(utterance)
    latency = time.perf_counter() - started
    trajectory = dialogue.trajectory
    trajectory.policy_calls += 1
    trajectory.policy_latency_s += latency
    said = speech(response)
    dialogue.add(AssistantMessage(said).to_openai())
    arguments = {"agent_id": conversation.agent_id, "text": utterance}
    success = response.get("response_type") != "error"
    dialogue.judge(Step(trajectory.turns, STEP, arguments, success, latency), await view(), said)

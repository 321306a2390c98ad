"""The user simulator (paper B.3): the user's next utterance, from the task's hidden intents, the
dialogue so far and the verifier's view of the home.

The user opens with the task's request, then, after each agent reply: answers a question that
confirms a sensitive action the auditor held back (twin.confirmation) with a yes if the action is
one of its unfinished intents, else a no; answers a clarifying question with the hidden intent's
values (the same values however often it is asked; a device
by its name and room, never its entity id), answers what the intents do not settle without
contradicting them, restates only the intents said so far whose conditions still fail, once
those hold says the task's next follow-up (QT4: "make it dimmer", "actually, 21"), and once all
hold says a closing line such as "that's all, thanks". `ScriptedUser` does this from phrase banks,
keeping no state (any dialogue prefix can be resumed or branched, as MCTS-Flow does);
`LLMUser` asks any OpenAI-compatible server with the paper's user-query prompt.

Statuses are the verifier's, one per goal in the task's order, then one per answer
(`Task.conditions`); None means nothing is known yet, so every intent counts as unfinished. A
question not answered yet (its reply check fails) is asked again. An intent a later turn supersedes
has no status of its own and never holds the user back.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from twin.confirmation import asked
from twin.domains import DOMAINS
from twin.home import Home
from twin.registry import object_id_words
from twin.verifier import ConditionStatus

from ..policies import Message, Policy, PolicyError
from ..policies.teacher import FIELD_WORDS, NOUNS
from ..task import Intent, Task
from .profiles import Profile
from .sentences import spaced


class UserSimulatorError(PolicyError):
    """The simulator could not say anything usable (a server's empty or malformed answer)."""


@runtime_checkable
class UserSimulator(Protocol):
    """Whoever speaks for the user in an episode."""

    async def next_turn(
        self, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None
    ) -> str | None:
        """The next user message after `dialogue` (OpenAI-format messages); None when the user
        has nothing more to say."""
        ...


# Words that show a question is about a field; others are found by the field's own name.
SLOT_WORDS: Mapping[str, tuple[str, ...]] = {
    "brightness_pct": ("bright", "dim"),
    "brightness": ("bright", "dim"),
    "temperature": ("temperature", "degree", "warm", "°"),
    "target_temp_low": ("low",),
    "target_temp_high": ("high",),
    "humidity": ("humid",),
    "percentage": ("speed", "fast", "percent"),
    "position": ("position", "how far", "how much", "open"),
    "tilt_position": ("tilt",),
    "volume_level": ("volume", "loud"),
    "color_temp_kelvin": ("white", "colour", "color", "kelvin", "warm"),
    "hvac_mode": ("mode", "heat", "cool"),
    "operation_mode": ("mode",),
    "fan_mode": ("fan",),
    "fan_speed": ("speed", "suction", "power"),
    "oscillating": ("oscillat", "swing"),
    "is_volume_muted": ("mute",),
    "source": ("source", "input"),
    "media_content_id": ("play", "listen"),
}
ASKS_WHICH = re.compile(r"\b(which|what device|where)\b")
# How the user asks for a service; {the} is the device; others say "set {the}'s <fields>".
REQUESTS: Mapping[str, str] = {
    "turn_on": "turn on {the}",
    "turn_off": "turn off {the}",
    "open_cover": "open {the}",
    "close_cover": "close {the}",
    "open_valve": "open {the}",
    "close_valve": "close {the}",
    "lock": "lock {the}",
    "unlock": "unlock {the}",
    "open": "open {the}",
    "start": "start {the}",
    "stop": "stop {the}",
    "pause": "pause {the}",
    "return_to_base": "send {the} back to its dock",
    "clean_spot": "spot-clean with {the}",
    "media_play": "get {the} playing",
    "media_pause": "pause {the}",
    "volume_up": "turn {the} up a bit",
    "volume_down": "turn {the} down a bit",
    "increase_speed": "speed up {the}",
    "decrease_speed": "slow down {the}",
    "media_stop": "stop {the}",
}
VALUE_ANSWERS = (
    "{value}, please.",
    "Make it {value}.",
    "{value} would be good.",
    "Let's go with {value}.",
)
ENTITY_ANSWERS = (
    "The {device} in the {area}.",
    "I mean the {device} in the {area}.",
    "The {area} one, the {device}.",
)
ENTITY_ANSWERS_NO_AREA = ("The {device}.", "I mean the {device}.")
YES = ("Yes, please.", "Yes, go ahead.", "Please do.")
# Answers to a confirmation question (twin.confirmation reads them as a yes and a no).
CONFIRM = ("Yes, please.", "Yes, go ahead.", "Yes, do it.")
DECLINE = ("No, don't do that.", "No, leave it as it is.")
ONLY_THAT = ("No, just the {device} in the {area}.", "Just the {area} one, please.")
UP_TO_YOU = ("Whatever you think is best.", "I'll leave that to you.", "Your call, whatever works.")
RESTATE = ("Could you {request}?", "Please {request}.", "I still need you to {request}.")
RESTATE_MORE = (
    "Thanks. Could you also {request}?",
    "Great, now please {request} too.",
    "You still need to {request}.",
)
# Asking again when the reply did not answer the question (or say the request cannot be done).
ASK_AGAIN = ("Sorry, I asked: {request}", "That doesn't answer me. {request}")
CLOSINGS = (
    "That's all, thanks!",
    "Perfect, that's everything.",
    "Great, thank you. That's all.",
    "Thanks, that's all I needed.",
    "That's it, thanks a lot!",
)


class ScriptedUser:
    """The built-in user of `task`: phrase banks drawn by `seed` and the dialogue's length.

    `home` (the episode's, read as it changes) names the devices and rooms; without it devices
    are named from their entity ids, in words.
    """

    def __init__(self, task: Task, seed: int = 0, *, home: Home | None = None) -> None:
        self.task = task
        self.seed = seed
        self.home = home

    async def next_turn(
        self, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None
    ) -> str | None:
        """The request, an answer, a restatement, a follow-up or the closing line; then None."""
        return self.reply(dialogue, status)

    def reply(
        self, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None
    ) -> str | None:
        """`next_turn`, synchronously."""
        said = [m.get("content") for m in dialogue if m.get("role") == "user"]
        if not said:
            return self.task.turns[0]
        if said[-1] in CLOSINGS:
            return None
        rng = random.Random(f"user:{self.seed}:{len(dialogue)}")
        turn, stated, unfinished = _progress(self.task, dialogue, status)
        if not unfinished and not _answered(self.task, status):
            return rng.choice(ASK_AGAIN).format(request=self.task.turns[0])
        if not unfinished:
            if turn < len(self.task.followups):
                return self.task.followups[turn]
            return rng.choice(CLOSINGS)
        question = _last_reply(dialogue)
        if "?" in question and (held := _held_back(dialogue)):
            wanted = {(f"{i.domain}.{i.service}", i.entity_id) for i in unfinished}
            return rng.choice(CONFIRM if held <= wanted else DECLINE)
        if "?" in question:
            return self._answer(question.lower(), unfinished, rng)
        templates = RESTATE_MORE if len(unfinished) < len(stated) else RESTATE
        request = _join([self._request(intent) for intent in unfinished])
        return rng.choice(templates).format(request=request)

    def _answer(self, question: str, unfinished: list[Intent], rng: random.Random) -> str:
        """An answer from the hidden intents; what they do not settle is left to the agent."""
        parts = []
        for intent in unfinished:
            device, area = self._names(intent.entity_id)
            vague = (
                intent.clarify == "entity" or len(unfinished) == 1 or _asks_for(question, intent)
            )
            if vague and ASKS_WHICH.search(question):
                templates = ENTITY_ANSWERS if area else ENTITY_ANSWERS_NO_AREA
                parts.append(rng.choice(templates).format(device=device, area=area))
            fields = [key for key in intent.data if _asks(question, key)]
            if fields:
                values = [
                    _say(key, intent.data[key])
                    if len(fields) == 1
                    else f"{_words(key)} {_say(key, intent.data[key])}"
                    for key in fields
                ]
                value = _join(values) + (f" for {self._the(intent)}" if len(unfinished) > 1 else "")
                parts.append(_capital(rng.choice(VALUE_ANSWERS).format(value=value)))
        if parts:
            return " ".join(parts)
        if any(self._mentioned(question, intent.entity_id) for intent in unfinished):
            return rng.choice(YES)
        if self.home is not None and any(
            self._mentioned(question, entity_id) for entity_id in self.home.entities
        ):
            device, area = self._names(unfinished[0].entity_id)
            if area:
                return rng.choice(ONLY_THAT).format(device=device, area=area)
        return rng.choice(UP_TO_YOU)

    def _request(self, intent: Intent) -> str:
        """The intent as a short request, naming its device and values."""
        the = self._the(intent)
        if not intent.data and intent.service in REQUESTS:
            return REQUESTS[intent.service].format(the=the)
        fields = [f"{_words(key)} to {_say(key, value)}" for key, value in intent.data.items()]
        if not fields:
            return f"{intent.service.replace('_', ' ')} {the}"
        return f"set {the}'s {_join(fields)}"

    def _names(self, entity_id: str) -> tuple[str, str | None]:
        """The device as a person names it within its room, and the room (if known)."""
        name = self._name(entity_id)
        if self.home is None or (area_id := self.home.area_of(entity_id)) is None:
            return name, None
        area = _lower(self.home.areas[area_id].name)
        return name.removeprefix(area).strip() or name, area

    def _name(self, entity_id: str) -> str:
        if self.home is not None and entity_id in self.home.entities:
            return _lower(self.home.entities[entity_id].name)
        return object_id_words(entity_id)

    def _the(self, intent: Intent) -> str:
        return f"the {self._name(intent.entity_id)}"

    def _mentioned(self, question: str, entity_id: str) -> bool:
        device, area = self._names(entity_id)
        return self._name(entity_id).lower() in question or (
            area is not None and f"{device} in the {area}".lower() in question
        )


class LLMUser:
    """The user played by a chat model (an OpenAIPolicy, or any Policy) given the paper's
    user-query prompt, the hidden intents with their status, the home's current states (with
    `home`), the user's profile and scene if known, and the dialogue. It opens with the task's
    request; a reply without a query is an error, never replaced by an invented one."""

    def __init__(
        self,
        policy: Policy,
        task: Task,
        *,
        home: Home | None = None,
        profile: Profile | None = None,
        scene: str | None = None,
    ) -> None:
        self.policy = policy
        self.task = task
        self.home = home
        self.profile = profile
        self.scene = scene

    async def next_turn(
        self, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None
    ) -> str:
        """The request first, then what the model writes as the user; a follow-up (QT4) is
        said word for word once the turns before it are done, as the task scripts it."""
        if not any(message.get("role") == "user" for message in dialogue):
            return self.task.turns[0]
        turn, _, unfinished = _progress(self.task, dialogue, status)
        if not unfinished and turn < len(self.task.followups):
            return self.task.followups[turn]
        messages: list[Message] = [
            {"role": "system", "content": USER_PROMPT},
            {"role": "user", "content": self.context(dialogue, status)},
        ]
        reply = await self.policy.act(messages, [POST_PROCESS])
        for call in reply.tool_calls:
            query = call.arguments.get("query")
            if call.name == "post_process" and isinstance(query, str) and query.strip():
                return query.strip()
        if not reply.tool_calls and reply.content.strip():
            return reply.content.strip()
        raise UserSimulatorError(
            "The user model gave no query (expected a post_process call with a non-empty "
            f"'query'); it answered {reply.content[:200]!r} with {len(reply.tool_calls)} calls "
            f"and errors {list(reply.parse_errors)}"
        )

    def context(self, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None) -> str:
        """What the model knows: who the user is, the tasks said so far, the home now, the
        dialogue."""
        _, stated, left = _progress(self.task, dialogue, status)
        lines = []
        if self.profile is not None:
            p = self.profile
            lines += [f"# User\n{p.name}, {p.age}, {p.occupation}.", *p.memory()]
        if self.scene:
            lines += ["# Scene", self.scene]
        lines.append("# Tasks (hidden from the agent)")
        for number, index in enumerate(stated, start=1):
            intent = self.task.intents[index]
            done = "unfinished" if intent in left else "done"
            call = json.dumps(intent.to_dict(), ensure_ascii=False)
            name = f" ({self.home.entities[intent.entity_id].name})" if self.home else ""
            lines.append(f"{number}. [{done}]{name} {call}")
            if intent.clarify:
                lines.append(
                    f"   The first request left out {intent.clarify!r}; give it when asked."
                )
        if self.home is not None:
            lines.append("# Current states")
            for entity_id in dict.fromkeys(self.task.intents[i].entity_id for i in stated):
                state = self.home.states[entity_id]
                attributes = json.dumps(state.attributes, ensure_ascii=False, default=str)
                lines.append(f"- {entity_id}: {state.state} {attributes}")
        lines.append("# Dialogue so far")
        for message in dialogue:
            role, content = message.get("role"), message.get("content")
            if role in ("user", "assistant") and content and not message.get("tool_calls"):
                lines.append(f"{'User' if role == 'user' else 'Agent'}: {content}")
        lines.append(
            "Write the user's next message."
            if left
            else "Every task is done: write the user's short closing line."
        )
        return "\n".join(lines)


# The paper's user-query generation prompt (B.3), with what a simulator in a dialogue needs.
USER_PROMPT = """\
Task Definition. You are an expert system for generating natural user requests in a smart home \
environment; you speak as the user, to the home's agent.
Objective. Convert structured task states into realistic, minimal, and executable user queries \
that can be directly used for device control via tool invocation.
Design Principles.
1. Task-Centric Grounding. All outputs must strictly align with the current task list: focus only \
on unfinished tasks; ignore historical dialogue unless task-relevant; ensure every query directly \
contributes to task completion.
2. Device-State Awareness. Consider the real-time home state: avoid redundant or already-satisfied \
operations; adjust to the current device conditions.
3. Natural User Expression. Avoid enumerating multiple parameters or rooms in a rigid format; \
avoid structured or machine-like commands; use short, conversational, implicit instructions. Name \
devices as a person would (its name or room), never by entity id.
4. Clarification. If the agent asked a question, answer it with the task's values, the same way \
every time it is asked; do not contradict the tasks; if the tasks do not settle it, let the agent \
decide. If the agent asks you to confirm an action, say yes only if it is one of your unfinished \
tasks, else say no.
5. Minimalism. One unified query per step; no task ids, explanations or reasoning traces.
6. Closing. When every task is done, say briefly that that is all, with thanks.
7. Tool-Execution Requirement. Answer through the post_process tool with query (a single \
utterance, never empty) and reason (why it was generated). Strict tool-call format only."""

POST_PROCESS: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "post_process",
        "description": "The user's next utterance and why it was generated.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "reason": {"type": "string"}},
            "required": ["query", "reason"],
        },
    },
}


def _progress(
    task: Task, dialogue: Sequence[Message], status: Sequence[ConditionStatus] | None
) -> tuple[int, list[int], list[Intent]]:
    """The user's last turn so far, the goals said by then (indexes), and those unfinished."""
    said = [str(m.get("content")) for m in dialogue if m.get("role") == "user"]
    turn = task.stated(said)
    stated = [i for i in task.goals() if task.intents[i].turn <= turn]
    unfinished = [task.intents[i] for i in _unfinished(task, status) if i in stated]
    return turn, stated, unfinished


def _unfinished(task: Task, status: Sequence[ConditionStatus] | None) -> list[int]:
    """The indexes of the goal intents whose conditions do not hold (all while nothing is
    known)."""
    goals = task.goals()
    if status is None:
        return goals
    _check_statuses(task, status)
    return [i for i, each in zip(goals, status, strict=False) if not each.satisfied]


def _answered(task: Task, status: Sequence[ConditionStatus] | None) -> bool:
    """Whether every reply check holds (none is known to before the agent has replied)."""
    if not task.answers:
        return True
    if status is None:
        return False
    _check_statuses(task, status)
    return all(each.satisfied for each in status[len(task.goals()) :])


def _check_statuses(task: Task, status: Sequence[ConditionStatus]) -> None:
    if len(status) != len(task.goals()) + len(task.answers):
        raise ValueError(
            f"{len(status)} condition statuses for {len(task.goals())} goals and "
            f"{len(task.answers)} answers; run the episode with conditions=task.conditions(home)"
        )


def _last_reply(dialogue: Sequence[Message]) -> str:
    """The agent's last words to the user."""
    for message in reversed(dialogue):
        if message.get("role") == "assistant" and message.get("content"):
            return str(message["content"])
    return ""


def _held_back(dialogue: Sequence[Message]) -> frozenset[tuple[str, str]]:
    """The actions the auditor asked the user to confirm since the user last spoke."""
    held: frozenset[tuple[str, str]] = frozenset()
    for message in reversed(dialogue):
        if message.get("role") == "user":
            break
        if message.get("role") != "tool":
            continue
        try:
            failure = json.loads(str(message.get("content"))).get("error")
        except (ValueError, AttributeError):
            continue
        if isinstance(failure, dict) and failure.get("code") == "confirmation_required":
            held |= asked(str(failure.get("message")))
    return held


def _asks_for(question: str, intent: Intent) -> bool:
    """Whether a question names the intent's kind of device ("which lock do you mean?")."""
    domain = DOMAINS.get(intent.domain)
    nouns = {intent.domain.replace("_", " "), NOUNS.get(intent.domain, intent.domain)}
    nouns.update(domain.asked.nouns if domain is not None else ())
    return any(spaced(noun) in spaced(question) for noun in nouns)


def _asks(question: str, key: str) -> bool:
    return any(word in question for word in (*SLOT_WORDS.get(key, ()), _words(key)))


def _words(key: str) -> str:
    return FIELD_WORDS[key][0] if key in FIELD_WORDS else key.replace("_", " ")


def _say(key: str, value: Any) -> str:
    if key in FIELD_WORDS:
        return FIELD_WORDS[key][1](value)
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value).replace("_", " ")


def _lower(name: str) -> str:
    """A name as said mid-sentence: lower case, but names ("Lina's") kept."""
    return " ".join(word if "'" in word else word.lower() for word in name.split())


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"

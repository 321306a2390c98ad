"""A fallible teacher: the scripted teacher with an LLM teacher's plausible-but-wrong moves.

The scripted teacher always succeeds, so a search over its moves would find nothing; an LLM
teacher slips now and then. `CarelessTeacher` asks the teacher for its next message and, with
probability `careless` per message (drawn from the seed and the conversation's length, so it
stays stateless and any prefix can be branched with other seeds), replaces it by a slip that
fits the moment:

- instead of asking about a missing slot, it guesses: the wrong one of two similar devices, or a
  nearby value (the user's answer later puts a value right; a wrong device stays changed);
- instead of reading an `only_if`'s entity, it acts on the guarded intent without checking;
- instead of calling a service on the right device, it picks a similar one (same domain, same
  room when there is one): a change the verifier sees as collateral;
- after an error result, it gives up and tells the user instead of fixing the call.

Moves that fit no slip are kept as planned.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

from ..task import Intent, Task
from . import AssistantMessage, Message, ToolCall
from .teacher import Seen, TeacherPolicy

GIVE_UP = (
    "Sorry, that didn't work: {why}",
    "I couldn't do that, the home said: {why}",
)


class CarelessTeacher:
    """TeacherPolicy(task, seed, mistake_rate, language) that slips at rate `careless` per
    message."""

    def __init__(
        self,
        task: Task,
        seed: int = 0,
        careless: float = 0.0,
        mistake_rate: float = 0.0,
        language: str = "en",
    ) -> None:
        if not 0 <= careless <= 1:
            raise ValueError(f"careless must be 0-1, got {careless}")
        self.teacher = TeacherPolicy(task, seed, mistake_rate, language)
        self.task = task
        self.seed = seed
        self.careless = careless

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The teacher's next message, or now and then a slip."""
        return self.next_message(messages)

    def next_message(self, messages: Sequence[Message]) -> AssistantMessage:
        """The next message, from the conversation alone (and the seed)."""
        planned = self.teacher.next_message(messages)
        rng = random.Random(f"careless:{self.seed}:{len(messages)}")
        if rng.random() >= self.careless:
            return planned
        return self._slip(messages, planned, rng) or planned

    def _slip(
        self, messages: Sequence[Message], planned: AssistantMessage, rng: random.Random
    ) -> AssistantMessage | None:
        seen = Seen.read(messages)
        calls = planned.tool_calls
        if not calls:
            unclear = self.teacher.unclear(seen)
            if unclear and planned.content.rstrip().endswith("?"):
                guess = _guess(*unclear[0], seen, rng)
                return None if guess is None else _message(seen, [guess])
            return None
        last = _last_result(messages)
        if last.get("success") is False and calls[0].name == "call_service":
            why = last.get("error", {}).get("message", "it refused")
            return AssistantMessage(rng.choice(GIVE_UP).format(why=why))
        said = self.task.goals(self.task.stated(seen.said))
        guarded = [intent for i in said if (intent := self.task.intents[i]).only_if]
        if guarded and all(call.name == "get_state" for call in calls):
            return _message(seen, [_call(guarded[0], guarded[0].entity_id)])
        if calls[0].name == "call_service":
            ids = calls[0].arguments.get("target", {}).get("entity_id")
            first = ids if isinstance(ids, str) else ids[0] if ids else None
            other = _similar(first, seen, rng) if first else None
            if other is not None:
                arguments = dict(calls[0].arguments, target={"entity_id": other})
                return _message(seen, [ToolCall("", "call_service", arguments)])
        return None


def _guess(intent: Intent, slot: str, seen: Seen, rng: random.Random) -> ToolCall | None:
    """The intent's call with the slot the user left open guessed: another device, or a nearby
    value; None when the conversation shows no other device (a guess of the device the user has
    not named would be the teacher reading the hidden target)."""
    if slot == "entity":
        other = _similar(intent.entity_id, seen, rng)
        return None if other is None else _call(intent, other)
    data = dict(intent.data)
    if isinstance(value := data.get(slot), int | float) and not isinstance(value, bool):
        data[slot] = type(value)(value * rng.choice((0.8, 1.2)))
    return _call(intent, intent.entity_id, data)


def _call(intent: Intent, entity_id: str, data: dict[str, Any] | None = None) -> ToolCall:
    arguments: dict[str, Any] = {
        "domain": intent.domain,
        "service": intent.service,
        "target": {"entity_id": entity_id},
    }
    payload = intent.data if data is None else data
    if payload:
        arguments["data"] = dict(payload)
    return ToolCall("", "call_service", arguments)


def _similar(entity_id: str, seen: Seen, rng: random.Random) -> str | None:
    """Another device of the same domain, in the same room when there is one."""
    domain = entity_id.partition(".")[0]
    others = sorted(e for e in seen.names if e != entity_id and e.partition(".")[0] == domain)
    room = [e for e in others if seen.areas.get(e) == seen.areas.get(entity_id)]
    return rng.choice(room or others) if others else None


def _message(seen: Seen, calls: list[ToolCall]) -> AssistantMessage:
    start = len(seen.calls)
    return AssistantMessage(
        "",
        tuple(ToolCall(f"call_{start + n}", c.name, c.arguments) for n, c in enumerate(calls)),
    )


def _last_result(messages: Sequence[Message]) -> dict[str, Any]:
    """The last tool result if the last message is one, else {}."""
    if not messages or messages[-1].get("role") != "tool":
        return {}
    try:
        value = json.loads(messages[-1].get("content") or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}

"""The scripted teacher: a policy that knows the task's ground truth and uses the tools as a
careful agent would, for data synthesis and tests (never for a benchmark, which it would ace).

It keeps no state: each answer is a function of the seed and the conversation, whose tool results
tell it what has been done, so any prefix of an episode can be resumed or branched (MCTS-Flow
samples it with different seeds). It never reads the home: only the conversation. It works in
this order, one message at a time:

1. query the home (list_entities by area, by domain or unfiltered, or get_state), before or after
   asking; 2. ask one question about what the user's words leave open (`vague`: no device of
   the domain they single out, by name, by name in a room, or as the only one in a room they
   name; no value stated, in the words or the memory in the prompt), and wait for the answer;
   3. read every entity an `only_if` tests with get_state, and drop the intents whose guard
   fails; 4. describe each entity before setting a field not set earlier in the
   conversation; 5. call each intent's service, one call per intent or one for several entities
   with the same service and data, or (a style, where the prompt offers pyexec) all the calls
   due at once as one pyexec script, with a loop over the entities that take the same call
   (after a script that failed, one by one); with `mistake_rate`, an intent's first single
   call is a realistic mistake (a value in the wrong unit, a state attribute's name for the
   field, a service that does not exist), which it fixes after reading the error; a call the
   auditor holds back for the user's confirmation (twin.confirmation) it asks about, and makes
   again once the user says yes;
   6. reply with a short summary.

It acts only on what the user has said so far: the intents of the turns whose follow-up is in
the conversation (`Task.stated`), less those a later one supersedes; each follow-up starts the
steps again from 2, and a coreference ("make it dimmer") is no riddle to a teacher that knows
the hidden intent.

A status question or an impossible request (the task's answers) takes a look at the home by
the style's query (where the device asked for should be, for an impossible request), a
get_state of the entity asked about (a describe of it, for a feature it lacks), and a reply
that states its value, its yes or no, or that the home or the device lacks what was asked for
and nothing was changed.

The seed draws the style once (which query, ask first or not, batched calls, grouping, entity_id
as text or list, brightness_pct or brightness) and the wording of each message.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from twin.conditions import compile_condition, says_value
from twin.confirmation import answer
from twin.errors import ConditionError
from twin.registry import object_id_words
from twin.state import State

from ..flywheel import sentences
from ..flywheel.sentences import language, spoken, spoken_name
from ..prompt import PYEXEC
from ..task import Answer, Intent, Task
from . import AssistantMessage, Message, ToolCall

if TYPE_CHECKING:
    from twin.home import Home

QUERIES = ("area", "domain", "all", "state")
# Realistic first mistakes, by kind: a value in another unit, the state attribute's name (or an
# old or invented one) for a field, a service the domain does not have.
WRONG_UNITS: Mapping[str, Callable[[Any], Any]] = {
    "temperature": lambda celsius: round(celsius * 9 / 5 + 32),
    "volume_level": lambda level: round(level * 100),
    "brightness_pct": lambda pct: round(pct * 2.55),
    "percentage": lambda pct: round(pct * 2.55),
    "position": lambda pct: round(pct * 2.55),
}
WRONG_NAMES: Mapping[str, str] = {
    "brightness_pct": "brightness_percent",
    "brightness": "level",
    "temperature": "target_temperature",
    "humidity": "target_humidity",
    "percentage": "speed",
    "position": "current_position",
    "tilt_position": "current_tilt_position",
    "volume_level": "volume",
    "is_volume_muted": "mute",
    "hvac_mode": "mode",
    "source": "input",
    "fan_mode": "fan_speed",
    "color_temp_kelvin": "kelvin",
    "oscillating": "oscillate",
}
WRONG_SERVICES: Mapping[tuple[str, str], str] = {
    ("fan", "set_percentage"): "set_speed",
    ("fan", "turn_on"): "start",
    ("cover", "set_cover_position"): "set_position",
    ("cover", "open_cover"): "open",
    ("cover", "close_cover"): "close",
    ("valve", "set_valve_position"): "set_position",
    ("climate", "set_temperature"): "set_target_temperature",
    ("climate", "turn_off"): "power_off",
    ("media_player", "volume_set"): "set_volume",
    ("media_player", "media_play"): "play",
    ("lock", "lock"): "turn_on",
    ("vacuum", "start"): "turn_on",
    ("water_heater", "set_operation_mode"): "set_mode",
    ("valve", "open_valve"): "open",
    ("climate", "set_fan_mode"): "set_fan_speed",
    ("media_player", "volume_down"): "volume_decrease",
    ("fan", "increase_speed"): "speed_up",
}
# A sibling domain with the same on/off services, for a call on the wrong domain.
WRONG_DOMAINS: Mapping[str, str] = {
    "light": "switch",
    "switch": "light",
    "fan": "switch",
    "humidifier": "fan",
    "media_player": "switch",
}
ON_OFF = ("turn_on", "turn_off")

# Wording of the clarifying question, by slot; {name} is the device, {slot} the slot in words.
QUESTIONS: Mapping[str, tuple[str, ...]] = {
    "entity": ("Which {noun} do you mean?", "Which {noun} should I use?"),
    "brightness_pct": (
        "How bright should {name} be?",
        "What brightness would you like for {name}?",
    ),
    "temperature": (
        "What temperature should I set {name} to?",
        "Which temperature would you like for {name}?",
    ),
}
NOUNS: Mapping[str, str] = {
    "climate": "thermostat",
    "media_player": "player",
    "cover": "blind",
    "water_heater": "water heater",
}
QUESTIONS_ANY = ("What {slot} would you like for {name}?", "Which {slot} should {name} use?")
# How the summary says what was done, by service; others say "set {name}'s <fields>".
DONE: Mapping[str, str] = {
    "turn_on": "turned on {name}",
    "turn_off": "turned off {name}",
    "open_cover": "opened {name}",
    "close_cover": "closed {name}",
    "open_valve": "opened {name}",
    "close_valve": "closed {name}",
    "lock": "locked {name}",
    "unlock": "unlocked {name}",
    "open": "opened {name}",
    "start": "started {name}",
    "stop": "stopped {name}",
    "pause": "paused {name}",
    "return_to_base": "sent {name} back to its dock",
    "clean_spot": "started a spot clean with {name}",
    "media_play": "started {name} playing",
    "media_pause": "paused {name}",
    "media_stop": "stopped {name}",
    "play_media": "started playing on {name}",
    "volume_up": "turned {name} up",
    "volume_down": "turned {name} down",
    "increase_speed": "sped up {name}",
    "decrease_speed": "slowed down {name}",
}
FIELD_WORDS: Mapping[str, tuple[str, Callable[[Any], str]]] = {
    "brightness_pct": ("brightness", lambda v: f"{v:g}%"),
    "brightness": ("brightness", lambda v: f"{round(v / 2.55)}%"),
    "brightness_step_pct": ("brightness", lambda v: f"{v:+g}% of where it was"),
    "temperature": ("temperature", lambda v: f"{v:g}°C"),
    "target_temp_low": ("low end", lambda v: f"{v:g}°C"),
    "target_temp_high": ("high end", lambda v: f"{v:g}°C"),
    "humidity": ("humidity", lambda v: f"{v:g}%"),
    "percentage": ("speed", lambda v: f"{v:g}%"),
    "position": ("position", lambda v: f"{v:g}%"),
    "tilt_position": ("tilt", lambda v: f"{v:g}%"),
    "volume_level": ("volume", lambda v: f"{round(v * 100)}%"),
    "color_temp_kelvin": ("white", lambda v: f"{v} K"),
    "oscillating": ("oscillation", lambda v: "on" if v else "off"),
    "is_volume_muted": ("mute", lambda v: "on" if v else "off"),
    "color_name": ("colour", str),
}
# The fields whose value the user chooses: a request that states none leaves it open.
CHOSEN = frozenset(
    (
        "brightness_pct",
        "color_temp_kelvin",
        "temperature",
        "percentage",
        "position",
        "volume_level",
        "humidity",
    )
)
HA_REPLIES = 0.3  # how often an English reply is Home Assistant's own response
PYEXEC_STYLE = 0.25  # how many seeds make several calls at once as one pyexec script
OPENERS = ("Done: I {did}.", "I've {did}.", "All set, I {did}.", "OK, I {did}.")
SKIPPED = (
    "I left {names} alone, since the condition didn't hold",
    "Nothing to do for {names}: the condition wasn't met",
)
FAILED = ("I couldn't change {name}: {why}", "{name} refused the change: {why}")
# Replies to a status question ({name} the device, {value} what it shows) and to a yes/no one
# ({state} its state, {expected} the state asked about); a no has a negation (twin.conditions'
# says(False)), a yes none.
READINGS = ("{name} is at {value}.", "{name} reads {value} right now.", "It's {value} ({name}).")
AFFIRMED = ("Yes, {name} is {state}.", "Yes: {name} is {state} right now.")
DENIED = ("No, {name} is {state}.", "No, {name} isn't {expected}; it's {state}.")
# The reply to a request for a device the room lacks ({noun} the kind, {room} the room).
LACKING = (
    "There's no {noun} in {room}, so I couldn't do that; nothing was changed.",
    "I can't find a {noun} in {room}, so I haven't changed anything.",
    "Sorry, {room} has no {noun}. I left everything as it is.",
)
# The reply to a request for a feature the device lacks ({name} the device, {slot} the
# feature's words, FIELD_WORDS).
UNSUPPORTED = (
    "{name} can't change its {slot}, so I couldn't do that; nothing was changed.",
    "Sorry, {name} doesn't support {slot}. I've left it as it is.",
    "That isn't possible: {name} has no {slot} setting, so I haven't changed anything.",
)
# How a state is said where its word is not the state's own (an open/closed sensor's on/off).
STATE_WORDS: Mapping[tuple[str, str], str] = {
    ("binary_sensor", "on"): "open",
    ("binary_sensor", "off"): "closed",
}
# Asking the user to confirm actions the auditor held back; {do} says them ("unlock Front Door").
CONFIRM_QUESTIONS = ("Just to be sure: shall I {do}?", "Do you want me to {do}? Please confirm.")

_PROMPT_AREA = re.compile(r"^### (.*) \(area_id (\S+)\)$")
_PROMPT_COUNTED = re.compile(r"^- (.*) \(area_id (\S+)\): ")
_PROMPT_MEMORY = "# What you know about the user"
_CLAUSE = re.compile(r"[.,;:!?]+")
_PROMPT_ENTITY = re.compile(r"^- ([a-z_]+\.[a-z0-9_]+): (.+?)(?: \[[^\]]*\])?$")


@dataclass(frozen=True, slots=True)
class _Style:
    """How one seed works, drawn once: the same all episode long."""

    query: str
    ask_first: bool
    batch: bool
    group: bool
    as_list: bool
    brightness_255: bool
    mistakes: tuple[str | None, ...]
    pyexec: bool = False  # several calls at once as one pyexec script, where it is offered


@dataclass(frozen=True, slots=True)
class _Call:
    """A tool call of the conversation and its result."""

    name: str
    arguments: dict[str, Any]
    result: dict[str, Any]
    heard: int = 0  # the user messages before it

    @property
    def ok(self) -> bool:
        return self.result.get("success", True) is not False

    @property
    def held(self) -> bool:
        """Whether the auditor held it back for the user's confirmation."""
        failure = self.result.get("error")
        return isinstance(failure, dict) and failure.get("code") == "confirmation_required"

    @property
    def targets(self) -> tuple[str, ...]:
        ids = (self.arguments.get("target") or {}).get("entity_id", ())
        return (ids,) if isinstance(ids, str) else tuple(ids)


@dataclass(slots=True)
class Seen:
    """What the conversation tells: tool calls and results, names and areas, the user's words."""

    calls: list[_Call] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)
    areas: dict[str, str] = field(default_factory=dict)
    rooms: dict[str, str] = field(default_factory=dict)  # area names by id, from the prompt
    said: list[str] = field(default_factory=list)
    memory: str = ""  # what the prompt says it knows about the user
    pyexec: bool = False  # whether the prompt offers pyexec
    made: list[_Call] = field(default_factory=list)  # the service calls that ran, in order

    @classmethod
    def read(cls, messages: Sequence[Message]) -> Seen:
        seen = cls()
        results = {
            message.get("tool_call_id"): _json(message.get("content"))
            for message in messages
            if message.get("role") == "tool"
        }
        for message in messages:
            role = message.get("role")
            if role == "system":
                seen._read_prompt(str(message.get("content") or ""))
            elif role == "user":
                seen.said.append(str(message.get("content") or "").strip())
            elif role == "assistant":
                for call in message.get("tool_calls") or []:
                    function = call["function"]
                    seen._add(
                        _Call(
                            function["name"],
                            _json(function["arguments"]),
                            results.get(call["id"], {}),
                            len(seen.said),
                        )
                    )
        return seen

    def _read_prompt(self, prompt: str) -> None:
        self.pyexec = PYEXEC in prompt
        area, section = None, ""
        for line in prompt.splitlines():
            if line.startswith("#"):
                found = _PROMPT_AREA.match(line)
                area = found.group(2) if found else None
                if found:
                    self.rooms[found.group(2)] = found.group(1)
                section = line if line.startswith("# ") else section
            elif (entity := _PROMPT_ENTITY.match(line)) is not None:
                self.names[entity.group(1)] = entity.group(2)
                if area is not None:
                    self.areas[entity.group(1)] = area
            elif (counted := _PROMPT_COUNTED.match(line)) is not None:
                self.rooms[counted.group(2)] = counted.group(1)
            elif section == _PROMPT_MEMORY:
                self.memory += f" {line.removeprefix('- ')}"

    def named(self, entity_id: str, words: str) -> bool | None:
        """Whether `words` pick out `entity_id` among the devices of its domain seen so far: by
        its name, by its name within its room ("the floor lamp in the living room"), or as the
        only one of them in the home or in a room they name; None while the entity has not
        been seen (a look comes first)."""
        text = sentences.spaced(words)
        name, area = self.names.get(entity_id), self.areas.get(entity_id)
        if name is None:
            return None
        room = self.room(area) if area else ""
        short = sentences.within(name, room)  # said with the room in one clause
        if sentences.spaced(name) in text or any(
            _near(short, room, sentences.spaced(clause)) for clause in _CLAUSE.split(words)
        ):
            return True
        domain = entity_id.partition(".")[0]
        known = [e for e in self.names if e.partition(".")[0] == domain]
        if known == [entity_id]:  # the home's only one, as far as the agent has seen
            return True
        rooms = {*self.areas.values(), *self.rooms}
        said = [a for a in rooms if sentences.spaced(self.room(a)) in text]
        return any([e for e in known if self.areas.get(e) == a] == [entity_id] for a in said)

    def room(self, area_id: str) -> str:
        """An area's name, as the prompt gives it or from its id."""
        return self.rooms.get(area_id) or object_id_words(area_id)

    def _add(self, call: _Call) -> None:
        self.calls.append(call)
        result = call.result
        if call.name == "call_service":
            self.made.append(call)
        elif call.name == "pyexec" and call.ok:  # its calls, as the result lists them
            self.made += [_Call("call_service", dict(c), {}, call.heard) for c in result["calls"]]
        for item in result.get("entities", ()):
            self.names[item["entity_id"]] = item["name"]
            if item.get("area"):
                self.areas[item["entity_id"]] = item["area"]
        if call.ok and call.name == "describe" and "name" in result:
            self.names[result["entity_id"]] = result["name"]

    def observed(self) -> dict[str, State]:
        """The states read with get_state, as the twin's State."""
        return {
            call.result["entity_id"]: State(
                call.result["entity_id"], call.result["state"], call.result["attributes"], 0, 0
            )
            for call in self.calls
            if call.name == "get_state" and call.ok and "state" in call.result
        }

    def services(self) -> list[_Call]:
        """The service calls made, one by one or by a pyexec script that worked."""
        return self.made

    def pyexec_failed(self) -> bool:
        return any(call.name == "pyexec" and not call.ok for call in self.calls)


@dataclass(frozen=True, slots=True)
class _Observed:
    """The part of a Home a condition reads, from the states the agent has seen."""

    states: Mapping[str, State]


class TeacherPolicy:
    """Plays `task` from its ground truth; `seed` picks the style and wording, `mistake_rate`
    the chance that an intent's first call is a mistake to recover from."""

    def __init__(
        self, task: Task, seed: int = 0, mistake_rate: float = 0.0, language: str = "en"
    ) -> None:
        if not 0 <= mistake_rate <= 1:
            raise ValueError(f"mistake_rate must be 0-1, got {mistake_rate}")
        self.task = task
        self.seed = seed
        self.language = language
        rng = random.Random(f"teacher:{seed}")
        self.style = _Style(
            query=rng.choice(QUERIES),
            ask_first=rng.random() < 0.5,
            batch=rng.random() < 0.5,
            group=rng.random() < 0.5,
            as_list=rng.random() < 0.3,
            brightness_255=rng.random() < 0.3,
            mistakes=tuple(
                rng.choice(_mistakes(intent)) if rng.random() < mistake_rate else None
                for intent in task.intents
            ),
            pyexec=random.Random(f"teacher:{seed}:pyexec").random() < PYEXEC_STYLE,
        )

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        """The next message of a careful agent that knows what the user means."""
        return self.next_message(messages)

    def next_message(self, messages: Sequence[Message]) -> AssistantMessage:
        """The next message, from the conversation alone (and the seed)."""
        seen = Seen.read(messages)
        rng = random.Random(f"teacher:{self.seed}:{len(messages)}")
        if self.task.answers:
            return self._answer(seen, rng)
        intents, style = self.task.intents, self.style
        unclear = self.unclear(seen)
        if unclear and (style.ask_first or seen.calls):
            return AssistantMessage(" ".join(_question(*vague, seen, rng) for vague in unclear))
        if not seen.calls:
            return self._calls(seen, [self._query(seen)])
        turn = self.task.stated(seen.said)
        goals = self.task.goals(turn)
        observed = seen.observed()
        unread = [
            ToolCall("", "get_state", {"entity_id": entity_id})
            for entity_id in dict.fromkeys(
                entity_id
                for i in goals
                if intents[i].only_if
                for entity_id in compile_condition(str(intents[i].only_if)).entity_ids
            )
            if entity_id not in observed
        ]
        if unread:
            return self._calls(seen, unread)
        active = [i for i in goals if _holds(intents[i].only_if, observed)]
        made = {i: [call for call in seen.services() if self._covers(call, i)] for i in active}
        held = {i: calls[-1] for i, calls in made.items() if calls and calls[-1].held}
        unasked = [i for i, call in held.items() if call.heard == len(seen.said)]
        if unasked:
            do = _join([_do(intents[i], _name(seen, intents[i].entity_id)) for i in unasked])
            return AssistantMessage(rng.choice(CONFIRM_QUESTIONS).format(do=do))
        confirmed = [i for i, call in held.items() if answer(seen.said[call.heard]) is True]
        pending = [i for i in active if not made[i] or i in confirmed]
        if not pending:
            latest = [i for i in goals if intents[i].turn == turn]
            return AssistantMessage(self._summary(seen, latest, active, rng))
        scripted = self.style.pyexec and seen.pyexec and not seen.pyexec_failed()
        group = pending if scripted and len(pending) > 1 else self._group(pending)
        to_describe = self._to_describe(seen, group)
        if to_describe:
            return self._calls(seen, to_describe)
        if len(group) > 1 and group == pending and scripted:
            return self._calls(seen, [self._script(group)])
        return self._calls(seen, [self._service_call(seen, group)])

    def unclear(self, seen: Seen) -> list[tuple[Intent, str]]:
        """The intents of the user's last turn that its words leave open, with the slot to ask
        about (`vague`), until the user speaks again."""
        turn = self.task.stated(seen.said)
        start = seen.said.index(self.task.followups[turn - 1].strip()) if turn else 0
        if len(seen.said) > start + 1:
            return []
        return [
            (intent, slot)
            for intent in self.task.intents
            if intent.turn == turn and (slot := self.vague(seen, intent)) is not None
        ]

    def vague(self, seen: Seen, intent: Intent) -> str | None:
        """What the user's words (and the memory in the prompt) leave open about `intent`:
        "entity" when they name no device of its domain that the agent can tell apart, its
        value's field when they state no value for it; None when they settle both (or the
        agent has not yet seen the devices it would choose among)."""
        words = " ".join(seen.said)
        named = seen.named(intent.entity_id, words)
        if named is False:
            return "entity"
        key = next((key for key in intent.data if key in CHOSEN), None)
        if key is None or _states(f"{words} {seen.memory}", key, intent.data[key], self.language):
            return None
        return key

    def _answer(self, seen: Seen, rng: random.Random) -> AssistantMessage:
        """A question's or an impossible request's turn: a look at the home, then a read of
        what is asked about, then the reply that states it (or says the home lacks it)."""
        answers = self.task.answers
        if not seen.calls:
            return self._calls(seen, [self._look(answers[0], seen)])
        observed = seen.observed()
        described = {c.arguments.get("entity_id") for c in seen.calls if c.name == "describe"}
        unread = [
            ToolCall("", "describe" if answer.lacks else "get_state", {"entity_id": entity_id})
            for answer in answers
            if (entity_id := answer.entity_id) is not None
            and entity_id not in (described if answer.lacks else observed)
        ]
        if unread:
            return self._calls(seen, unread)
        return AssistantMessage(" ".join(_stated(a, seen, observed, rng) for a in answers))

    def _look(self, answer: Answer, seen: Seen) -> ToolCall:
        """The first look for an answer, by the style's query: what an impossible request
        asks for (where it should be), or the entity asked about."""
        query = self.style.query
        if query == "all":
            return ToolCall("", "list_entities", {})
        if answer.entity_id is None:
            return ToolCall("", "list_entities", dict(answer.absent))
        area = seen.areas.get(answer.entity_id)
        if query == "state":
            return ToolCall("", "get_state", {"entity_id": answer.entity_id})
        if query == "area" and area is not None:
            return ToolCall("", "list_entities", {"area": area})
        return ToolCall("", "list_entities", {"domain": answer.entity_id.partition(".")[0]})

    # --- choosing the calls ----------------------------------------------------------------------

    def _calls(self, seen: Seen, calls: list[ToolCall]) -> AssistantMessage:
        """One message with the calls (all, or the first when the style is one at a time),
        numbered after the conversation's calls."""
        calls = calls if self.style.batch else calls[:1]
        start = len(seen.calls)
        return AssistantMessage(
            "",
            tuple(
                ToolCall(f"call_{start + n}", call.name, call.arguments)
                for n, call in enumerate(calls)
            ),
        )

    def _query(self, seen: Seen) -> ToolCall:
        """A first look at the home, by the style's query."""
        first = self.task.intents[0]
        area = seen.areas.get(first.entity_id)
        query = self.style.query
        if query == "state" and seen.named(first.entity_id, " ".join(seen.said)):
            return ToolCall("", "get_state", {"entity_id": first.entity_id})  # named: read it
        if query == "all":
            return ToolCall("", "list_entities", {})
        if query in ("area", "state") and area is not None:
            return ToolCall("", "list_entities", {"area": area})
        return ToolCall("", "list_entities", {"domain": first.domain})

    def _group(self, pending: list[int]) -> list[int]:
        """The next intents to call: the first pending, with those of the same call if grouping."""
        first = self.task.intents[pending[0]]
        if not self.style.group:
            return pending[:1]
        return [
            i
            for i in pending
            if (intent := self.task.intents[i]).domain == first.domain
            and intent.service == first.service
            and intent.data == first.data
        ]

    def _to_describe(self, seen: Seen, group: list[int]) -> list[ToolCall]:
        """Describe calls for the group's entities, when it sets a field not set before."""
        intents = [self.task.intents[i] for i in group]
        done = {
            (call.arguments.get("domain"), key)
            for call in seen.services()
            if call.ok
            for key in (call.arguments.get("data") or {})
        }
        described = {c.arguments.get("entity_id") for c in seen.calls if c.name == "describe"}
        return [
            ToolCall("", "describe", {"entity_id": intent.entity_id})
            for intent in intents
            if intent.entity_id not in described
            and any((intent.domain, key) not in done for key in intent.data)
        ]

    def _service_call(self, seen: Seen, group: list[int]) -> ToolCall:
        """The group's call: the planned mistake the first time, else the right one."""
        intents = [self.task.intents[i] for i in group]
        ids = [intent.entity_id for intent in intents]
        first = intents[0]
        domain, service = first.domain, first.service
        data = _variants(first.data)[-1 if self.style.brightness_255 else 0]
        mistake = self.style.mistakes[group[0]]
        tried = any(set(call.targets) & set(ids) for call in seen.services())
        if mistake is not None and not tried:
            domain, service, data = _mistaken(first, mistake, data)
        target = {"entity_id": ids if self.style.as_list or len(ids) > 1 else ids[0]}
        arguments: dict[str, Any] = {"domain": domain, "service": service, "target": target}
        if data:
            arguments["data"] = data
        return ToolCall("", "call_service", arguments)

    def _script(self, group: list[int]) -> ToolCall:
        """One pyexec script for the group's intents: a loop over the entities that take the
        same call, a line for each other call (written right: a mistake is for single calls)."""
        calls: dict[str, list[str]] = {}
        for i in group:
            intent = self.task.intents[i]
            data = _variants(intent.data)[-1 if self.style.brightness_255 else 0]
            head = f"{intent.domain!r}, {intent.service!r}" + (f", {data!r}" if data else "")
            calls.setdefault(head, []).append(intent.entity_id)
        lines = []
        for head, ids in calls.items():
            if len(ids) == 1:
                lines.append(f"call_service({head}, entity_id={ids[0]!r})")
            else:
                loop = f"    call_service({head}, entity_id=entity_id)"
                lines += [f"for entity_id in {ids!r}:", loop]
        return ToolCall("", "pyexec", {"code": "\n".join(lines)})

    def _response(self, seen: Seen, index: int) -> str | None:
        """Home Assistant's response, in the task's language, to the intent's call once it
        worked (None where no call worked or no response template says it)."""
        intent = self.task.intents[index]
        last = [call for call in seen.services() if self._covers(call, index)]
        call = spoken(intent.domain, intent.service, intent.data)
        if not last or not last[-1].ok or call is None:
            return None
        name = _name(seen, intent.entity_id)
        slots = {"name": spoken_name(name, self.language), **call[1]}
        return language(self.language).respond(
            call[0], _response_state(seen, intent.entity_id), slots
        )

    def _covers(self, call: _Call, index: int) -> bool:
        """Whether `call` is the intent's own call (made, whether or not it worked)."""
        intent = self.task.intents[index]
        arguments = call.arguments
        return (
            arguments.get("domain") == intent.domain
            and arguments.get("service") == intent.service
            and intent.entity_id in call.targets
            and (arguments.get("data") or {}) in _variants(intent.data)
        )

    # --- saying things ---------------------------------------------------------------------------

    def _summary(self, seen: Seen, latest: list[int], active: list[int], rng: random.Random) -> str:
        """A short reply on the `latest` turn's intents: what was done, what failed, what was
        left alone; in the user's language Home Assistant's own responses when everything was
        done (always outside English, one time in HA_REPLIES in English)."""
        said = latest == [i for i in latest if i in active]
        if said and (self.language != "en" or rng.random() < HA_REPLIES):
            responses = [self._response(seen, i) for i in latest]
            if all(responses):
                return " ".join(f"{_cap(str(text)).rstrip('.')}." for text in responses)
        done, failed = [], []
        for i in (i for i in latest if i in active):
            intent = self.task.intents[i]
            name = _name(seen, intent.entity_id)
            last = [call for call in seen.services() if self._covers(call, i)][-1]
            if last.ok:
                done.append(_done(intent, name))
            else:
                why = last.result.get("error", {}).get("message", "it refused")
                failed.append(rng.choice(FAILED).format(name=name, why=why))
        parts = [rng.choice(OPENERS).format(did=_join(done))] if done else []
        parts += [f"{text}." for text in failed]
        skipped = [_name(seen, self.task.intents[i].entity_id) for i in latest if i not in active]
        if skipped:
            parts.append(rng.choice(SKIPPED).format(names=_join(skipped)) + ".")
        return " ".join(parts)


def _response_state(seen: Seen, entity_id: str) -> dict[str, Any]:
    """The entity as the last call that changed it reported it, for a response template."""
    shown = ""
    for call in seen.services():
        for changed in call.result.get("changed", ()):
            if changed.get("entity_id") == entity_id:
                shown = changed.get("state", "")
    attributes = {"friendly_name": _name(seen, entity_id)}
    return {"entity_id": entity_id, "state": shown, "attributes": attributes}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _mistakes(intent: Intent) -> tuple[str | None, ...]:
    """The mistakes that fit an intent (None when none does)."""
    kinds = (
        "unit" if any(key in WRONG_UNITS for key in intent.data) else None,
        "name" if any(key in WRONG_NAMES for key in intent.data) else None,
        "service" if (intent.domain, intent.service) in WRONG_SERVICES else None,
        "domain" if intent.domain in WRONG_DOMAINS and intent.service in ON_OFF else None,
    )
    return tuple(kind for kind in kinds if kind is not None) or (None,)


def _mistaken(intent: Intent, kind: str, data: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The domain, service and data of a first call gone wrong in the way `kind` says."""
    if kind == "service":
        return intent.domain, WRONG_SERVICES[intent.domain, intent.service], data
    if kind == "domain":
        return WRONG_DOMAINS[intent.domain], intent.service, data
    table: Mapping[str, Any] = WRONG_UNITS if kind == "unit" else WRONG_NAMES
    key = next(key for key in intent.data if key in table)
    wrong = dict(intent.data)
    if kind == "unit":
        wrong[key] = WRONG_UNITS[key](wrong[key])
    else:
        wrong[WRONG_NAMES[key]] = wrong.pop(key)
    return intent.domain, intent.service, wrong


def _variants(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The data, and an equivalent form (brightness for a brightness_pct it rounds to)."""
    forms = [dict(data)]
    if "brightness_pct" in data:
        other = {k: v for k, v in data.items() if k != "brightness_pct"}
        other["brightness"] = round(255 * data["brightness_pct"] / 100)
        forms.append(other)
    return forms


def _holds(only_if: str | None, observed: Mapping[str, State]) -> bool:
    """Whether a guard holds on the states the agent read (a condition it cannot read fails)."""
    if only_if is None:
        return True
    try:
        return compile_condition(only_if).holds(cast("Home", _Observed(observed)))
    except ConditionError:
        return False


def _stated(answer: Answer, seen: Seen, observed: Mapping[str, State], rng: random.Random) -> str:
    """The reply that states the answer from the states read (a no for an impossible
    request, with nothing changed)."""
    if answer.entity_id is None:
        domain, area = answer.absent.get("domain", "device"), answer.absent.get("area")
        room = seen.room(area) if area else "your home"
        noun = NOUNS.get(domain, domain.replace("_", " "))
        return rng.choice(LACKING).format(noun=noun, room=room)
    name = _name(seen, answer.entity_id)
    if answer.lacks is not None:
        slot = FIELD_WORDS.get(answer.lacks, (answer.lacks.replace("_", " "), str))[0]
        return rng.choice(UNSUPPORTED).format(name=name, slot=slot)
    state = observed[answer.entity_id]
    if answer.attribute is not None:
        value = state.attributes.get(answer.attribute)
        return rng.choice(READINGS).format(name=name, value=_plain(value))
    if answer.expected is None:
        unit = state.attributes.get("unit_of_measurement")
        value = f"{_plain(state.state)} {unit}" if unit else _plain(state.state)
        return rng.choice(READINGS).format(name=name, value=value)
    words = STATE_WORDS.get((state.domain, state.state), _plain(state.state))
    expected = STATE_WORDS.get((state.domain, answer.expected), _plain(answer.expected))
    replies = AFFIRMED if state.state == answer.expected else DENIED
    return rng.choice(replies).format(name=name, state=words, expected=expected)


def _near(short: str, room: str, clause: str) -> bool:
    """Whether a clause (as `sentences.spaced`) says a name and its room ("the floor lamp in the
    living room", "im Wohnzimmer die Stehlampe", "desk lamp on and blinds open in the study")."""
    place = sentences.spaced(room)
    return bool(room) and short != place and short in clause and place in clause


def _states(text: str, key: str, value: Any, code: str) -> bool:
    """Whether `text` states `value` for the field `key`: its number (a volume as a share or in
    percent) or, for a colour temperature, its name in the language."""
    if says_value(text, value) or (key == "volume_level" and says_value(text, value * 100)):
        return True
    named = language(code).value_names("color_temperature_names").get(value)
    return key == "color_temp_kelvin" and named is not None and says_value(text, named)


def _question(intent: Intent, slot: str, seen: Seen, rng: random.Random) -> str:
    templates = QUESTIONS.get(slot, QUESTIONS_ANY)
    words = FIELD_WORDS.get(slot, (slot.replace("_", " "), str))[0]
    noun = NOUNS.get(intent.domain, intent.domain)
    return rng.choice(templates).format(name=_name(seen, intent.entity_id), slot=words, noun=noun)


def _done(intent: Intent, name: str) -> str:
    fields = [
        f"{words} to {say(value)}"
        for key, value in intent.data.items()
        for words, say in [FIELD_WORDS.get(key, (key.replace("_", " "), _plain))]
    ]
    if intent.service in DONE:
        did = DONE[intent.service].format(name=name)
        return f"{did} ({', '.join(fields)})" if fields else did
    return f"set {name}'s {_join(fields)}" if fields else f"ran {intent.service} on {name}"


def _do(intent: Intent, name: str) -> str:
    """The intent's action as a request: "unlock Front Door", "open Garage Door"."""
    return f"{intent.service.removesuffix(f'_{intent.domain}').replace('_', ' ')} {name}"


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value).replace("_", " ")


def _name(seen: Seen, entity_id: str) -> str:
    return seen.names.get(entity_id) or object_id_words(entity_id)


def _join(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _json(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text or "{}")
    except (TypeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}

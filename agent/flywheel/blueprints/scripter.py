"""The scripter: one candidate blueprint from a seed, the way the paper's LLM scripter would write
it, offline. It draws a profile and a home, finds a room whose state goes against the profile
(colder than the user likes, too dim to read, stuffy, loud...), writes the scene from that state,
picks 1-3 intents with values from the profile and the device's ranges, and phrases the request
over the control space (`QueryType`: clarity, dependency, devices, tone, a QT4 phenomenon, QT5
memory) from phrases.yaml. A QT4 request takes two user turns: turn 1, said once turn 0 is done,
refers back to turn 0's device ("now set it to 40 %"), switches to another room, or takes turn
0's value back ("actually, make it 21", superseding it). Like an LLM, it errs at `error_rate` (a
hallucinated entity or attribute, an out-of-range value, a goal already met, contradictory
intents, a value against the profile), so that the triple filter has real work.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from twin.home import Home
from twin.homemaker import build_home, plan_home
from twin.manual import describe
from twin.weather import Weather, city

from ...errors import AgentError
from .. import localise, sentences
from ..profiles import Profile, make_profile
from ..sentences import Share
from . import questions
from .model import CLARITIES, REQUESTS, TONES, Candidate, QueryType, Rejected
from .split import SplitError, check_split

HOME_TYPES = ("studio", "apartment", "house", "duplex", "villa")
ERRORS = (
    "hallucinated_entity",
    "hallucinated_attribute",
    "out_of_range",
    "already_true",
    "contradiction",
    "against_profile",
)
# The field whose value a request states, and how it is said.
VALUE_WORDS: Mapping[str, Callable[[Any], str]] = {
    "brightness_pct": lambda v: f"{v:g}%",
    "color_temp_kelvin": lambda v: _kelvin_words(v),
    "temperature": lambda v: f"{v:g} degrees",
    "percentage": lambda v: f"{v:g}%",
    "position": lambda v: f"{v:g}%",
    "volume_level": lambda v: f"{round(v * 100)}%",
    "humidity": lambda v: f"{v:g}%",
    "hvac_mode": lambda v: str(v).replace("_", " "),
}
# Activities that fit a room, by a word of its area id; the first is the default.
ROOM_ACTIVITIES: Mapping[str, tuple[str, ...]] = {
    "study": ("working at the desk", "reading", "video calls", "calligraphy", "crosswords"),
    "office": ("working at the desk", "video calls", "reading"),
    "living": ("watching films", "reading", "gaming", "board games", "knitting", "podcasts"),
    "bedroom": ("getting ready for bed", "reading", "meditation", "yoga"),
    "kitchen": ("cooking", "baking", "podcasts"),
    "dining": ("having dinner", "board games", "crosswords"),
}
# A profile's activity as something one is doing.
DOING: Mapping[str, str] = {
    "video calls": "on a video call",
    "calligraphy": "practising calligraphy",
    "crosswords": "doing crosswords",
    "gaming": "playing video games",
    "board games": "playing board games",
    "podcasts": "listening to podcasts",
    "meditation": "meditating",
    "yoga": "doing yoga",
}
# How a scene says what the user feels, by need.
FEELINGS: Mapping[str, str] = {
    "cold": "feels cold",
    "hot": "feels too warm",
    "dark": "finds it too dark",
    "bright": "finds the light too harsh",
    "stuffy": "finds the air stuffy",
    "humid": "finds it muggy",
    "dry": "finds the air too dry",
    "noisy": "finds it too loud",
    "chore": "is about to wrap up",
    "skip": "does not like this track",
    "music": "would like some music",
    "watch": "wants to watch something",
    "guest": "is expecting a visitor at the door",
    "breakfast": "is making breakfast",
    "work": "is about to start work",
    "laundry": "has a load of washing to do",
    "leak": "hears water dripping somewhere",
    "water": "needs the water back on",
    "shower": "wants a hot shower soon",
}
Paraphrase = Callable[[str], str]
REASONS = 0.45  # how often a request says why
BARE = 0.4  # how often a plain or terse command is said bare ("Turn on the kitchen light.")
RELATIVE = 0.5  # how often a change made in steps is asked for as one ("a bit brighter")
STEP = 20  # the step of a relative brightness change, in percent
QUESTIONS = 0.12  # how often an English request is a status question
IMPOSSIBLE = 0.06  # ... asks for a kind of device the room does not have
ASKING = re.compile(r"(is|are|what|what's|how|how's|do|does|which|who|where|can)\b", re.I)


@dataclass(frozen=True, slots=True)
class _Need:
    """Something wrong in a room, and the intent that would put it right."""

    need: str
    room: str
    intent: dict[str, Any]


class _NoNeed(AgentError):
    """The home gives the scripter nothing to ask for."""


class _Scripter:
    """Scripts one candidate from a seeded rng, a profile and a home."""

    def __init__(
        self,
        rng: random.Random,
        profile: Profile,
        home: Home,
        code: str = "en",
        share: Share = "flywheel",
    ) -> None:
        self.rng, self.profile, self.home, self.code = rng, profile, home, code
        self.share = share
        self.templates: list[str] = []  # the keys of the sentence templates said from
        self.phrases = _phrases(share)
        self.language = sentences.language(code)
        weather = home.weather
        offset = city(weather.city).utc_offset if isinstance(weather, Weather) else 0.0
        self.hour = (home.now / 3600 + offset) % 24
        self.night = self.hour >= 21 or self.hour < 6

    # --- needs from the state and the profile

    def needs(self) -> list[_Need]:
        """Every need the home's state and the profile give rise to, with its fix."""
        found = []
        for entity_id in sorted(self.home.entities):
            room = self.home.area_of(entity_id)
            if room is None or room not in self.home.rooms or self.home.areas[room].outdoor:
                continue
            for need, intent in self._fixes(entity_id, room):
                found.append(_Need(need, room, {"entity_id": entity_id, **intent}))
        return found

    def _fixes(self, entity_id: str, room: str) -> Iterable[tuple[str, dict[str, Any]]]:
        state = self.home.states[entity_id]
        attrs, air, p = state.attributes, self.home.rooms[room], self.profile
        domain = entity_id.partition(".")[0]
        fields = self._fields(entity_id)
        want = p.night_temperature if self.night else p.day_temperature
        if domain == "climate" and "temperature" in fields.get("set_temperature", {}):
            modes = attrs.get("hvac_modes") or ()
            spec = fields["set_temperature"]["temperature"]
            value = _clamp(want, spec)
            for need, mode, wrong in (("cold", "heat", -1.0), ("hot", "cool", 2.0)):
                if mode in modes and (air.temperature - want) * wrong > abs(wrong):
                    data: dict[str, Any] = {"temperature": value}
                    if state.state != mode:
                        data["hvac_mode"] = mode
                    yield need, _call("climate", "set_temperature", data)
            if air.humidity > p.humidity[1] + 5 and "dry" in modes and state.state != "dry":
                yield "humid", _call("climate", "set_hvac_mode", {"hvac_mode": "dry"})
        elif domain == "light":
            level = p.reading_brightness if self._activity(room) == "reading" else p.brightness
            now = round((attrs.get("brightness") or 0) / 2.55)
            data = {}
            if "brightness_pct" in fields.get("turn_on", {}):
                data["brightness_pct"] = level
            white = "color_temp" in (attrs.get("supported_color_modes") or ())
            kelvin = p.evening_kelvin if self.night else p.work_kelvin
            named = _named_kelvin(kelvin, fields.get("turn_on", {}).get("color_temp_kelvin", {}))
            if white and named is not None and self.rng.random() < 0.4:
                data["color_temp_kelvin"] = named
            dim = air.illuminance < 300 or not 8 <= self.hour < 18
            steps = "brightness_step_pct" in fields.get("turn_on", {}) and state.state == "on"
            relative = steps and self.rng.random() < RELATIVE
            if dim and relative and now <= 100 - STEP:
                yield "dark", _call("light", "turn_on", {"brightness_step_pct": STEP})
            elif dim and (state.state == "off" or now < level - 15):
                yield "dark", _call("light", "turn_on", data)
            if relative and now > level + 15 and now > 2 * STEP:
                yield "bright", _call("light", "turn_on", {"brightness_step_pct": -STEP})
            elif state.state == "on" and now > level + 15:
                yield "bright", _call("light", "turn_on", {"brightness_pct": level})
            if state.state == "on":
                yield "chore", _call("light", "turn_off", {})
        elif domain == "fan" and state.state == "off":
            step = attrs.get("percentage_step") or 1
            speeds = [s for s in (50, 75, 100) if abs(s / step - round(s / step)) < 1e-6]
            turn_on = fields.get("turn_on", {})
            data = {"percentage": self.rng.choice(speeds)} if "percentage" in turn_on else {}
            if air.temperature > want + 2:
                yield "hot", _call("fan", "turn_on", data)
            if air.co2 > 900 or air.pm25 > 15:
                yield "stuffy", _call("fan", "turn_on", {})
        elif domain == "cover" and attrs.get("device_class") not in ("garage", "door", "gate"):
            closed = state.state == "closed"
            if attrs.get("device_class") == "window" and closed and air.co2 > 900:
                yield "stuffy", _call("cover", "open_cover", {})
            elif closed and 8 <= self.hour < 18:
                yield "dark", _call("cover", "open_cover", {})
            elif not closed and self.night:
                yield "chore", _call("cover", "close_cover", {})
            elif not closed and air.illuminance > 2000:
                yield "bright", _call("cover", "close_cover", {})
        elif domain == "humidifier":
            drying = attrs.get("device_class") == "dehumidifier"
            band = p.humidity
            need = "humid" if drying else "dry"
            if (air.humidity > band[1] + 5) if drying else (air.humidity < band[0] - 5):
                if state.state == "off":
                    yield need, _call("humidifier", "turn_on", {})
                else:
                    spec = fields["set_humidity"]["humidity"]
                    target = _clamp(band[1] if drying else band[0], spec)
                    yield need, _call("humidifier", "set_humidity", {"humidity": target})
        elif domain == "media_player" and state.state == "playing":
            if "media_pause" in fields:
                yield "noisy", _call("media_player", "media_pause", {})
            volume = attrs.get("volume_level") or 0
            loud = volume > 0.15
            if "volume_down" in fields and loud and self.rng.random() < RELATIVE:
                yield "noisy", _call("media_player", "volume_down", {})
            elif "volume_set" in fields and loud:
                quieter = round(min(p.volume, volume / 2) * 20) / 20 or 0.05
                yield "noisy", _call("media_player", "volume_set", {"volume_level": quieter})
            if "media_next_track" in fields:
                yield "skip", _call("media_player", "media_next_track", {})
        elif domain == "media_player" and state.state == "on":
            yield "noisy", _call("media_player", "turn_off", {})
        elif (
            domain == "media_player"
            and state.state in ("idle", "paused")
            and "media_play" in fields
        ):
            yield "music", _call("media_player", "media_play", {})
        elif domain == "media_player" and state.state == "off" and "turn_on" in fields:
            if attrs.get("device_class") == "tv" and self._activity(room) == "watching films":
                yield "watch", _call("media_player", "turn_on", {})
        elif domain == "lock" and not attrs.get("code_format"):
            if state.state == "unlocked":
                yield "chore", _call("lock", "lock", {})
            elif state.state == "locked" and 8 <= self.hour < 21:
                yield "guest", _call("lock", "unlock", {})
        elif domain == "vacuum" and state.state == "docked":
            yield "chore", _call("vacuum", "start", {})
        elif domain == "vacuum" and state.state == "cleaning":
            yield "noisy", _call("vacuum", "return_to_base", {})
        elif domain == "switch" and state.state == "on":
            yield "chore", _call("switch", "turn_off", {})
        elif domain == "switch" and state.state == "off":
            if "kitchen" in room and 6 <= self.hour < 10:
                yield "breakfast", _call("switch", "turn_on", {})
            elif room.startswith(("study", "office")) and 8 <= self.hour < 18:
                yield "work", _call("switch", "turn_on", {})
            elif room.startswith("laundry") and 8 <= self.hour < 20:
                yield "laundry", _call("switch", "turn_on", {})
        elif domain == "valve" and attrs.get("device_class") == "water":
            if state.state == "open":
                yield "leak", _call("valve", "close_valve", {})
            else:
                yield "water", _call("valve", "open_valve", {})
        elif domain == "water_heater" and "temperature" in fields.get("set_temperature", {}):
            spec = fields["set_temperature"]["temperature"]
            target = _clamp(55, spec)
            if (attrs.get("temperature") or 0) < target - 2:
                yield "shower", _call("water_heater", "set_temperature", {"temperature": target})
        if domain == "fan" and state.state == "on" and air.temperature < want - 1:
            yield "cold", _call("fan", "turn_off", {})
        faster = "increase_speed" in fields and (attrs.get("percentage") or 100) < 100
        if domain == "fan" and state.state == "on" and faster and air.temperature > want + 2:
            yield "hot", _call("fan", "increase_speed", {})
        if domain == "climate" and state.state == "heat" and air.temperature > want + 2:
            yield "hot", _call("climate", "turn_off", {})
        positioned = "position" in fields.get("set_cover_position", {})
        if domain == "cover" and positioned and state.state == "open" and air.illuminance > 2000:
            position = self.rng.choice((20, 30, 40, 50))
            yield "bright", _call("cover", "set_cover_position", {"position": position})

    def _fields(self, entity_id: str) -> dict[str, dict[str, Any]]:
        services = describe(self.home, entity_id)["services"]
        return {name: spec.get("fields", {}) for name, spec in services.items()}

    def _activity(self, room: str) -> str:
        choices = next((v for k, v in ROOM_ACTIVITIES.items() if k in room), ("tidying up",))
        liked = [a for a in self.profile.activities if a in choices]
        return liked[0] if liked else choices[0]

    def _doing(self, room: str) -> str:
        activity = self._activity(room)
        return DOING.get(activity, activity)

    # --- the candidate

    def candidate(self, error_rate: float) -> tuple[Candidate, QueryType, tuple[str, ...], bool]:
        """The candidate, its query type, its scenes, and whether it uses the user's memory."""
        if self.code != "en":
            return self._abroad(error_rate)
        rng = self.rng
        kind = rng.choices(REQUESTS, (1 - QUESTIONS - IMPOSSIBLE, QUESTIONS, IMPOSSIBLE))[0]
        if kind != "command" and (asked := self._asked(kind)) is not None:
            return asked
        needs = self.needs()
        if not needs:
            raise _NoNeed("nothing in the home goes against the profile")
        first = _balanced(rng, needs)
        others = [n for n in needs if n.intent["entity_id"] != first.intent["entity_id"]]
        count = 1 if not others or rng.random() < 0.5 else rng.choice((2, 2, 3))
        chosen = [first]
        while others and len(chosen) < count:
            need = _balanced(rng, others)
            chosen.append(need)
            others = [n for n in others if n.intent["entity_id"] != need.intent["entity_id"]]
        valued = _value_key(first.intent) not in (None, "hvac_mode")
        clarity = rng.choice([c for c in CLARITIES if valued or c in ("clear", "ambiguous")])
        twins = self._twins(first.intent["entity_id"])
        if clarity == "ambiguous" and not self._vague(first.intent["entity_id"], first.room):
            clarity = "implicit" if first.need != "chore" else "clear"
        if clarity == "implicit" and (twins or first.need == "chore"):
            clarity = "clear"
        far = [need for need in chosen[1:] if need.room != first.room]
        phenomena: list[str | None] = [None, None]
        phenomena += ["coreference"] if _base(first.intent) is not None else []
        phenomena += ["backtracking"] if valued and clarity != "missing_slot" else []
        phenomena += ["topic_switch"] if far else []
        phenomenon = rng.choice(phenomena) if clarity in ("clear", "missing_slot") else None
        if phenomenon == "topic_switch":  # the other room's request comes last, in turn 1
            chosen = [need for need in chosen if need is not far[0]] + [far[0]]
        memory = valued and clarity == "clear" and phenomenon != "backtracking"
        qtype = QueryType(
            clarity=clarity,
            dependency="dependent" if rng.random() < 0.35 else "independent",
            devices="multiple" if len(chosen) > 1 else "single",
            tone=rng.choice(TONES),
            phenomenon=phenomenon,
            memory=(memory and rng.random() < 0.3) or clarity == "implicit",
        )
        intents = [dict(need.intent) for need in chosen]
        unnamed = first.intent["entity_id"] if clarity == "ambiguous" else None
        guard = self._guard(chosen[-1], unnamed) if qtype.dependency == "dependent" else None
        if guard is None:
            qtype = replace(qtype, dependency="independent")
        else:
            intents[-1]["only_if"] = guard[0]
        earlier = self._earlier(intents[0], phenomenon)
        turns, followups = self._turns(chosen, intents, qtype, guard[1] if guard else "", earlier)
        if earlier is not None:  # said in turn 0, superseded by the intent said in turn 1
            intents = [earlier, {**intents[0], "turn": 1}, *intents[1:]]
        elif followups:
            intents[-1]["turn"] = 1
        if rng.random() < error_rate:
            intents = self._err(rng.choice(ERRORS), intents)
        rooms = dict.fromkeys(n.room for n in chosen)
        scenes = tuple(self._scene(r, [n.need for n in chosen if n.room == r]) for r in rooms)
        return Candidate(turns, tuple(intents), followups), qtype, scenes, qtype.memory

    def _asked(self, kind: str) -> tuple[Candidate, QueryType, tuple[str, ...], bool] | None:
        """A status question or an impossible request (agent.flywheel.blueprints.questions) in
        the tone's words; None when the home allows none."""
        rng, code = self.rng, self.code
        maker = questions.question if kind == "question" else questions.impossible
        asked = maker(rng, self.home, code, self.share)
        if asked is None:
            return None
        self.templates.append(asked.template)
        tone = rng.choice(TONES)
        said = asked.text.rstrip("?")
        if kind == "question":
            template = str(rng.choice(self.phrases["question_tones"][tone]))
            mark = "?" if ASKING.match(said) else "."
            text = template.format(q=_lower(said), Q=_cap(said), m=mark)
        else:
            text = self._tone(_lower(said), tone)
        qtype = QueryType("clear", "independent", "single", tone, request=kind)
        # No scene: it tells the agent the room's states, which would answer for it.
        return Candidate((text,), (), answers=(asked.answer,)), qtype, (), False

    def _abroad(self, error_rate: float) -> tuple[Candidate, QueryType, tuple[str, ...], bool]:
        """A candidate in another language than English: atomic or compositional requests,
        each in Home Assistant's sentence templates of the language, joined by its "and",
        its tone by its words for please and thanks (the other query types need the English
        phrase bank)."""
        rng = self.rng
        needs = [n for n in self.needs() if sentences.spoken(**_call_of(n.intent)) is not None]
        if not needs:
            raise _NoNeed(f"nothing to ask for that {self.code} templates say")
        chosen = [_balanced(rng, needs)]
        count = 1 if rng.random() < 0.5 else rng.choice((2, 2, 3))
        while len(chosen) < count:
            taken = {c.intent["entity_id"] for c in chosen}
            others = [n for n in needs if n.intent["entity_id"] not in taken]
            if not others:
                break
            chosen.append(_balanced(rng, others))
        said = {id(need): self._assist(need.intent) for need in chosen}
        chosen = [need for need in chosen if said[id(need)] is not None]
        if not chosen:
            raise _NoNeed(f"no {self.code} template says what the home needs")
        table = localise.words(self.code, self.share)
        parts = [str(said[id(n)]) for n in chosen]
        text = ", ".join(parts[:-1]) + (f" {table.conjunction} " if parts[1:] else "") + parts[-1]
        tone = rng.choice(TONES)
        text = _cap(text) + {
            "polite": f", {table.please}.",
            "chatty": f". {_cap(table.thanks)}!",
        }.get(tone, ".")
        qtype = QueryType("clear", "independent", "multiple" if len(chosen) > 1 else "single", tone)
        intents = [dict(n.intent) for n in chosen]
        if rng.random() < error_rate:
            intents = self._err(rng.choice(ERRORS), intents)
        rooms = dict.fromkeys(n.room for n in chosen)
        scenes = tuple(self._scene(r, [n.need for n in chosen if n.room == r]) for r in rooms)
        return Candidate((text,), tuple(intents)), qtype, scenes, False

    def _earlier(self, intent: dict[str, Any], phenomenon: str | None) -> dict[str, Any] | None:
        """What the user asks for first and later builds on (coreference: the device switched
        on, then set) or takes back (backtracking: another value), as a turn-0 intent."""
        if phenomenon == "coreference":
            return _base(intent)
        if phenomenon == "backtracking":
            key = _value_key(intent)
            assert key is not None
            return {**intent, "data": {**intent["data"], key: _nudge(key, intent["data"][key])}}
        return None

    def _twins(self, entity_id: str) -> list[str]:
        """Other entities of the same domain in the same room (which make 'the light' vague)."""
        domain, room = entity_id.partition(".")[0], self.home.area_of(entity_id)
        return [
            e
            for e in sorted(self.home.entities)
            if e != entity_id and e.startswith(domain + ".") and self.home.area_of(e) == room
        ]

    def _guard(self, need: _Need, unnamed: str | None = None) -> tuple[str, str] | None:
        """An only_if on an entity in the need's room (usually one that holds), and its words;
        never on `unnamed`, the device an ambiguous request leaves out (the guard would name it)."""
        entity_id, room = need.intent["entity_id"], need.room
        options = []
        for other in sorted(self.home.entities):
            if self.home.area_of(other) != room:
                continue
            state = self.home.states[other]
            cls = state.attributes.get("device_class")
            if other.startswith("sensor.") and cls == "temperature":
                reading = float(state.state)
                below = self.rng.random() < 0.5
                limit = round(reading + (1 if below else -1) * self.rng.choice((1, 2, 3, -1)))
                test = "<" if below else ">"
                options.append(
                    (
                        f'num("{other}") {test} {limit}',
                        "below" if below else "above",
                        other,
                        f"{limit} degrees",
                    )
                )
            elif other.startswith("binary_sensor.") and cls in ("motion", "occupancy"):
                on = state.state == "on"
                words = "occupied" if on == (self.rng.random() < 0.8) else "empty"
                options.append(
                    (
                        f'state("{other}") == "{"on" if words == "occupied" else "off"}"',
                        words,
                        other,
                        "",
                    )
                )
        own = entity_id.partition(".")[0] in ("light", "switch", "fan", "climate", "media_player")
        if own and entity_id != unnamed:
            on = self.home.states[entity_id].state != "off"
            words = "is_on" if on == (self.rng.random() < 0.85) else "is_off"
            test = f'state("{entity_id}") {"!=" if words == "is_on" else "=="} "off"'
            options.append((test, words, entity_id, ""))
        if not options:
            return None
        test, kind, other, value = self.rng.choice(options)
        text = self.rng.choice(self.phrases["guards"][kind]).format(
            device=self._device(other), room=self._room(room), value=value
        )
        return test, text

    # --- words

    def _turns(
        self,
        chosen: list[_Need],
        intents: list[dict[str, Any]],
        qtype: QueryType,
        guard: str,
        earlier: dict[str, Any] | None,
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The request and the answer to a clarifying question, then the follow-ups (QT4):
        with `earlier`, the opening asks for it and a follow-up for the first intent."""
        rng, bank = self.rng, self.phrases
        first = intents[0]
        answer = None
        if qtype.clarity == "implicit":
            need = chosen[0]
            room = self._room(need.room)
            complaint = rng.choice(bank["implicit"][need.need]).format(room=room, Room=_cap(room))
            opening = f"{complaint}. {rng.choice(bank['implicit_asks'])}"
        else:
            if qtype.clarity == "missing_slot":
                key = _value_key(first)
                assert key is not None
                first["clarify"] = key
                answer = rng.choice(bank["answers"]["value"]).format(value=_say(first, key))
            elif qtype.clarity == "ambiguous":
                first["clarify"] = "entity"
                device = self._device(first["entity_id"])
                answer = rng.choice(bank["answers"]["entity"]).format(
                    device=device, device_cap=_cap(device)
                )
            if earlier is None:
                opening = self._request(first, chosen[0].room, qtype)
            else:
                opening = self._tone(self._command(earlier, chosen[0].room, "commands"), qtype.tone)
            opening = self._because(opening, chosen[0])
        sentences = [opening] + [
            self._tone(self._command(intent, need.room, "commands"), qtype.tone)
            for intent, need in zip(intents[1:], chosen[1:], strict=True)
        ]
        if guard:
            last = len(intents) - 1
            if last == 0:  # the opening says it as its clarity wants; the guard follows
                sentences.append(rng.choice(bank["only_if"]).format(guard=guard))
            else:
                target = intents[last]
                own = self._device(target["entity_id"]) in guard
                command = self._command(
                    target, chosen[last].room, "commands", "it" if own else None
                )
                phrase = rng.choice(bank["conditional"]).format(guard=guard, cmd=_pronoun(command))
                sentences[last] = self._tone(phrase, qtype.tone, "clauses")
        followups = []
        if qtype.phenomenon == "topic_switch":
            second = _lower(sentences.pop())
            followups.append(rng.choice(bank["topic_switch"]).format(second=second))
        elif qtype.phenomenon == "coreference":  # turn 0 ends on the device "it" refers to
            sentences = sentences[1:] + sentences[:1]
            said = self._request(first, chosen[0].room, qtype, rng.choice(bank["pronouns"]))
            followups.append(rng.choice(bank["coreference"]).format(said=said))
        elif qtype.phenomenon == "backtracking":
            key = _value_key(first)
            assert key is not None
            device = self._device(first["entity_id"])
            phrase = rng.choice(bank["backtracking"]).format(value=_say(first, key), device=device)
            followups.append(_cap(phrase))
        turns = [" ".join(sentences)] + ([answer] if answer else [])
        return tuple(turns), tuple(followups)

    def _because(self, said: str, need: _Need) -> str:
        """The request with why the user asks, as people often say (at REASONS)."""
        reasons = self.phrases["reasons"].get(need.need)
        if not reasons or self.rng.random() >= REASONS:
            return said
        reason = self.rng.choice(reasons).format(doing=self._doing(need.room))
        return str(self.rng.choice(self.phrases["because"])).format(
            said=said, said_low=_lower(said), reason=reason, Reason=_cap(reason)
        )

    def _request(
        self, intent: dict[str, Any], room: str, qtype: QueryType, device: str | None = None
    ) -> str:
        """The request for the first intent, as the clarity says; `device` names it."""
        if qtype.clarity == "missing_slot":
            command = self._command(intent, room, "missing", device)
            return self._tone(_pronoun(command), qtype.tone)
        if qtype.clarity == "ambiguous":
            device = self._unnamed(intent["entity_id"], room)
            return self._tone(self._command(intent, room, "commands", device), qtype.tone)
        kind = "memory" if qtype.memory else "commands"
        return self._tone(_pronoun(self._command(intent, room, kind, device)), qtype.tone)

    def _command(
        self, intent: Mapping[str, Any], room: str, kind: str, device: str | None = None
    ) -> str:
        """The command for an intent: in the words of Home Assistant's own sentence templates
        where one asks for it and the device is named, else from the phrase bank."""
        if kind == "commands" and device is None and (said := self._assist(intent)) is not None:
            return said
        action = _action(intent)
        templates = self.phrases[kind].get(action) or self.phrases["commands"][action]
        key = _value_key(intent)
        return str(self.rng.choice(templates)).format(
            device=device or self._device(intent["entity_id"]),
            room=self._room(room),
            value=_say(intent, key) if key else "",
        )

    def _assist(self, intent: Mapping[str, Any]) -> str | None:
        """The intent as an Assist sentence (agent.flywheel.sentences) naming the device by its
        name, by its name and room ("the floor lamp in the living room"), or by its room when
        it is the only one of its kind there; None when no template says it."""
        entity_id, domain = intent["entity_id"], intent["domain"]
        call = sentences.spoken(domain, intent["service"], intent.get("data") or {})
        entry, area_id = self.home.entities.get(entity_id), self.home.area_of(entity_id)
        if call is None or entry is None or not entry.name:
            return None
        name = sentences.spoken_name(entry.name, self.code)
        ways: list[dict[str, Any]] = [{"name": name}]
        if area_id is not None and area_id in self.home.areas:
            area = sentences.spoken_name(self.home.areas[area_id].name, self.code)
            if name.lower().startswith(area.lower() + " "):
                ways.append({"name": name[len(area) + 1 :], "area": area})
            if not self._twins(entity_id):
                ways.append({"area": area})
                cls = self.home.states[entity_id].attributes.get("device_class")
                ways += [{"area": area, "device_class": cls}] if isinstance(cls, str) else []
        self.rng.shuffle(ways)
        intent_name, values = call
        for way in ways:
            slots = {**way, **values}
            said = self.language.say(self.rng, intent_name, domain, slots, share=self.share)
            if said is not None:
                self.templates.append(said.template)
                return said.text
        return None

    def _tone(self, command: str, tone: str, kind: str = "tones") -> str:
        """The command in the tone's words; a plain or terse one often bare (at BARE), as
        Assist users type them."""
        if kind == "tones" and tone in ("plain", "terse") and self.rng.random() < BARE:
            return f"{_cap(command)}."
        template = self.rng.choice(self.phrases[kind][tone])
        return str(template).format(cmd=command, Cmd=_cap(command))

    def _unnamed(self, entity_id: str, room: str) -> str:
        """The device as an ambiguous request says it: "the light in the living room"."""
        noun = self.phrases["nouns"].get(entity_id.partition(".")[0], "device")
        return f"the {noun} in {self._room(room)}"

    def _vague(self, entity_id: str, room: str) -> bool:
        """Whether the ambiguous request's words fit two devices or more of the room: none of
        them is named by what is left of its name without the room's ("the speaker in the
        living room" names the Living Room Speaker)."""
        said = sentences.spaced(self._unnamed(entity_id, room))
        place = self._room(room).removeprefix("the ")
        group = [entity_id, *self._twins(entity_id)]
        names = [self._device(e).removeprefix("the ") for e in group]
        return len(group) > 1 and not any(sentences.within(n, place) in said for n in names)

    def _device(self, entity_id: str) -> str:
        """The device as a request names it: "the living room floor lamp", "Yuki's desk lamp"."""
        entry = self.home.entities.get(entity_id)
        name = entry.name if entry is not None and entry.name else entity_id.partition(".")[2]
        return _the(sentences.spoken_name(name.replace("_", " ")))

    def _room(self, area_id: str) -> str:
        """The room as a request names it: "the living room", "Amara's room"."""
        area = self.home.areas.get(area_id)
        return _the(sentences.spoken_name(area.name if area else area_id.replace("_", " ")))

    def _scene(self, room: str, needs: Sequence[str]) -> str:
        """What is going on in the room, from the home's actual state and the profile."""
        air, p = self.home.rooms[room], self.profile
        first = p.name.split()[0]
        when = _part_of_day(self.hour)
        parts = [
            f"{_cap(when)}, {first} is {self._doing(room)} in {self._room(room)}.",
            f"It is about {air.temperature:.1f} °C there, at {air.humidity:.0f} % humidity"
            + (f", and the air is stale ({air.co2:.0f} ppm CO2)." if air.co2 > 900 else "."),
        ]
        shown = [
            f"{self._device(e)} {'are' if e.endswith('s') else 'is'} {_state_words(self.home, e)}"
            for e in sorted(self.home.entities)
            if self.home.area_of(e) == room and not e.startswith(("sensor.", "binary_sensor."))
        ]
        if shown:
            parts.append(_cap("; ".join(shown[:4])) + ".")
        want = p.night_temperature if self.night else p.day_temperature
        feelings = [FEELINGS[need] for need in dict.fromkeys(needs)]
        parts.append(f"{first} likes {want:g} °C and {' and '.join(feelings)}.")
        return " ".join(parts)

    # --- the scripter's mistakes

    def _bounded(self, intent: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The numeric fields of the intent's service that have a maximum, with it."""
        fields = self._fields(intent["entity_id"]).get(intent["service"], {})
        return [(name, spec["max"]) for name, spec in fields.items() if "max" in spec]

    def _bounded_at(self, intents: Sequence[Mapping[str, Any]]) -> int | None:
        """The first intent whose service has a bounded field, by its index."""
        return next((i for i, intent in enumerate(intents) if self._bounded(intent)), None)

    def _err(self, kind: str, intents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The intents with one mistake of `kind` in them, as an LLM scripter would make it."""
        rng, home, first = self.rng, self.home, dict(intents[0])
        domain = first["entity_id"].partition(".")[0]
        key = _value_key(first)
        if kind == "hallucinated_entity":
            noun = rng.choice(("smart_hub", "main_unit", "ceiling", "device", "2"))
            first["entity_id"] = f"{domain}.{home.area_of(first['entity_id'])}_{noun}"
        elif kind == "hallucinated_attribute":
            wrong = rng.choice(("level", "intensity", "target", "power", "mode_level"))
            first["data"] = {**first["data"], wrong: (first["data"].get(key) if key else 1)}
        elif kind == "out_of_range" and (at := self._bounded_at(intents)) is not None:
            target = dict(intents[at])
            bounded = dict(self._bounded(target))
            own = _value_key(target)
            name = own if own in bounded else next(iter(bounded))
            target["data"] = {**target["data"], name: bounded[name] * rng.choice((2, 3)) + 1}
            return [*intents[:at], target, *intents[at + 1 :]]
        elif kind == "already_true":
            done = [i for e in sorted(home.entities) if (i := _already(home, e)) is not None]
            first = rng.choice(done) if done else first
        elif kind == "contradiction":  # in the entity's last turn, where nothing supersedes it
            opposite = "turn_off" if first["service"] != "turn_off" else "turn_on"
            turn = max(i.get("turn", 0) for i in intents if i["entity_id"] == first["entity_id"])
            return [
                *intents,
                {
                    "domain": domain,
                    "service": opposite,
                    "entity_id": first["entity_id"],
                    "data": {},
                    "turn": turn,
                },
            ]
        elif kind == "against_profile" and domain == "climate" and key == "temperature":
            first["data"] = {**first["data"], "temperature": self.profile.day_temperature + 6}
        else:  # a mistake that does not fit this intent: another entity made up instead
            first["entity_id"] = f"{domain}.{rng.choice(('guest', 'attic', 'annex'))}_{domain}"
        return [first, *intents[1:]]


def _balanced(rng: random.Random, needs: Sequence[_Need]) -> _Need:
    """A need, each domain as likely as another and each of its services as likely as another
    (a home's many lights would otherwise make most requests "turn on a light")."""
    tree: dict[str, dict[str, list[_Need]]] = {}
    for need in needs:
        services = tree.setdefault(need.intent["domain"], {})
        services.setdefault(need.intent["service"], []).append(need)
    services = tree[rng.choice(sorted(tree))]
    return rng.choice(services[rng.choice(sorted(services))])


def _call_of(intent: Mapping[str, Any]) -> dict[str, Any]:
    """An intent's call: its domain, service and data."""
    return {"domain": intent["domain"], "service": intent["service"], "data": intent["data"]}


def _call(domain: str, service: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"domain": domain, "service": service, "data": data}


def _already(home: Home, entity_id: str) -> dict[str, Any] | None:
    """An intent whose outcome already holds on the entity (a goal met at the start)."""
    domain, state = entity_id.partition(".")[0], home.states[entity_id].state
    outcome = {
        ("light", "off"): "turn_off",
        ("light", "on"): "turn_on",
        ("switch", "off"): "turn_off",
        ("lock", "locked"): "lock",
        ("cover", "closed"): "close_cover",
        ("cover", "open"): "open_cover",
    }.get((domain, state))
    return None if outcome is None else {**_call(domain, outcome, {}), "entity_id": entity_id}


def _clamp(value: float, spec: Mapping[str, Any]) -> Any:
    """A value moved into a field's range and onto its step."""
    value = min(max(value, spec.get("min", value)), spec.get("max", value))
    step = spec.get("step")
    if step:
        value = round(value / step) * step
    return int(value) if spec.get("type") == "integer" else value


def _value_key(intent: Mapping[str, Any]) -> str | None:
    """The field whose value the request states (hvac_mode only when it is the only one)."""
    data = intent.get("data") or {}
    keys = [k for k in data if k in VALUE_WORDS and k != "hvac_mode"]
    return keys[0] if keys else ("hvac_mode" if "hvac_mode" in data else None)


def _say(intent: Mapping[str, Any], key: str) -> str:
    data = intent["data"]
    words = VALUE_WORDS[key](data[key])
    if key == "brightness_pct" and "color_temp_kelvin" in data:
        words += f" in {_kelvin_words(data['color_temp_kelvin'])}"
    return words


def _action(intent: Mapping[str, Any]) -> str:
    """The phrase bank's action for an intent."""
    service, data = intent["service"], intent.get("data") or {}
    if "brightness_step_pct" in data:
        return "brighter" if data["brightness_step_pct"] > 0 else "dimmer"
    key = _value_key(intent)
    if intent["domain"] == "climate" and service == "set_temperature":
        mode = data.get("hvac_mode")
        return mode if mode in ("heat", "cool") else "temperature"
    named = {
        "temperature": "temperature",
        "brightness_pct": "brightness",
        "color_temp_kelvin": "kelvin",
        "percentage": "fan_speed",
        "volume_level": "volume",
        "humidity": "humidity",
        "position": "position",
        "hvac_mode": "mode",
    }
    if key is not None:
        return named[key]
    return {
        "turn_on": "on",
        "turn_off": "off",
        "open_cover": "open",
        "close_cover": "close",
        "lock": "lock",
        "start": "vacuum",
        "media_pause": "pause",
        "unlock": "unlock",
        "open_valve": "open",
        "close_valve": "close",
        "media_play": "play",
        "media_next_track": "next",
        "return_to_base": "dock",
        "volume_down": "quieter",
        "increase_speed": "faster",
    }[service]


def _nudge(key: str, value: Any) -> Any:
    """A value the user says first and then takes back: near the right one."""
    if key == "temperature":
        return value + (2 if value < 20 else -2)
    if key == "color_temp_kelvin":
        return value + (800 if value < 4000 else -800)
    if isinstance(value, float) and value < 1:
        return round(min(1.0, value + 0.2), 2)
    return value + 10 if value < 50 else value - 10


def _base(intent: Mapping[str, Any]) -> dict[str, Any] | None:
    """The first step of a request said in two (coreference): the device switched on, or the
    thermostat put in its mode, before the value; None when the intent has no such step."""
    data = intent.get("data") or {}
    if intent["service"] == "turn_on" and data and "brightness_step_pct" not in data:
        return {**intent, "data": {}}
    if intent["domain"] == "climate" and "hvac_mode" in data and len(data) > 1:
        return {**intent, "service": "set_hvac_mode", "data": {"hvac_mode": data["hvac_mode"]}}
    return None


def _pronoun(command: str) -> str:
    """'turn on it' -> 'turn it on'."""
    return re.sub(
        r"\b(turn|switch|put|shut|power|open|lock) (on|off|down|up) it\b", r"\1 it \2", command
    )


def _state_words(home: Home, entity_id: str) -> str:
    state = home.states[entity_id]
    attrs = state.attributes
    if state.state == "on" and attrs.get("brightness") is not None:
        return f"on at {round(attrs['brightness'] / 2.55)} %"
    if entity_id.startswith("climate.") and state.state != "off":
        return f"{state.state.replace('_', ' ')}ing to {attrs.get('temperature')} °C".replace(
            "heating", "heating"
        ).replace("heat_cooling", "on auto")
    if state.state == "playing" and attrs.get("volume_level") is not None:
        return f"playing at volume {round(attrs['volume_level'] * 100)} %"
    return state.state.replace("_", " ")


def _part_of_day(hour: float) -> str:
    return next(
        words
        for end, words in (
            (5, "late at night"),
            (12, "in the morning"),
            (17, "in the afternoon"),
            (21, "in the evening"),
            (24, "late at night"),
        )
        if hour < end
    )


def _the(name: str) -> str:
    """A name with its article: none before a person's ("Amara's room")."""
    return name if re.match(r"\w+['\u2019]s\b", name) else f"the {name}"


def _named_kelvin(kelvin: float, spec: Mapping[str, Any]) -> int | None:
    """The colour temperature with a name ("warm white") nearest to `kelvin` in the field's
    range, or None when none is in it."""
    low, high = spec.get("min", 0), spec.get("max", 100_000)
    named = [k for k in _kelvin_names() if low <= k <= high]
    return min(named, key=lambda k: abs(k - kelvin)) if named else None


def _kelvin_words(kelvin: Any) -> str:
    return _kelvin_names().get(kelvin, f"{kelvin} K")


@cache
def _kelvin_names() -> dict[int, str]:
    """Colour temperatures as English speakers name them, from Home Assistant's sentence data."""
    return sentences.language("en").value_names("color_temperature_names")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


@cache
def _home_types(age: int) -> tuple[str, ...]:
    """The homes a user of `age` may live in as one of its household's adults: a teenager's a
    studio, a young adult's a studio or an apartment, anyone else's any."""
    return ("studio",) if age < 20 else ("studio", "apartment") if age < 25 else HOME_TYPES


def _phrases(share: Share = "flywheel") -> dict[str, Any]:
    """The phrase bank, each list of two or more phrases split as the templates are: its
    phrase of least hash and one in sentences.HELD_OUT besides (never all) are the benchmark's
    (`held_out`), the rest the flywheel's; a phrase alone in its list is both's."""
    text = files("agent.flywheel").joinpath("phrases.yaml").read_text(encoding="utf-8")
    return dict(_shared(yaml.safe_load(text), share == "held_out"))


def _shared(node: Any, held: bool) -> Any:
    if isinstance(node, dict):
        return {key: _shared(value, held) for key, value in node.items()}
    if not isinstance(node, list) or len(node) < 2 or not all(isinstance(p, str) for p in node):
        return node
    ranked = sorted(node, key=_hashed)
    kept = {ranked[0], *(p for p in ranked[1:-1] if _hashed(p) % sentences.HELD_OUT == 0)}
    return [phrase for phrase in node if (phrase in kept) == held]


def _hashed(phrase: str) -> int:
    return int.from_bytes(hashlib.sha256(phrase.encode()).digest()[:4], "big")


@dataclass(frozen=True, slots=True)
class Draft:
    """What the scripter proposes for a seed, before the triple filter: the user, the home, the
    candidate, its query type, scenes and the memory lines it relies on."""

    seed: int
    profile: Profile
    home_type: str
    home: Home
    candidate: Candidate
    query_type: QueryType
    scenes: tuple[str, ...]
    memory: tuple[str, ...]
    language: str = "en"
    share: Share = "flywheel"
    templates: tuple[str, ...] = ()  # the Home Assistant sentence templates the request says


def draft(
    seed: int,
    *,
    error_rate: float = 0.2,
    paraphrase: Paraphrase | None = None,
    bench: bool = False,
    language: str = "en",
    share: Share = "flywheel",
) -> Draft | Rejected:
    """The scripter's candidate for `seed` (the same seed, the same draft), unfiltered, with
    the user speaking `language` (the home named in it); `paraphrase`, e.g. an LLM, rewrites
    the request (not the answers) when given. `share` "held_out" (the benchmark's only) draws
    the held-out templates, phrases and names instead of the flywheel's. SplitError when `seed`
    is on the other side of the split (`bench`: one of BENCH_SEEDS) or a held-out share is
    asked for outside the benchmark; SentenceError for a language HomeFlow does not speak."""
    check_split(seed, bench=bench)
    if share == "held_out" and not bench:
        raise SplitError("The held-out templates, phrases and names are the benchmark's alone")
    rng = random.Random(f"homeflow-blueprint-{seed}")
    profile = make_profile(seed)
    home_type = rng.choice(_home_types(profile.age))
    plan = plan_home(seed, home_type)
    profile = profile.living_in(plan.household)
    home = localise.localise(build_home(plan), language, share)
    scripter = _Scripter(rng, profile, home, language, share)
    try:
        candidate, qtype, scenes, memory = scripter.candidate(error_rate)
    except _NoNeed as err:
        return Rejected(seed, "scene", "no_need", str(err))
    templates = tuple(scripter.templates)
    if paraphrase is not None:  # other words: no template's
        candidate = replace(candidate, turns=(paraphrase(candidate.turns[0]), *candidate.turns[1:]))
        templates = ()
    lines = tuple(profile.memory()) if memory else ()
    return Draft(
        seed,
        profile,
        home_type,
        home,
        candidate,
        qtype,
        tuple(scenes),
        lines,
        language,
        share,
        templates,
    )

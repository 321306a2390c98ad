"""Requests in the words Home Assistant's users say to Assist.

`home-assistant-intents` holds the sentence templates Home Assistant matches (community-written,
in 60+ languages) and `hassil` parses them. They are written for matching, not for saying: every
optional word, every spelling ("whats", "what's") and every unit is there, so sampled as they
are they read "is the some blind open". This module walks a template with a seeded rng the way a
person would say it (earlier alternatives, which the templates list first because they are the
common ones, more often; one spelling of each word; the slot values as given: the home's names,
areas and values) and keeps a sentence only when Home Assistant's own matcher reads it back as
the same intent with the same slots, so what it says is what Home Assistant would do.

One template in `HELD_OUT` (by a hash of its language, intent and text; never a block's only
one) is the benchmark's alone: the flywheel never says it, so the benchmark's
out-of-distribution split has templates no training request used.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Literal, NamedTuple

import home_assistant_intents
import jinja2
import jinja2.sandbox
from hassil import Intents, recognize_best
from hassil.expression import (
    Alternative,
    Expression,
    Group,
    ListReference,
    Permutation,
    RuleReference,
    Sentence,
    TextChunk,
)
from hassil.expression import Sequence as Series
from hassil.intents import IntentData, RangeSlotList, SlotList, TextSlotList

from twin.domains import DOMAINS

from ..errors import AgentError
from .language import words

LANGUAGES = ("en", "de", "fr", "es", "nl", "it", "pl", "pt")
HELD_OUT = 5  # one template in five is the benchmark's
# The slots a request's words name, as the sentence templates call them; the rest of a
# template's slots (a block's fixed `domain`, say) come from the block, not the words.
SPOKEN = frozenset(
    {
        "name",
        "area",
        "floor",
        "brightness",
        "color",
        "temperature",
        "position",
        "percentage",
        "volume_level",
        "device_class",
        "state",
    }
)
TRIES = 12  # walks per request before giving up on the templates
OPTIONAL = 0.35  # how often an optional part is said
GLUE = 0.7  # ... when its words are short ("the", "to", "of")
ARTICLE = 0.85  # ... and a name or an area follows, in English ("what is the hall lamp")
LEADING = 0.9  # ... when it opens the sentence (a verb: "turn", "set")
AFTER_NAME = 0.05  # ... when it follows a name or an area
FALLOFF = 0.45  # each later alternative is this much less likely than the one before
Share = Literal["flywheel", "held_out"]
# Home Assistant's response templates are Jinja, rendered in a sandbox as its own are.
_JINJA = jinja2.sandbox.ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
SHARES: tuple[Share, ...] = ("flywheel", "held_out")


class SentenceError(AgentError, ValueError):
    """A language Home Assistant's templates do not have."""


class _Unsayable(AgentError):
    """The walk reached a slot whose value the template cannot say."""


@dataclass(frozen=True, slots=True)
class Template:
    """One sentence template of an intent: the block it is in, its text and parse."""

    intent: str
    block: IntentData
    text: str
    sentence: Sentence
    slots: frozenset[str]
    lists: frozenset[str]  # the value lists it says them from
    share: Share = "flywheel"

    @property
    def key(self) -> str:
        """A short, stable name for the template: its intent and a hash of its text."""
        return f"{self.intent}/{hashlib.sha256(self.text.encode()).hexdigest()[:8]}"


class Saying(NamedTuple):
    """A sentence and the key of the template it was said from."""

    text: str
    template: str


@dataclass(frozen=True)
class Language:
    """Home Assistant's intents for one language, parsed, with their templates by intent."""

    code: str
    intents: Intents
    templates: Mapping[str, tuple[Template, ...]]
    responses: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def respond(
        self, intent: str, state: Mapping[str, Any], slots: Mapping[str, Any]
    ) -> str | None:
        """What Home Assistant answers once `intent` has acted on an entity: its response
        template for the entity's domain, else for a slot set (HassLightSet's "brightness"),
        else the intent's default, rendered as its intent handlers render them, with the
        entity's `state` as get_state gives it and the request's `slots`; None when the
        language has none, or it needs what is not given."""
        domain = str(state.get("entity_id", "")).partition(".")[0]
        known = self.responses.get(intent, {})
        keyed = (known.get(key) for key in (domain, *slots, "default"))  # as the handlers pick
        template = next((text for text in keyed if text is not None), None)
        if template is None:
            return None
        attributes = state.get("attributes") or {}
        unit = attributes.get("unit_of_measurement")
        shown = {
            **state,
            "domain": domain,
            "name": attributes.get("friendly_name", slots.get("name", "")),
            "state_with_unit": f"{state.get('state')} {unit}" if unit else state.get("state"),
        }
        try:
            text = _JINJA.from_string(template).render(
                slots=dict(slots),
                state=shown,
                query={"matched": [shown], "unmatched": []},
                state_attr=lambda _, name: attributes.get(name),
            )
        except jinja2.TemplateError:
            return None
        said = re.sub(r"\s+", " ", text).strip()
        return said or None

    def say(
        self,
        rng: random.Random,
        intent: str,
        domain: str,
        slots: Mapping[str, Any],
        *,
        share: Share = "flywheel",
    ) -> Saying | None:
        """A sentence asking for `intent` on `domain` with exactly these `slots` (names and
        areas as text, values as numbers or list values), from the templates of `share`, and
        the template's key; None when none says it in a way Home Assistant reads back."""
        fitting = list(self.usable(intent, domain, frozenset(slots), share))
        weights = [_weight(template, fitting) for template in fitting]
        for _ in range(TRIES if fitting else 0):
            template = rng.choices(fitting, weights)[0]
            try:
                walk = _Walk(self.intents, rng, slots, english=self.code == "en")
                text = walk.say(template.sentence.expression)
            except _Unsayable:
                continue
            if _reads_well(text, slots) and self.reads_back(text, intent, domain, slots):
                return Saying(text, template.key)
        return None

    def usable(
        self, intent: str, domain: str, slots: frozenset[str], share: Share
    ) -> Iterator[Template]:
        """The templates of `share` that say exactly `slots` and fit `domain`."""
        for template in self.templates.get(intent, ()):
            block = template.block
            fixed = block.slots.get("domain")
            if template.slots != slots or (block.domains and domain not in block.domains):
                continue
            if fixed not in (None, domain) or template.share != share:
                continue
            yield template

    def value_names(self, list_name: str) -> dict[Any, str]:
        """A value list's values as first spelled ("warm white" for 2700)."""
        known = self.intents.slot_lists.get(list_name)
        if not isinstance(known, TextSlotList):
            raise SentenceError(f"{self.code} has no value list {list_name!r}")
        return {
            value.value_out: _Walk(self.intents, random.Random(0), {}).first(value.text_in)
            for value in known.values
        }

    def reads_back(self, text: str, intent: str, domain: str, slots: Mapping[str, Any]) -> bool:
        """Whether Home Assistant's matcher reads `text` as `intent` with these slot values."""
        lists: dict[str, SlotList] = {
            key: TextSlotList.from_tuples(
                [(str(slots[key]), str(slots[key]), {"domain": domain})] if key in slots else []
            )
            for key in ("name", "area", "floor")
        }
        result = recognize_best(
            text, self.intents, slot_lists=lists, language=self.code, best_slot_name="name"
        )
        if result is None or result.intent.name != intent:
            return False
        found = {key: entity.value for key, entity in result.entities.items()}
        return all(_same(found.get(key), value) for key, value in slots.items())


class _Walk:
    """One walk over a template, saying it the way a person would: a leading optional (the
    verb, mostly) usually said, short glue words more often than other optional words, an
    optional after a name or area seldom (the name names the thing: "the desk lamp", not "the
    desk lamp light") unless it is the glue before a value ("to 40%"), of optional rules side
    by side one at most ("all the", not "each the"), an optional rule once until a word of the
    template's own comes ("the kitchen floor lamp", not "the kitchen the floor lamp"), no
    article before a person's name, an ending after a number always ("21 degrees")."""

    def __init__(
        self,
        intents: Intents,
        rng: random.Random,
        slots: Mapping[str, Any],
        *,
        english: bool = True,
    ) -> None:
        self.intents, self.rng, self.slots, self.english = intents, rng, slots, english
        self.out: list[str] = []
        self.rules: set[str] = set()  # optional rules said since the last required word

    def say(self, expression: Expression) -> str:
        self.walk(expression)
        text = re.sub(r"\s+", " ", "".join(self.out)).strip()
        return re.sub(r"(\d) ([%°])", r"\1\2", text)

    def first(self, expression: Expression) -> str:
        """The expression's first spelling: every first alternative, no optional part."""
        if isinstance(expression, TextChunk):
            return expression.text
        if isinstance(expression, Alternative):
            return "" if expression.is_optional else self.first(expression.items[0])
        if isinstance(expression, Group):
            return re.sub(r"\s+", " ", "".join(map(self.first, expression.items))).strip()
        return ""

    def walk(self, expression: Expression) -> None:
        if isinstance(expression, TextChunk):
            self.out.append(expression.text)
            if expression.text.strip():
                self.rules.clear()
        elif isinstance(expression, Alternative):
            self.optional(expression, OPTIONAL) if expression.is_optional else self.walk(
                _choose(self.rng, expression)
            )
        elif isinstance(expression, Permutation):
            items = list(expression.items)
            self.rng.shuffle(items)
            for item in items:
                self.out.append(" ")
                self.walk(item)
            self.out.append(" ")
        elif isinstance(expression, Group):
            self.sequence(expression.items)
        elif isinstance(expression, RuleReference):
            self.walk(self.intents.expansion_rules[expression.rule_name].expression)
            self.rules.clear()
        elif isinstance(expression, ListReference):
            self.value(expression)

    def sequence(self, items: Sequence[Expression]) -> None:
        words = [i for i in items if not (isinstance(i, TextChunk) and not i.text.strip())]
        said_rule = False  # the item before was an optional rule, said
        at = -1
        for item in items:
            if isinstance(item, TextChunk) and not item.text.strip():
                self.out.append(item.text)
                continue
            at += 1
            before = words[at - 1] if at else None
            after = words[at + 1] if at + 1 < len(words) else None
            if isinstance(item, Alternative) and item.is_optional:
                rule = all(isinstance(_unwrap(i), RuleReference) for i in item.items if _said(i))
                said_rule = self.optional(item, self.chance(item, before, after, said_rule))
                said_rule = said_rule and rule
            else:
                said_rule = False
                self.walk(item)

    def chance(
        self, item: Alternative, before: Expression | None, after: Expression | None, rule: bool
    ) -> float:
        """How likely the optional `item` is said, between `before` and `after`."""
        named = _slot(before) in ("name", "area")
        if before is None:
            return LEADING
        if rule and all(isinstance(_unwrap(i), RuleReference) for i in item.items if _said(i)):
            return 0.0  # "[<all>] [<the>]": one of the two
        if isinstance(after, ListReference) and _possessive(self.slots.get(after.slot_name)):
            return 0.0  # no article before a person's name ("Amara's room")
        valued = isinstance(after, ListReference) and _slot(after) not in ("name", "area")
        if named and not (self.short(item) and valued):
            return AFTER_NAME  # but "the desk lamp to 40%" keeps its "to"
        # Glue words are often articles, which agree with a noun's gender where English has
        # none: outside English they are said no more often than other optional words.
        if self.english and self.short(item):
            return ARTICLE if _slot(after) in ("name", "area") else GLUE
        return OPTIONAL

    def short(self, expression: Expression) -> bool:
        """Whether every word the expression can say is short (a glue word: "the", "to")."""
        if isinstance(expression, TextChunk):
            return len(expression.text.strip()) <= 4
        if isinstance(expression, Group):
            return all(self.short(item) for item in expression.items)
        if isinstance(expression, RuleReference):
            return self.short(self.intents.expansion_rules[expression.rule_name].expression)
        return False

    def optional(self, alternative: Alternative, chance: float) -> bool:
        """Say the optional part at `chance` (by the rules above); whether it was said."""
        items = [_unwrap(i) for i in alternative.items if _said(i)]
        rules = {i.rule_name for i in items if isinstance(i, RuleReference)}
        ending = len(items) == 1 and isinstance(items[0], TextChunk) and items[0].text[:1].isalpha()
        unit = any(self.first(item)[:1] in ("%", "°") for item in items if self.first(item))
        if (ending or unit) and re.search(r"\d[\s°%]*\w*$", "".join(self.out)[-24:]):
            chance = 1.0  # "21 degree[s]", "50[%| percent]": a number takes its unit, its ending
        if (rules and rules <= self.rules) or self.rng.random() >= chance:
            return False
        self.walk(_choose(self.rng, Alternative(items=items)))
        self.rules |= rules
        return True

    def value(self, ref: ListReference) -> None:
        if ref.slot_name not in self.slots:
            raise _Unsayable(ref.slot_name)
        value = self.slots[ref.slot_name]
        known = self.intents.slot_lists.get(ref.list_name)
        if isinstance(known, TextSlotList):
            said = [v.text_in for v in known.values if _same(v.value_out, value)]
            if not said:
                raise _Unsayable(ref.slot_name)
            self.walk(self.rng.choice(said))
        elif isinstance(known, RangeSlotList):
            if not isinstance(value, int | float) or not known.start <= value <= known.stop:
                raise _Unsayable(ref.slot_name)
            number = f"{value:g}"
            self.out.append(number if self.english else number.replace(".", ","))  # "20,5"
        elif known is None and not isinstance(value, int | float):
            self.out.append(str(value))
        else:  # a wildcard, or a number where the home's text goes
            raise _Unsayable(ref.slot_name)


def spoken(domain: str, service: str, data: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The Assist intent that asks for this service call (the domain's `spoken`, twin.domains)
    and its value slots, or None when no intent says exactly these fields."""
    known = DOMAINS.get(domain)
    for option in known.spoken.get(service, ()) if known is not None else ():
        if set(option.slots) == set(data):
            return option.intent, {
                slot: round(data[key] * option.scale[key], 6) if key in option.scale else data[key]
                for key, slot in option.slots.items()
            }
    return None


def spoken_name(name: str, code: str = "en") -> str:
    """A registry name as a person types it: in English, lower case but for a person's name
    ("Amara's Room" -> "Amara's room") and an abbreviation ("TV"); in German as written (its
    nouns are capitals); in the others the first word in lower case ("Lampadaire salon" ->
    "lampadaire salon", "Chambre de Léa" -> "chambre de Léa")."""
    if code == "de":
        return name
    if code != "en":
        first, _, rest = name.partition(" ")
        first = first if first.isupper() and len(first) > 1 else first[:1].lower() + first[1:]
        return f"{first} {rest}".strip()
    return " ".join(
        w if re.search(r"['\u2019]s$", w) or (w.isupper() and len(w) > 1) else w.lower()
        for w in name.split()
    )


def spaced(text: str) -> str:
    """Text as its words (agent.flywheel.language.words), space-padded, so that `spaced(a) in
    spaced(b)` finds a phrase in another at word boundaries."""
    return f" {' '.join(words(text))} "


def within(name: str, room: str) -> str:
    """A device's name within its room, as `spaced`: the name less the room's words that open
    it ("Living Room Floor Lamp" in the living room: " floor lamp ")."""
    full, place = spaced(name), spaced(room)
    return f" {full[len(place) :]}" if full.startswith(place) and full != place else full


def language(code: str) -> Language:
    """Home Assistant's intents for a language code ("en", "de"...); SentenceError if none."""
    if code not in home_assistant_intents.get_languages():
        raise SentenceError(
            f"Home Assistant's intents have no language {code!r}; "
            f"use one of {', '.join(sorted(home_assistant_intents.get_languages()))}"
        )
    return _language(code)


@cache
def _language(code: str) -> Language:
    data = home_assistant_intents.get_intents(code)
    assert data is not None
    intents = Intents.from_dict(data)
    templates: dict[str, list[Template]] = {}
    for name, intent in intents.intents.items():
        for block in intent.data:
            if set(block.requires_context) - {"domain"}:
                continue  # said "here": the words leave out what the satellite's room gives
            found = [
                Template(name, block, text, sentence, *_references(intents, sentence))
                for text, sentence in zip(block.sentence_texts, block.sentences, strict=True)
            ]
            templates.setdefault(name, []).extend(_held_out(code, found))
    responses = data.get("responses", {}).get("intents", {})
    return Language(code, intents, {k: tuple(v) for k, v in templates.items()}, responses)


def _held_out(code: str, block: list[Template]) -> list[Template]:
    """A block's templates with one in HELD_OUT (by a hash of language, intent and text) held
    out, but only where another of the block says the same slots from the same lists, so that
    the flywheel can still say everything the block asks for."""

    def hashed(template: Template) -> bool:
        key = f"{code}\n{template.intent}\n{template.text}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:4], "big") % HELD_OUT == 0

    kept = {(t.slots, t.lists) for t in block if not hashed(t)}
    return [
        replace(t, share="held_out") if hashed(t) and (t.slots, t.lists) in kept else t
        for t in block
    ]


def _references(intents: Intents, sentence: Sentence) -> tuple[frozenset[str], frozenset[str]]:
    """The slots a template says (of SPOKEN) and the lists it says them from."""
    group = sentence.expression
    assert isinstance(group, Group)
    refs = [r for r in group.list_references(intents.expansion_rules) if r.slot_name in SPOKEN]
    return frozenset(r.slot_name for r in refs), frozenset(r.list_name for r in refs)


def _unwrap(expression: Expression) -> Expression:
    """The one item a sequence of one holds (hassil wraps each alternative in one)."""
    while isinstance(expression, Series) and len(expression.items) == 1:
        expression = expression.items[0]
    return expression


def _said(expression: Expression) -> bool:
    """Whether an item of an optional says something (not its empty choice)."""
    return not (isinstance(expression, TextChunk) and not expression.text)


def _slot(expression: Expression | None) -> str | None:
    return expression.slot_name if isinstance(expression, ListReference) else None


def _possessive(value: Any) -> bool:
    return isinstance(value, str) and re.match(r"\w+['\u2019]s\b", value) is not None


def _weight(template: Template, fitting: Sequence[Template]) -> float:
    """A block for fewer domains than another that fits is for names that leave out their
    noun ("kitchen" for the kitchen light: "turn on the kitchen light"), so said seldom."""
    narrow = template.block.domains
    return 0.1 if any(narrow < other.block.domains for other in fitting) else 1.0


def _choose(rng: random.Random, alternative: Alternative) -> Expression:
    """One item of an alternative, earlier items more often (the templates list the common
    words first), one spelling of words that differ only in punctuation or spacing."""
    seen: set[str] = set()
    distinct = []
    for item in map(_unwrap, alternative.items):
        key = re.sub(r"\W", "", item.text) if isinstance(item, TextChunk) else str(id(item))
        if key not in seen:
            seen.add(key)
            distinct.append(item)
    weights = [FALLOFF**i for i in range(len(distinct))]
    return rng.choices(distinct, weights)[0]


_SHORT_VERBS = frozenset({"set", "put", "dim"})
# English sentences a walk may say that no one would: "make the lamp to blue", "set the speed
# the fan to 50%".
_ENGLISH_SLIPS = (
    r"\bmake\b(?:(?!\band\b).)*\bto\b|"
    r"\b(speed|brightness|colou?r|volume|temperature|position) (the|my|our)\b"
)


def _reads_well(text: str, slots: Mapping[str, Any]) -> bool:
    """No word said twice in a row ("the the", "to to"), no "is there" but before "any" ("is
    there the lamp on"), no two articles in a row ("the our"), and a word of the sentence's
    own besides the slots' values (not a bare "the desk lamp 40%"); in English no "make" with
    "to" ("make the lamp to blue") and no setting without its "of" ("the speed the fan")."""
    if re.search(r"\b(is|are) there\b(?! any)|\b(the|my|our) (the|my|our)\b", text, re.I):
        return False
    if re.search(_ENGLISH_SLIPS, text, re.I):
        return False
    words = text.lower().split()
    rest = text.lower()
    for value in slots.values():
        rest = rest.replace(str(value).lower(), " ")
    # a word longer than an article ("turn", "pause"), or a short verb ("set the lamp to blue")
    own = [w for w in re.findall(r"[^\W\d]+", rest) if len(w) >= 4 or w in _SHORT_VERBS]
    return all(a != b for a, b in itertools.pairwise(words)) and bool(own)


def _same(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, int | float) and not isinstance(wanted, bool):
        try:
            return abs(float(found) - float(wanted)) < 1e-6
        except (TypeError, ValueError):
            return False
    return str(found).casefold() == str(wanted).casefold()

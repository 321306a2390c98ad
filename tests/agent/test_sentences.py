"""Requests in Home Assistant's own sentence templates: every language the flywheel speaks says
every kind of request, Home Assistant's matcher reads each sentence back as what was meant,
the benchmark's templates are held out, and the words read as a person's."""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from typing import Any

import home_assistant_intents
import pytest

from agent.bench.instances import play
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.sentences import (
    HELD_OUT,
    LANGUAGES,
    SPOKEN,
    SentenceError,
    Share,
    language,
    spoken,
    spoken_name,
)
from agent.policies.teacher import TeacherPolicy
from twin.domains import DOMAINS

SHARES: tuple[Share, ...] = ("flywheel", "held_out")
# A request of each kind the twin's domains speak: (intent, domain, slots).
REQUESTS: list[tuple[str, str, dict[str, Any]]] = [
    ("HassTurnOn", "light", {"name": "desk lamp"}),
    ("HassTurnOff", "light", {"name": "floor lamp", "area": "living room"}),
    ("HassLightSet", "light", {"name": "desk lamp", "brightness": 40}),
    ("HassClimateSetTemperature", "climate", {"name": "thermostat", "temperature": 21}),
    ("HassTurnOn", "cover", {"name": "kitchen blind"}),
    ("HassTurnOn", "lock", {"name": "front door"}),
    ("HassFanSetSpeed", "fan", {"name": "ceiling fan", "percentage": 50}),
    ("HassSetVolume", "media_player", {"name": "speaker", "volume_level": 20}),
    ("HassVacuumStart", "vacuum", {"name": "robot vacuum"}),
]


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_language_says_every_kind_of_request_and_home_assistant_reads_it_back(
    code: str,
) -> None:
    words = language(code)
    rng = random.Random(code)
    said = {}
    for intent, domain, slots in REQUESTS:
        if not _fits(code, intent, domain, slots):
            continue  # Portuguese has no fan speeds, Polish no locks
        text = next(
            (t.text for _ in range(5) if (t := words.say(rng, intent, domain, slots)) is not None),
            None,
        )
        assert text is not None, (code, intent, slots)
        assert words.reads_back(text, intent, domain, slots)
        assert str(slots["name"]) in text
        said[intent, domain] = text
    assert len(set(said.values())) == len(said) >= len(REQUESTS) - 2


def _fits(code: str, intent: str, domain: str, slots: dict[str, Any]) -> bool:
    """Whether any template of the language, either share, asks for the request."""
    words, keys = language(code), frozenset(slots)
    return any(next(words.usable(intent, domain, keys, share), None) for share in SHARES)


def test_the_same_rng_says_the_same_and_wrong_values_are_not_said() -> None:
    words = language("en")
    slots = {"name": "desk lamp", "brightness": 40}
    first = [words.say(random.Random(7), "HassLightSet", "light", slots) for _ in range(2)]
    assert first[0] == first[1] is not None
    rng = random.Random(1)
    assert words.say(rng, "HassLightSet", "light", {"name": "lamp", "brightness": 140}) is None
    assert words.say(rng, "HassLightSet", "light", {"name": "lamp", "color": "plaid"}) is None
    assert words.say(rng, "HassNoSuchIntent", "light", {"name": "lamp"}) is None
    assert words.say(rng, "HassTurnOn", "light", {"name": "lamp", "position": 3}) is None
    assert not words.reads_back("make me a sandwich", "HassTurnOn", "light", {"name": "lamp"})
    with pytest.raises(SentenceError, match="no language 'xx'"):
        language("xx")
    with pytest.raises(SentenceError, match="no value list"):
        words.value_names("nope")


def test_the_benchmarks_templates_are_held_out_of_the_flywheel() -> None:
    for code in LANGUAGES:
        words = language(code)
        for intent, domain, slots in REQUESTS:
            if not _fits(code, intent, domain, slots):
                continue
            keys = frozenset(slots)
            mine = {t.text for t in words.usable(intent, domain, keys, "flywheel")}
            held_texts = {t.text for t in words.usable(intent, domain, keys, "held_out")}
            assert mine, (code, intent)
            assert not mine & held_texts
    english = language("en")
    everything = [t for ts in english.templates.values() for t in ts]
    held = [t for t in everything if t.share == "held_out"]
    assert 0.1 < len(held) / len(everything) < 1 / HELD_OUT + 0.05
    assert all(len(t.block.sentence_texts) > 1 for t in held)  # never a block's only one


def test_the_words_read_as_a_persons() -> None:
    """No word said twice in a row, no article before a person's name, a number's unit with
    the number's ending, a percentage with its "%" or "percent", no "make ... to", no setting
    without its "of", no bare name as a request."""
    words, rng = language("en"), random.Random(3)
    area = {"name": "desk lamp", "area": "Amara's room"}
    for _ in range(60):
        for intent, domain, slots in [
            ("HassTurnOn", "light", area),
            ("HassClimateSetTemperature", "climate", {"name": "radiator", "temperature": 21}),
            ("HassTurnOn", "light", {"name": "desk lamp"}),
            ("HassLightSet", "light", {"name": "desk lamp", "brightness": 50}),
            ("HassLightSet", "light", {"name": "desk lamp", "color": "blue"}),
            ("HassFanSetSpeed", "fan", {"name": "ceiling fan", "percentage": 50}),
        ]:
            saying = words.say(rng, intent, domain, slots)
            assert saying is not None
            text = saying.text
            assert saying.template.startswith(f"{intent}/")
            low = text.lower().split()
            assert all(a != b for a, b in itertools.pairwise(low)), text
            assert not re.search(r"\b(the|my|our) Amara's", text), text
            assert not re.search(r"\b21 degree\b", text), text
            assert not re.search(r"\b50\b(?!%| percent)", text), text
            assert not re.search(r"\bmake\b.*\bto\b", text, re.I), text
            assert not re.search(r"\b(speed|brightness|colou?r) (the|my|our)\b", text), text
            assert text.lower() != "desk lamp"


def test_every_spoken_intent_is_one_home_assistant_has() -> None:
    english = home_assistant_intents.get_intents("en")
    assert english is not None
    found = 0
    for domain in DOMAINS.values():
        for service, options in domain.spoken.items():
            assert service in domain.services
            for option in options:
                assert option.intent in english["intents"], option
                assert set(option.slots.values()) <= SPOKEN, option
                found += 1
    assert found >= 25
    assert spoken("media_player", "volume_set", {"volume_level": 0.3}) == (
        "HassSetVolume",
        {"volume_level": 30.0},
    )
    assert spoken("light", "turn_on", {"brightness_pct": 40, "color_temp_kelvin": 2700}) is None
    assert spoken("cover", "open_cover", {}) == ("HassTurnOn", {})
    assert spoken("no_such_domain", "turn_on", {}) is None


def test_names_are_said_as_people_type_them() -> None:
    assert spoken_name("Amara's Room Desk Lamp") == "Amara's room desk lamp"
    assert spoken_name("Master Bedroom AC") == "master bedroom AC"
    assert spoken_name("Walk-in Closet LED Strip") == "walk-in closet LED strip"
    assert spoken_name("Stehlampe", "de") == "Stehlampe"


def test_the_flywheels_requests_name_things_readably_and_say_values_as_people_do() -> None:
    """No slug ("amara s room", "living_room"), no raw limit or kelvin figure; the
    templates of Home Assistant phrase most requests."""
    said = []
    for seed in range(150):
        found = make_blueprint(seed)
        if isinstance(found, Blueprint):
            said.append(" ".join((*found.task.turns, *found.task.followups)))
    assert len(said) > 100
    for text in said:
        assert "_" not in text, text
        assert not re.search(r"\b[a-z]+ s (room|desk|bed)", text), text
        assert not re.search(r"\d+ ?K\b", text), text
        assert " %" not in text, text


def test_home_assistants_responses_render_as_its_handlers_render_them() -> None:
    """The response template for the entity's domain, else for a slot set, else the default;
    None for an intent the language has no response for."""
    lamp = {"entity_id": "light.stehlampe", "state": "on", "attributes": {}}
    german = language("de")
    assert german.respond("HassTurnOn", lamp, {"name": "Stehlampe"}) == "Licht eingeschaltet"
    assert german.respond("HassLightSet", lamp, {"brightness": 40}) == "Helligkeit eingestellt"
    heating = {"entity_id": "climate.bad", "state": "heat", "attributes": {}}
    said = language("en").respond("HassClimateSetTemperature", heating, {"temperature": 21})
    assert said == "Temperature set to 21 degrees"
    assert german.respond("HassNoSuchIntent", lamp, {}) is None


def test_the_teacher_replies_in_the_users_language() -> None:
    """Outside English the teacher's reply is Home Assistant's own response in that language."""
    replied = 0
    for seed in range(12):
        blueprint = make_blueprint(seed, language="de")
        if not isinstance(blueprint, Blueprint):
            continue
        teacher = TeacherPolicy(blueprint.task, seed, language="de")
        trajectory = asyncio.run(play(blueprint, teacher))
        assert trajectory.done
        reply = trajectory.last_reply or ""
        assert not re.search(r"\b(I've|Done|turned|set)\b", reply), reply
        replied += bool(
            re.search(r"eingeschaltet|eingestellt|gestellt|Fortgesetzt|geöffnet", reply)
        )
    assert replied >= 5

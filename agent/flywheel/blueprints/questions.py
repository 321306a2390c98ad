"""Requests the home answers rather than carries out: status questions ("is the garage door
open?", "what's the temperature in the kitchen?"), requests for a device the room does not
have ("turn on the bathroom fan" with no fan there) and for a feature the device lacks ("make
the hall light blue" of a white-only bulb), said in Home Assistant's own sentence
templates (HassGetState, HassClimateGetTemperature, the commands' own; agent.flywheel.sentences)
with the home's names. Each comes with its agent.task.Answer's fields: what the reply must state.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from twin.domains import DOMAINS, domain_of
from twin.home import Home

from ...task import fields_of
from .. import sentences
from ..sentences import Share

# The domains a user asks a device of that a room may lack (twin.domains' `asked.request`).
REQUESTED = tuple(sorted(name for name, domain in DOMAINS.items() if domain.asked.request))


@dataclass(frozen=True, slots=True)
class Said:
    """What the user says, the agent.task.Answer's fields, and the sentence template's key."""

    text: str
    answer: dict[str, Any]
    template: str


def question(
    rng: random.Random, home: Home, code: str = "en", share: Share = "flywheel"
) -> Said | None:
    """A status question about a device the home names once (a yes/no on its state, or its
    value): yes/no and value questions equally likely, and within each every kind of device
    (domain and device class: not mostly batteries); None when no template says one."""
    language = sentences.language(code)
    options: dict[tuple[str, str, str], list[tuple[str, str, dict[str, Any], dict[str, Any]]]]
    options = {}
    for option in _questions(rng, home, code):
        entity_id = option[3]["entity_id"]
        device_class = str(home.states[entity_id].attributes.get("device_class"))
        kind = "yes_no" if "expected" in option[3] else "status"
        options.setdefault((kind, option[1], device_class), []).append(option)
    groups = sorted(options)
    rng.shuffle(groups)
    groups.sort(key=lambda group: group[0] != rng.choice(("yes_no", "status")))
    for group in groups[: sentences.TRIES]:
        intent, domain, slots, answer = rng.choice(options[group])
        said = language.say(rng, intent, domain, slots, share=share)
        if said is not None:
            return Said(said.text, answer, said.template)
    return None


def _questions(
    rng: random.Random, home: Home, code: str
) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(intent, domain, slots, answer) for each question the home's devices allow."""
    names = _unique_names(home, code)
    climates: dict[str | None, list[str]] = {}
    for entity_id, name in names.items():
        domain, state = entity_id.partition(".")[0], home.states[entity_id]
        attributes, asked = state.attributes, domain_of(domain).asked
        classes = asked.device_classes
        if classes is not None and attributes.get("device_class") not in classes:
            continue
        if state.state in asked.states:
            expected = rng.choice(asked.states)
            slots = {"name": name, "state": expected}
            yield "HassGetState", domain, slots, {"entity_id": entity_id, "expected": expected}
        elif domain == "sensor" and _number(state.state) and attributes.get("unit_of_measurement"):
            yield "HassGetState", domain, {"name": name}, {"entity_id": entity_id}
        elif domain == "climate" and _number(attributes.get("current_temperature")):
            answer = {"entity_id": entity_id, "attribute": "current_temperature"}
            yield "HassClimateGetTemperature", domain, {"name": name}, answer
            climates.setdefault(home.area_of(entity_id), []).append(entity_id)
    for area_id, found in climates.items():
        if area_id is not None and area_id in home.areas and len(found) == 1:
            area = sentences.spoken_name(home.areas[area_id].name, code)
            answer = {"entity_id": found[0], "attribute": "current_temperature"}
            yield "HassClimateGetTemperature", "climate", {"area": area}, answer


def impossible(
    rng: random.Random, home: Home, code: str = "en", share: Share = "flywheel"
) -> Said | None:
    """A request the home cannot carry out, either kind as likely: for a kind of device a room
    lacks, or for a feature a device lacks; None when the home has all they ask for."""
    makers = [_absent, _unsupported]
    rng.shuffle(makers)
    return next((said for maker in makers if (said := maker(rng, home, code, share))), None)


def _absent(rng: random.Random, home: Home, code: str, share: Share) -> Said | None:
    """A request for a kind of device a room lacks (none of its domain there, none named so),
    said by the room ("turn on the fan in the bathroom"); None when every room has them all."""
    language = sentences.language(code)
    held: dict[str, list[str]] = {}  # entity ids by area, read once
    for entity_id in home.entities:
        held.setdefault(home.area_of(entity_id) or "", []).append(entity_id)
    lacking: dict[str, list[str]] = {}
    for area_id, area in sorted(home.areas.items()):
        if not area.outdoor and held.get(area_id):
            for domain in REQUESTED:
                if not _has(home, held[area_id], domain):
                    lacking.setdefault(domain, []).append(area_id)
    domains = sorted(lacking)
    rng.shuffle(domains)  # each kind of device as likely as another
    for domain in domains:
        service, data = DOMAINS[domain].asked.request or ("", {})
        call = sentences.spoken(domain, service, dict(data))
        area_id = rng.choice(lacking[domain])
        if call is None:
            continue
        room = sentences.spoken_name(home.areas[area_id].name, code)
        said = language.say(rng, call[0], domain, {"area": room, **call[1]}, share=share)
        if said is not None:
            return Said(said.text, {"absent": {"area": area_id, "domain": domain}}, said.template)
    return None


def _unsupported(rng: random.Random, home: Home, code: str, share: Share) -> Said | None:
    """A request for a feature a device the home names once lacks (twin.domains' `asked.
    feature_requests`: "make the hall light blue" of a white-only bulb), said by its name, or
    by its room where it is the room's only one of its domain; each kind of feature as likely as
    another; None when no device lacks one."""
    language = sentences.language(code)
    kinds_in: dict[tuple[str | None, str], int] = {}  # devices by (area, domain)
    for entity_id in home.entities:
        place = (home.area_of(entity_id), entity_id.partition(".")[0])
        kinds_in[place] = kinds_in.get(place, 0) + 1
    lacking: dict[tuple[str, str], list[tuple[str, str]]] = {}  # (domain, field): (id, name)
    for entity_id, name in _unique_names(home, code).items():
        domain = entity_id.partition(".")[0]
        requests = domain_of(domain).asked.feature_requests
        taken = fields_of(home, entity_id) if requests else set()
        for key in {key for _, data in requests for key in data} - taken:
            lacking.setdefault((domain, key), []).append((entity_id, name))
    kinds = sorted(lacking)
    rng.shuffle(kinds)
    for domain, key in kinds[: sentences.TRIES]:
        entity_id, name = rng.choice(lacking[domain, key])
        calls = [call for call in domain_of(domain).asked.feature_requests if key in call[1]]
        service, data = rng.choice(calls)
        spoken = sentences.spoken(domain, service, dict(data))
        if spoken is None:
            continue
        area_id = home.area_of(entity_id)
        ways = [{"name": name}]
        if area_id in home.areas and kinds_in[area_id, domain] == 1:
            ways.append({"area": sentences.spoken_name(home.areas[area_id].name, code)})
        rng.shuffle(ways)
        for way in ways:
            said = language.say(rng, spoken[0], domain, {**way, **spoken[1]}, share=share)
            if said:
                return Said(said.text, {"entity_id": entity_id, "lacks": key}, said.template)
    return None


def _unique_names(home: Home, code: str) -> dict[str, str]:
    """The entities whose spoken name no other entity shares, by id (a question about a name
    two devices have would need a question back)."""
    named = {
        entity_id: sentences.spoken_name(entry.name, code)
        for entity_id, entry in sorted(home.entities.items())
        if entry.name and entity_id in home.states
    }
    counts: dict[str, int] = {}
    for name in named.values():
        counts[name.casefold()] = counts.get(name.casefold(), 0) + 1
    return {entity_id: name for entity_id, name in named.items() if counts[name.casefold()] == 1}


def _has(home: Home, held: list[str], domain: str) -> bool:
    """Whether a room holding the entities `held` has a device of `domain`, or one whose name
    says it is one."""
    words = DOMAINS[domain].asked.nouns
    for entity_id in held:
        name = (home.entities[entity_id].name or "").casefold().split()
        if entity_id.partition(".")[0] == domain or any(word in name for word in words):
            return True
    return False


def _number(value: Any) -> bool:
    try:
        return value is not None and not isinstance(value, bool) and float(value) == float(value)
    except (TypeError, ValueError):
        return False

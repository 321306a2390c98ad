"""How varied a dataset's language is: the words of the users' first turns and the services they
mean, measured as dialogue-generation papers do (distinct-n: the share of n-grams that are new).

distinct-n grows as a sample shrinks, so it is taken over samples of a fixed size (100 sentences,
as human-written Home Assistant commands were measured) and averaged: a dataset of 100 rows and
one of 100,000 are then measured alike.
"""

from __future__ import annotations

import json
import random
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

SAMPLE = 100
_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")  # an apostrophe, straight or curly


def words(text: str) -> list[str]:
    """The words of a sentence, lower-cased; apostrophes stay inside a word (Amara's)."""
    return _WORD.findall(text.lower())


def distinct(sentences: Sequence[str], n: int) -> float:
    """The share of the n-grams of `sentences` (each counted within its sentence) that differ."""
    grams = [
        tuple(said[i : i + n]) for said in map(words, sentences) for i in range(len(said) - n + 1)
    ]
    return len(set(grams)) / len(grams) if grams else 0.0


def sampled_distinct(sentences: Sequence[str], n: int, seed: int = 0) -> float:
    """distinct-n averaged over shuffled samples of SAMPLE sentences (all of them when fewer)."""
    shuffled = list(sentences)
    random.Random(seed).shuffle(shuffled)
    samples = [shuffled[i : i + SAMPLE] for i in range(0, len(shuffled), SAMPLE)]
    whole = [sample for sample in samples if len(sample) == SAMPLE] or samples[:1]
    return statistics.mean(distinct(sample, n) for sample in whole) if whole else 0.0


class Said(NamedTuple):
    """What a row's user says first, the services they mean (a blueprint's intents) and the
    keys of the Home Assistant sentence templates it says them in."""

    first_turn: str | None
    services: list[str]
    templates: list[str]


def said(row: Mapping[str, Any]) -> Said:
    """A blueprint row's request and intents (its JSON read once), or a dialogue's first user
    message; nothing for a row with neither."""
    if "blueprint" in row:
        blueprint = row["blueprint"]
        data = json.loads(blueprint) if isinstance(blueprint, str) else blueprint
        task = data["task"]
        meant = [f"{intent['domain']}.{intent['service']}" for intent in task["intents"]]
        return Said(str(task["turns"][0]), meant, list(data.get("templates", ())))
    users = (m.get("content") for m in row.get("messages") or () if m.get("role") == "user")
    return Said(next((str(text) for text in users if text), None), [], [])


def measures(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The language of the rows' first turns, as `data stats` shows it: how many, the vocabulary,
    distinct-1 and distinct-2 over samples of SAMPLE, the Home Assistant sentence templates
    they say (how many differ, and the share of requests said in one or more), and the most
    meant service's share."""
    read = [said(row) for row in rows]
    sentences = [row.first_turn for row in read if row.first_turn]
    if not sentences:
        return []
    vocabulary = {word for text in sentences for word in words(text)}
    shown = [
        ("first user turns", str(len(sentences))),
        ("vocabulary (words)", str(len(vocabulary))),
        (f"distinct-1 (samples of {SAMPLE})", f"{sampled_distinct(sentences, 1):.3f}"),
        (f"distinct-2 (samples of {SAMPLE})", f"{sampled_distinct(sentences, 2):.3f}"),
    ]
    if used := {key for row in read for key in row.templates}:
        said_so = sum(bool(row.templates) for row in read if row.first_turn)
        shown += [
            ("Home Assistant templates used", str(len(used))),
            ("requests in their words", f"{said_so} ({100 * said_so / len(sentences):.1f}%)"),
        ]
    if meant := Counter(service for row in read for service in row.services):
        top, count = meant.most_common(1)[0]
        total = sum(meant.values())
        shown += [
            ("services meant", str(len(meant))),
            ("most meant service", f"{top} ({100 * count / total:.1f}%)"),
        ]
    return shown

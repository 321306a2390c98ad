"""agent.flywheel.language: distinct-n, its fixed-size samples, and what `data stats` shows of a
dataset's first user turns."""

from __future__ import annotations

import json

import pytest

from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.language import (
    SAMPLE,
    Said,
    distinct,
    measures,
    said,
    sampled_distinct,
    words,
)
from agent.flywheel.sentences import language


def test_words_keep_apostrophes_and_drop_punctuation() -> None:
    assert words("Dim Amara's lamp, to 20 %!") == ["dim", "amara's", "lamp", "to", "20"]
    assert words("Mach das Licht in der Küche an") == [
        "mach",
        "das",
        "licht",
        "in",
        "der",
        "küche",
        "an",
    ]


def test_distinct_counts_the_share_of_new_ngrams() -> None:
    said = ["turn on the light", "turn off the light"]
    assert distinct(said, 1) == 5 / 8  # turn, on, the, light, off
    assert distinct(said, 2) == 5 / 6  # "the light" twice
    assert distinct(["hi"], 2) == 0.0  # no bigram
    assert distinct([], 1) == 0.0


def test_repeated_sentences_score_low_and_varied_ones_high() -> None:
    same = ["turn on the kitchen light"] * 300
    varied = [f"word{i} word{i + 1} word{i + 2}" for i in range(0, 900, 3)]
    assert sampled_distinct(same, 2) == pytest.approx(4 / 400)
    assert sampled_distinct(varied, 2) == 1.0


def test_a_sample_has_a_fixed_size_so_a_bigger_dataset_is_not_more_repetitive() -> None:
    # Distinct-n over all sentences falls as a dataset grows; over samples of SAMPLE it does not.
    pool = [
        f"set the {room} {thing} to {level}"
        for room in "abcdefghij"
        for thing in "xyz"
        for level in range(10)
    ]
    big = pool * 5  # the same sentences, five times as many
    assert distinct(big, 2) < distinct(pool, 2) / 4
    assert sampled_distinct(big, 2, seed=1) == pytest.approx(
        sampled_distinct(pool, 2, seed=1), abs=0.01
    )
    assert len(pool) > SAMPLE


def blueprint_row(
    turn: str, *services_meant: str, templates: tuple[str, ...] = ()
) -> dict[str, object]:
    intents = [
        {"domain": s.split(".")[0], "service": s.split(".")[1], "entity_id": f"{s.split('.')[0]}.x"}
        for s in services_meant
    ]
    task = {"turns": [turn, "yes"], "intents": intents}
    return {"blueprint": json.dumps({"task": task, "templates": list(templates)})}


def test_first_turns_and_services_of_blueprints_and_dialogues() -> None:
    row = blueprint_row("Dim the lamp", "light.turn_on", "cover.close_cover")
    assert said(row) == Said("Dim the lamp", ["light.turn_on", "cover.close_cover"], [])
    assert said({"blueprint": json.loads(str(row["blueprint"]))}) == said(row)  # a benchmark's
    dialogue = {
        "messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "Hi"}]
    }
    assert said(dialogue) == Said("Hi", [], [])
    assert said({"messages": []}) == Said(None, [], [])


def test_measures_show_vocabulary_diversity_and_the_top_service() -> None:
    rows = [blueprint_row("turn on the light", "light.turn_on")] * 3 + [
        blueprint_row("close the blinds", "cover.close_cover")
    ]
    shown = dict(measures(rows))
    assert shown["first user turns"] == "4"
    assert shown["vocabulary (words)"] == "6"
    assert shown["most meant service"] == "light.turn_on (75.0%)"
    assert float(shown[f"distinct-2 (samples of {SAMPLE})"]) == pytest.approx(5 / 11, abs=1e-3)
    assert measures([{"messages": []}]) == []
    assert "Home Assistant templates used" not in shown  # none recorded


def test_measures_count_the_home_assistant_templates_the_requests_say() -> None:
    rows = [
        blueprint_row("turn on the light", "light.turn_on", templates=("HassTurnOn/1",)),
        blueprint_row("turn on the fan", "fan.turn_on", templates=("HassTurnOn/1",)),
        blueprint_row("lights on, and the blinds", "light.turn_on", templates=("HassTurnOn/2",)),
        blueprint_row("it is dark in here", "light.turn_on"),
    ]
    shown = dict(measures(rows))
    assert shown["Home Assistant templates used"] == "2"
    assert shown["requests in their words"] == "3 (75.0%)"


def test_blueprints_record_the_templates_their_requests_are_said_from() -> None:
    english = language("en")
    keys = {template.key for templates in english.templates.values() for template in templates}
    recorded = [
        blueprint for seed in range(40) if isinstance(blueprint := make_blueprint(seed), Blueprint)
    ]
    said_from = [b for b in recorded if b.templates]
    assert len(said_from) >= len(recorded) // 2
    assert all(set(b.templates) <= keys for b in said_from)
    assert all(Blueprint.from_json(b.to_json()) == b for b in said_from)

"""SmartHome-Bench v2's out-of-distribution split: held-out templates, phrases, names and
languages that no training blueprint draws, generated deterministically and reported beside the
in-distribution split."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pytest

from agent.bench.evaluate import summarise
from agent.bench.instances import (
    HELD_OUT_PREFIX,
    SPLITS,
    BenchGeneration,
    generate,
    write_bench,
)
from agent.flywheel import localise
from agent.flywheel.blueprints import TASK_TYPES, Blueprint, SplitError, draft, make_blueprint
from agent.flywheel.blueprints.scripter import _phrases
from agent.flywheel.sentences import SentenceError, language
from twin.homemaker import make_home

IN, OUT = 7, 14  # one and two of each task type


@cache
def made() -> BenchGeneration:
    return generate(IN, held_out=OUT)


def test_the_held_out_split_is_generated_deterministically_beside_the_other() -> None:
    out = made()
    assert out.counts() == dict.fromkeys(TASK_TYPES, 1)
    assert out.counts("ood") == dict.fromkeys(TASK_TYPES, 2)
    held = [i for i in out.instances if i.split == "ood"]
    assert all(i.id.startswith(HELD_OUT_PREFIX) and i.blueprint.share == "held_out" for i in held)
    assert {i.blueprint.seed for i in held}.isdisjoint(
        {i.blueprint.seed for i in out.instances if i.split == "id"}
    )
    again = generate(IN, held_out=OUT)
    assert [i.to_json() for i in again.instances] == [i.to_json() for i in out.instances]
    assert all(Blueprint.from_json(i.blueprint.to_json()) == i.blueprint for i in out.instances)


def test_the_manifest_counts_both_splits(tmp_path: Path) -> None:
    write_bench(tmp_path, made())
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["count"] == IN
    assert manifest["held_out"] == OUT
    assert manifest["held_out_counts"] == dict.fromkeys(TASK_TYPES, 2)
    assert manifest["held_out_seeds"]["languages"] == ["en", *localise.held_out_languages()]
    rows = [json.loads(line) for line in (tmp_path / "instances.jsonl").read_text().splitlines()]
    assert {row["split"] for row in rows} == {"id", "ood"}


def test_the_flywheel_never_draws_the_held_out_phrases_names_or_languages() -> None:
    """The phrase bank's lists of two or more are split with no phrase on both sides; the held-
    out English names are no name a training home has (in any of the flywheel's languages),
    and the held-out languages are none the flywheel speaks; training seeds cannot draw the
    held-out share."""
    flywheel, held = _phrases("flywheel"), _phrases("held_out")

    def lists(node: object, path: str = "") -> dict[str, list[str]]:
        if isinstance(node, dict):
            return {
                k: v
                for key, value in node.items()
                for k, v in lists(value, f"{path}/{key}").items()
            }
        return {path: node} if isinstance(node, list) else {}

    ours, theirs = lists(flywheel), lists(held)
    split = [path for path in ours if len(ours[path]) + len(theirs[path]) > 2]
    assert len(split) > 50
    for path in split:
        assert ours[path], path  # both sides have phrases of their own
        assert theirs[path], path
        assert not set(ours[path]) & set(theirs[path]), path
    seen = set()
    for code in ("en", "de", "fr", "es", "nl", "it", "pl", "pt"):
        home = localise.localise(make_home(3, "house"), code)
        seen |= {entry.name for entry in home.entities.values()}
        seen |= {area.name for area in home.areas.values()}
    english = make_home(3, "house")
    home = localise.localise(make_home(3, "house"), "en", "held_out")  # other English names
    renamed = {area.name for area in home.areas.values()}
    for entity_id, entry in english.entities.items():
        area = english.areas.get(english.area_of(entity_id) or "")
        if area is not None and entry.name.startswith(area.name):  # named after its room
            renamed.add(home.entities[entity_id].name)
    assert len(renamed) > 20
    assert not renamed & seen, renamed & seen
    with pytest.raises(SentenceError, match="held-out"):
        make_blueprint(3, language=localise.held_out_languages()[0])
    with pytest.raises(SplitError, match="benchmark's alone"):
        draft(3, share="held_out")
    assert language("sv").templates  # Home Assistant speaks it; HomeFlow's flywheel does not


def test_results_show_both_splits_side_by_side() -> None:
    records = [
        {"id": i.id, "type": i.task_type, "success": i.split == "id", "violations": 0}
        | {"tool_calls": 1, "output_tokens": 0, "latency_s": 0.0}
        for i in made().instances
    ]
    summary = summarise(records)
    assert summary[SPLITS["id"]]["success"] == 1.0
    assert summary[SPLITS["ood"]]["success"] == 0.0
    assert summary[SPLITS["ood"]]["instances"] == OUT
    only_in = summarise([r for r in records if not r["id"].startswith(HELD_OUT_PREFIX)])
    assert SPLITS["ood"] not in only_in

"""Homes and requests in the languages the flywheel speaks: the same home (ids, states) named as
people there name things, atomic and compositional requests in Home Assistant's sentences of the
language that name what the home has, and the scripted teacher solving them in the twin."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent.bench.instances import play, solved
from agent.cli import main
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.datasets import dataset_file, read_rows
from agent.flywheel.localise import localise, words
from agent.flywheel.sentences import LANGUAGES, SentenceError, language, spoken_name
from agent.policies.teacher import TeacherPolicy
from twin.homemaker import make_home

ABROAD = [code for code in LANGUAGES if code != "en"]


@pytest.mark.parametrize("code", ABROAD)
def test_a_localised_home_is_the_same_home_with_names_in_the_language(code: str) -> None:
    english, home = make_home(3, "house"), localise(make_home(3, "house"), code)
    assert home.states.keys() == english.states.keys()
    assert {e: s.state for e, s in home.states.items()} == {
        e: s.state for e, s in english.states.items()
    }
    table = words(code)
    assert home.areas["living_room"].name == table.rooms["Living Room"]
    lamp = home.entities["light.living_room_floor_lamp"].name
    assert table.devices["Floor Lamp"] in lamp
    assert table.rooms["Living Room"].lower() in lamp.lower()
    assert home.areas["yuki_s_room"].name == table.child.format(name="Yuki")
    assert home.areas["guest_room_2"].name.endswith(" 2")


def test_english_is_as_made_and_an_unknown_language_is_refused() -> None:
    assert localise(make_home(3, "house"), "en").areas["living_room"].name == "Living Room"
    with pytest.raises(SentenceError, match="no flywheel home names in 'xx'"):
        localise(make_home(3, "house"), "xx")
    with pytest.raises(SentenceError):
        make_blueprint(3, language="xx")


@pytest.mark.parametrize("code", ABROAD)
def test_requests_abroad_name_the_home_read_back_and_are_solved(code: str) -> None:
    found = [b for s in range(40) if isinstance(b := make_blueprint(s, language=code), Blueprint)]
    assert len(found) >= 20
    assert any(len(b.task.intents) > 1 for b in found)  # compositional, joined by "and"
    assert any(words(code).conjunction in b.task.turns[0].split() for b in found)
    for blueprint in found[:8]:
        assert blueprint.language == code
        assert Blueprint.from_json(blueprint.to_json()) == blueprint
        home = blueprint.home()
        said = blueprint.task.turns[0].lower()
        named = [
            spoken_name(home.entities[i.entity_id].name, code).lower()
            for i in blueprint.task.intents
        ] + [spoken_name(area.name, code).lower() for area in home.areas.values()]
        assert any(name in said for name in named), said
        teacher = TeacherPolicy(blueprint.task, blueprint.seed)
        assert solved(asyncio.run(play(blueprint, teacher)))
    assert language(code).code == code


def test_the_cli_takes_languages_in_turn_and_stats_measure_each(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "bp"
    args = ["data", "blueprints", "--count", "24", "--language", "en", "--language", "de"]
    result = runner.invoke(main, [*args, "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = read_rows(dataset_file(out))
    assert {row["language"] for row in rows} == {"en", "de"}
    assert all(row["language"] == ("en" if row["seed"] % 2 == 0 else "de") for row in rows)
    stats = runner.invoke(main, ["data", "stats", str(out)])
    assert stats.exit_code == 0, stats.output
    assert "by language" in stats.output
    assert "language de" in stats.output
    bad = runner.invoke(main, ["data", "blueprints", "--language", "xx", "-o", str(tmp_path / "x")])
    assert bad.exit_code == 2
    assert not (tmp_path / "x").exists()

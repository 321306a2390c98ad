"""Blueprints: deterministic, grounded, filtered for real, and solvable in real twin episodes."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from agent.backends.twin import TwinBackend
from agent.episode import run_episode
from agent.flywheel.blueprints import (
    CLARITIES,
    FILTERS,
    PHENOMENA,
    REQUESTS,
    TONES,
    Blueprint,
    Candidate,
    Generation,
    Rejected,
    generate,
    make_blueprint,
    triple_filter,
)
from agent.flywheel.profiles import make_profile
from agent.flywheel.user import ScriptedUser
from agent.policies.teacher import TeacherPolicy
from agent.task import Task
from twin.home import Home
from twin.homemaker import make_home

SEEDS = range(200)


@cache
def batch() -> Generation:
    return generate(SEEDS)


def test_a_seed_gives_the_same_blueprint_and_json_round_trips() -> None:
    for seed in (1, 2, 3):
        first, again = make_blueprint(seed), make_blueprint(seed)
        assert first == again
        if isinstance(first, Blueprint):
            assert Blueprint.from_json(first.to_json()) == first


def home_and_light() -> tuple[Home, str]:
    home = make_home(4, "apartment")
    light = next(e for e in sorted(home.entities) if e.startswith("light.") and "study" in e)
    assert home.states[light].state == "off"
    return home, light


def light_on(entity_id: str, **data: object) -> dict[str, object]:
    return {"domain": "light", "service": "turn_on", "entity_id": entity_id, "data": data}


@pytest.mark.parametrize(
    ("make", "filter_", "check"),
    [
        (lambda e: [light_on("light.study_smart_hub")], "executability", "compile"),
        (lambda e: [light_on(e, level=40)], "executability", "compile"),
        (lambda e: [{**light_on(e), "service": "set_level"}], "executability", "compile"),
        (lambda e: [light_on(e, profile="concentrate")], "executability", "compile"),
        (lambda e: [light_on(e, brightness_pct=140)], "boundary", "range"),
        (lambda e: [light_on(e, color_temp_kelvin=9000)], "boundary", "range"),
        (lambda e: [{**light_on(e), "service": "turn_off"}], "consistency", "already_true"),
        (
            lambda e: [light_on(e, brightness_pct=50), light_on(e, brightness_pct=90)],
            "consistency",
            "unsatisfiable",
        ),
    ],
)
def test_each_filter_rejects_what_it_should(
    make: Callable[[str], list[dict[str, object]]], filter_: str, check: str
) -> None:
    home, light = home_and_light()
    profile = make_profile(0)
    result = triple_filter(0, home, profile, Candidate(("Do it.",), tuple(make(light))))
    assert isinstance(result, Rejected), result
    assert (result.filter, result.check) == (filter_, check), result
    good = triple_filter(0, home, profile, Candidate(("Do it.",), (light_on(light),)))
    assert isinstance(good, Task), good


def test_the_profile_filter_refuses_a_value_the_user_would_not_want() -> None:
    home = make_home(4, "apartment")
    climate = next(e for e in sorted(home.entities) if e.startswith("climate."))
    profile = make_profile(0)
    for temperature, refused in ((profile.day_temperature, False), (29.5, True)):
        intent = {
            "domain": "climate",
            "service": "set_temperature",
            "entity_id": climate,
            "data": {"temperature": temperature, "hvac_mode": "heat"},
        }
        result = triple_filter(0, home, profile, Candidate(("Heat.",), (intent,)))
        assert isinstance(result, Rejected) == refused, result
        if refused:
            assert isinstance(result, Rejected)
            assert result.check == "profile"


def test_every_filter_has_work_and_the_shares_are_reported() -> None:
    out = batch()
    assert len(out.blueprints) > 0.7 * len(SEEDS)
    assert set(FILTERS) <= set(out.rejected)
    assert all(out.rejected[name] > 0 for name in FILTERS), out.rejected
    assert 0 < sum(out.shares().values()) < 0.3
    assert out.rate == pytest.approx(len(out.blueprints) / out.seconds)  # no speed: machines vary
    # No scripted mistakes: what is left is only what the home itself refuses.
    clean = generate(range(100), error_rate=0.0)
    assert sum(clean.rejected.values()) < sum(
        generate(range(100), error_rate=1.0).rejected.values()
    )


def test_query_types_cover_the_control_space_and_phrases_vary() -> None:
    types = [b.query_type for b in batch().blueprints]
    assert {t.clarity for t in types} == set(CLARITIES)
    assert {t.tone for t in types} == set(TONES)
    assert {t.dependency for t in types} == {"dependent", "independent"}
    assert {t.devices for t in types} == {"single", "multiple"}
    assert {t.phenomenon for t in types} == {None, *PHENOMENA}
    assert any(t.memory for t in types)
    assert {t.request for t in types} == set(REQUESTS)
    first_turns = {b.task.turns[0] for b in batch().blueprints}
    assert len(first_turns) >= 0.95 * len(batch().blueprints)
    for blueprint in batch().blueprints:
        kind = blueprint.query_type
        # A status question or an impossible request: one reply check, nothing to call.
        asked = kind.request != "command"
        assert bool(blueprint.task.answers) == asked
        assert not (asked and blueprint.task.intents)
        if asked:
            assert kind.label.startswith(kind.request)
            assert not blueprint.scenes
            continue
        unclear = [i for i in blueprint.task.intents if i.clarify]
        assert bool(unclear) == (kind.clarity in ("missing_slot", "ambiguous")), blueprint
        assert (kind.dependency == "dependent") == any(i.only_if for i in blueprint.task.intents)
        entities = {i.entity_id for i in blueprint.task.intents}
        assert (kind.devices == "multiple") == (len(entities) > 1)
        # QT4 takes two user turns: the request, then a follow-up with a turn-1 intent.
        assert len(blueprint.task.followups) == (1 if kind.phenomenon else 0), blueprint
        assert {i.turn for i in blueprint.task.intents} == set(range(1 + bool(kind.phenomenon)))
        assert bool(blueprint.memory) == kind.memory
        assert blueprint.profile.name.split()[0] in blueprint.scenes[0]
        assert "°C" in blueprint.scenes[0]


def test_a_memory_request_states_no_value_and_a_missing_slot_is_answered() -> None:
    for blueprint in batch().blueprints:
        if not blueprint.task.intents:
            continue
        intent = blueprint.task.intents[0]
        if blueprint.query_type.clarity == "missing_slot" and len(blueprint.task.intents) == 1:
            slot = intent.clarify
            assert slot is not None
            assert slot in intent.data
            value = str(intent.data[slot]).removesuffix(".0")
            assert value not in blueprint.task.turns[0].replace(blueprint.task.turns[1], "")
            assert value in blueprint.task.turns[1] or slot == "volume_level"
        if blueprint.query_type.memory and blueprint.query_type.clarity == "clear":
            stated = next(iter(intent.data.values()), None)
            if stated is not None and len(blueprint.task.intents) == 1:
                assert f"{stated:g}" not in blueprint.task.turns[0], blueprint.task.turns


async def test_every_accepted_blueprint_is_solved_by_the_teacher() -> None:
    for blueprint in batch().blueprints:
        home = blueprint.home()
        blueprint.task.check(home)
        trajectory = await run_episode(
            TeacherPolicy(blueprint.task, blueprint.seed),
            TwinBackend(home),
            ScriptedUser(blueprint.task, blueprint.seed, home=home),
            conditions=blueprint.task.conditions(home),
            memory=blueprint.memory,
            scene=" ".join(blueprint.scenes) or None,
        )
        assert trajectory.done, (blueprint.seed, blueprint.task.to_json())
        assert not trajectory.steps[-1].collateral

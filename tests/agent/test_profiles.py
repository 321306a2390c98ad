"""User profiles: deterministic, diverse, and consistent by construction."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from agent.cli import main
from agent.flywheel.profiles import Profile, age_band, inconsistencies, make_profile

PROFILES = [make_profile(seed) for seed in range(3000)]


def test_the_same_seed_gives_the_same_profile() -> None:
    assert make_profile(17) == make_profile(17)
    assert make_profile(17) != make_profile(18)


def test_profiles_are_distinct_beyond_their_seed() -> None:
    facts = {json.dumps({**p.to_dict(), "seed": None}, sort_keys=True) for p in PROFILES}
    assert len(facts) == len(PROFILES)


def test_drawn_profiles_break_no_constraint() -> None:
    assert [p.seed for p in PROFILES if inconsistencies(p)] == []


def test_a_profile_survives_json() -> None:
    profile = next(p for p in PROFILES if p.out is not None and p.conditions)
    assert Profile.from_dict(json.loads(json.dumps(profile.to_dict()))) == profile


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"occupation": "retired", "age": 30}, "a 30-year-old retired"),
        ({"age": 20, "conditions": ("cataract",)}, "cataract at 20"),
        ({"thermal": "runs_cold", "day_temperature": 19.0}, "runs cold"),
        ({"thermal": "runs_warm", "day_temperature": 25.0}, "runs warm"),
        ({"vision": "poor", "light": "normal", "brightness": 40}, "poor vision"),
        ({"light": "sensitive", "brightness": 90}, "light-sensitive"),
        ({"night_temperature": 30.0}, "warmer at night"),
        ({"conditions": ("asthma",), "clean_air": False}, "clean air"),
        ({"pattern": "night_shift", "bed": 23.0}, "works nights"),
    ],
)
def test_each_constraint_is_checked(change: dict[str, object], problem: str) -> None:
    base = next(p for p in PROFILES if 25 <= p.age <= 35 and not p.conditions)
    broken = replace(base, **change)  # type: ignore[arg-type]
    assert any(problem in found for found in inconsistencies(broken))


def test_age_shapes_health_and_occupation() -> None:
    seniors = [p for p in PROFILES if p.age >= 65]
    young = [p for p in PROFILES if p.age < 40]
    share = {
        band: sum("arthritis" in p.conditions for p in group) / len(group)
        for band, group in (("young", young), ("senior", seniors))
    }
    assert share["senior"] > 5 * share["young"]
    assert all(p.age >= 58 for p in PROFILES if p.occupation == "retired")
    assert {age_band(p.age) for p in PROFILES} == {"16-39", "40-64", "65-95"}


def test_physiology_and_health_shift_the_preferences() -> None:
    cold = [p.day_temperature for p in PROFILES if p.thermal == "runs_cold"]
    warm = [p.day_temperature for p in PROFILES if p.thermal == "runs_warm"]
    assert sum(cold) / len(cold) > sum(warm) / len(warm) + 2
    assert all(p.clean_air for p in PROFILES if "asthma" in p.conditions)
    assert all(
        p.humidity[0] >= 40 and p.humidity[1] <= 50 for p in PROFILES if "asthma" in p.conditions
    )
    assert all(p.light == "sensitive" for p in PROFILES if "migraine" in p.conditions)
    assert all(p.wake > 12 for p in PROFILES if p.pattern == "night_shift")


def test_memory_states_the_preferences() -> None:
    profile = PROFILES[0]
    memory = " ".join(profile.memory())
    assert f"{profile.day_temperature:g} °C by day" in memory
    assert f"{profile.reading_brightness} % for reading" in memory


def test_the_command_shows_the_spread_and_writes_the_profiles(tmp_path: Path) -> None:
    output = tmp_path / "new" / "profiles.jsonl"  # its folder is made
    result = CliRunner().invoke(main, ["data", "profiles", "--count", "200", "-o", str(output)])
    assert result.exit_code == 0, result.output
    assert "200 users" in result.output
    assert "arthritis" in result.output
    lines = output.read_text().splitlines()
    assert [Profile.from_dict(json.loads(line)) for line in lines] == PROFILES[:200]


def test_the_command_refuses_the_benchmarks_users() -> None:
    result = CliRunner().invoke(main, ["data", "profiles", "--count", "2", "--seed", str(2**40)])
    assert result.exit_code == 2
    assert "not for training use" in result.output

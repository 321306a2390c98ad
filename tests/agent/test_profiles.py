"""User profiles: deterministic, diverse, and consistent by construction."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from agent.cli import main
from agent.flywheel.blueprints import Blueprint, make_blueprint
from agent.flywheel.profiles import NAMED, Profile, age_band, inconsistencies, make_profile
from twin.homemaker import load_priors, plan_home
from twin.homemaker.household import Household

PROFILES = [make_profile(seed) for seed in range(3000)]


def test_the_same_seed_gives_the_same_profile() -> None:
    assert make_profile(17) == make_profile(17)
    assert make_profile(17) != make_profile(18)


def test_profiles_are_distinct_beyond_their_seed() -> None:
    facts = {json.dumps({**p.to_dict(), "seed": None}, sort_keys=True) for p in PROFILES}
    assert len(facts) == len(PROFILES)


def test_drawn_profiles_break_no_constraint() -> None:
    assert [p.seed for p in PROFILES if inconsistencies(p)] == []


def origin_of(profile: Profile) -> tuple[str, str | None]:
    """The origin of the profile's surname, and the gender its first name is of there."""
    first, _, surname = profile.name.partition(" ")
    for origin, lists in read_names().items():
        if surname in lists["surnames"]:
            return origin, next((g for g, key in NAMED.items() if first in lists[key]), None)
    raise AssertionError(f"{profile.name}: a surname of no origin")


def read_names() -> dict[str, dict[str, list[str]]]:
    text = files("agent.flywheel").joinpath("profiles.yaml").read_text(encoding="utf-8")
    names: dict[str, dict[str, list[str]]] = yaml.safe_load(text)["names"]
    return names


def test_a_name_is_of_one_origin_and_fits_the_gender() -> None:
    """No "Fatima Schmidt, male": first name and surname from one origin, a woman's name for a
    woman and a man's for a man (a nonbinary person's is either); every surname HomeMaker
    gives a household has an origin."""
    for profile in PROFILES[:500]:
        origin, gender = origin_of(profile)
        assert gender is not None, (profile.name, origin)
        if profile.gender != "nonbinary":
            assert gender == profile.gender, profile.name
    assert len({origin_of(p)[0] for p in PROFILES}) >= 15
    known = {surname for lists in read_names().values() for surname in lists["surnames"]}
    assert set(load_priors().names["surnames"]) <= known


def test_the_user_of_a_blueprint_is_of_its_household() -> None:
    """The user has the family's name, with a first name of its origin and the user's gender,
    and no teenager has a house of their own."""
    for seed in range(150):
        blueprint = make_blueprint(seed)
        if not isinstance(blueprint, Blueprint):
            continue
        household = plan_home(seed, blueprint.home_type).household
        assert blueprint.profile.name.endswith(f" {household.surname}")
        gender = origin_of(blueprint.profile)[1]
        assert gender is not None
        assert blueprint.profile.gender in (gender, "nonbinary")
        if blueprint.profile.age < 20:
            assert blueprint.home_type == "studio"
    man = next(p for p in PROFILES if p.gender == "male")
    moved = man.living_in(Household("Becker", ("Lena",), ()))  # a surname of no origin
    assert moved.name.endswith(" Becker")
    assert moved == man.living_in(Household("Becker", ("Lena",), ()))


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

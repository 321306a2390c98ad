"""Assist-format cases (agent.bench.assist): HomeFlow's own cases are many, cover every domain and
are solved by their oracles through the tools with the auditor on; the no-op solves exactly the
ones that expect no change; the format's rule; bad files are typed errors naming file and field;
`bench run` and `bench report` on a folder of cases."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent.bench import evaluate as bench
from agent.bench.assist import (
    AssistCase,
    AssistCaseError,
    is_cases,
    load_cases,
    oracle_policy,
    play_case,
    unexpected_changes,
)
from agent.bench.commands import report, run
from agent.bench.evaluate import NOOP, TEACHER
from agent.episode import EpisodeLimits
from twin.domains import DOMAINS

CASES = Path(__file__).parents[2] / "agent" / "bench" / "external"


@pytest.fixture(scope="module")
def cases() -> list[AssistCase]:
    return load_cases(CASES)


def test_the_cases_are_many_homes_and_cover_every_domain(cases: list[AssistCase]) -> None:
    homes = {case.id.rsplit("-", 2)[0] for case in cases}
    assert len(homes) >= 10
    assert len(cases) >= 150
    assert len({case.id for case in cases}) == len(cases)
    assert all(case.oracle is not None for case in cases)
    touched = {entity_id.partition(".")[0] for case in cases for entity_id in _named(case)}
    assert sorted(set(DOMAINS) - touched) == [], "add cases for these (the README says how)"
    assert any(case.context_device for case in cases)
    assert any(not case.inventory.get("areas") for case in cases)


# What a freshly onboarded Home Assistant 2026.10.4 holds (scripts/hass_server.py's full
# onboarding, offline): `bench run --backend ha` refuses a home holding one of these ids, since
# Home Assistant gives the home's entity another.
FRESH_HOME_ASSISTANT = {
    "conversation.home_assistant",
    "event.backup_automatic_backup",
    "sensor.backup_backup_manager_state",
    "sensor.backup_last_attempted_automatic_backup",
    "sensor.backup_last_successful_automatic_backup",
    "sensor.backup_next_scheduled_automatic_backup",
    "todo.shopping_list",
    "zone.home",
}


def test_no_home_holds_an_id_a_fresh_home_assistant_has(cases: list[AssistCase]) -> None:
    held = {entity["id"] for case in cases for entity in case.inventory.get("entities") or ()}
    assert not held & FRESH_HOME_ASSISTANT
    assert not {entity_id for entity_id in held if entity_id.startswith("person.")}


def _named(case: AssistCase) -> set[str]:
    """The entity ids the case's oracle acts on or reads, and those it expects to change."""
    named = set(case.expect_changes)
    for call in case.oracle or ():
        arguments = call["arguments"]
        ids = (arguments.get("target") or {}).get("entity_id", arguments.get("entity_id", []))
        named |= {ids} if isinstance(ids, str) else set(ids)
    return named


def test_the_oracle_solves_every_case_and_the_noop_only_the_unchanging(
    cases: list[AssistCase], tmp_path: Path
) -> None:
    for policy in (TEACHER, NOOP):
        outcome = bench.evaluate(cases, tmp_path / policy, policy, progress=False, workers=2)
        assert outcome.complete
        records = {record["id"]: record for record in outcome.records}
        expected = {case.id: policy == TEACHER or not case.expect_changes for case in cases}
        assert {key: r["success"] for key, r in records.items()} == expected
        assert sum(r["violations"] for r in records.values()) == 0
    results = json.loads(bench.write_results(tmp_path / TEACHER).read_text())
    assert results["config"]["evaluation"] == "assist-cases"
    assert results["summary"]["overall"]["success"] == 1.0


def test_every_oracle_call_succeeds(cases: list[AssistCase]) -> None:
    for case in cases:
        trajectory, _ = asyncio.run(play_case(case, oracle_policy(case), EpisodeLimits()))
        assert all(step.success for step in trajectory.steps), case.id
        assert trajectory.tool_calls == len(case.oracle or ())


def test_the_context_device_is_in_the_prompt(cases: list[AssistCase]) -> None:
    case = next(case for case in cases if case.context_device == "studio_satellite")
    trajectory, diffs = asyncio.run(play_case(case, oracle_policy(case), EpisodeLimits()))
    assert diffs == {}
    assert "The user is speaking to Studio Satellite in Studio." in str(trajectory.messages[0])
    assert AssistCase.from_json(case.to_json()) == case


# --- the rule -------------------------------------------------------------------------------------


def state(value: str, **attributes: Any) -> dict[str, Any]:
    return {"state": value, "attributes": attributes}


BEFORE = {
    "light.a": state("off", brightness=None, friendly_name="A"),
    "cover.b": state("closed", current_position=0),
    "sensor.c": state("12.5"),
}


def test_what_was_expected_and_nothing_else_passes() -> None:
    after = BEFORE | {"light.a": state("on", brightness=255, friendly_name="A")}
    expect = {"light.a": {"state": "on", "brightness": 255}}
    assert unexpected_changes(BEFORE, after, expect, {}) == {}
    assert unexpected_changes(BEFORE, BEFORE, expect, {}) == {
        "light.a": {
            "expected": {"brightness": 255, "state": "on"},
            "got": {"brightness": None, "state": "off"},
        }
    }


def test_an_unexpected_or_missing_change_fails_unless_ignored() -> None:
    after = BEFORE | {"light.a": state("on", brightness=255, friendly_name="A")}
    expect = {"light.a": {"state": "on"}}
    assert unexpected_changes(BEFORE, after, expect, {}) == {
        "light.a": {"expected": {"brightness": None}, "got": {"brightness": 255}}
    }
    assert unexpected_changes(BEFORE, after, expect, {"light.a": ["brightness"]}) == {}
    assert unexpected_changes(BEFORE, after, {}, {"light.a": ["state", "brightness"]}) == {}


def test_values_equal_as_text_and_tuples_as_lists_are_the_same() -> None:
    after = BEFORE | {
        "cover.b": state("open", current_position=30, is_closed=False, rgb=(1, 2)),
        "sensor.c": state("12.50"),
    }
    expect = {"cover.b": {"state": "open", "current_position": "30", "rgb": [1, 2]}}
    assert unexpected_changes(BEFORE, after, expect, {}) == {
        "sensor.c": {"expected": {"state": "12.5"}, "got": {"state": "12.50"}}
    }


def test_an_entity_added_or_removed_fails() -> None:
    after = {k: v for k, v in BEFORE.items() if k != "sensor.c"} | {"switch.d": state("on")}
    assert unexpected_changes(BEFORE, after, {}, {}) == {
        "sensor.c": {"expected": True, "got": False},
        "switch.d": {"expected": False, "got": True},
    }


# --- bad files ------------------------------------------------------------------------------------

FIXTURE = """\
areas: [{name: Hall, id: hall}]
devices: [{name: Lamp, id: lamp, area: hall}]
entities:
  - {id: switch.lamp, name: Lamp, device: lamp, state: "off"}
"""
TEST = "  - sentences: [Lamp on]\n    expect_changes: {switch.lamp: {state: 'on'}}\n"


def folder(tmp_path: Path, record: str, fixture: str = FIXTURE) -> Path:
    home = tmp_path / "cases" / "home"
    home.mkdir(parents=True)
    (home / "_fixtures.yaml").write_text(fixture, encoding="utf-8")
    (home / "lamp.yaml").write_text(record, encoding="utf-8")
    return tmp_path / "cases"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("tests: [{sentences: [a]}]\n", r"lamp.yaml: category: required key not provided"),
        ("category: light\ntests: []\n", r"lamp.yaml: tests: length of value must be at least 1"),
        ("category: light\ntests:\n  - sentences: []\n", r"tests\[0\].sentences: length"),
        (
            "category: light\ntests:\n  - sentences: [a]\n    expected_changes: {}\n",
            r"tests\[0\].expected_changes: extra keys not allowed",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    setup: {light.nope: {state: 'on'}}\n",
            r"lamp.yaml: tests\[0\].setup.light.nope: no such entity in the fixture",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    setup: {switch.lamp: {state: up}}\n",
            r"lamp.yaml: tests\[0\] \(the fixture with its setup\): .*switch.lamp: state",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    expect_changes: {light.x: {}}\n",
            r"tests\[0\].expect_changes.light.x: no such entity in the home",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n"
            "    expect_changes: {switch.lamp: {colour: red}}\n",
            r"tests\[0\].expect_changes.switch.lamp.colour: extra keys not allowed",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    ignore_changes: {lamp: [state]}\n",
            r"tests\[0\].ignore_changes.lamp: expected an entity id",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    context_device: speaker\n",
            r"tests\[0\].context_device: no device 'speaker'",
        ),
        (
            "category: light\ntests:\n  - sentences: [a]\n    oracle: [{action: turn_on}]\n",
            r"tests\[0\].oracle\[0\]: expected \{action, target, data\} or \{tool, arguments\}",
        ),
        ("category: light\ntests: [\n", r"lamp.yaml"),
        ("- a list\n", r"lamp.yaml: expected a mapping, got list"),
    ],
)
def test_a_bad_record_names_its_file_and_field(tmp_path: Path, record: str, message: str) -> None:
    with pytest.raises(AssistCaseError, match=message):
        load_cases(folder(tmp_path, record))


def test_a_bad_fixture_or_folder_is_named(tmp_path: Path) -> None:
    bad = FIXTURE.replace('state: "off"', "state: sideways")
    with pytest.raises(AssistCaseError, match=r"_fixtures.yaml: .*switch.lamp: state: expected"):
        load_cases(folder(tmp_path, f"category: light\ntests:\n{TEST}", bad))
    with pytest.raises(AssistCaseError, match=r"no _fixtures.yaml under it"):
        load_cases(tmp_path / "cases" / "home" / "lamp.yaml")
    assert not is_cases(tmp_path / "elsewhere")


def test_a_case_without_an_oracle_cannot_be_played_by_the_teacher(tmp_path: Path) -> None:
    (case,) = load_cases(folder(tmp_path, f"category: light\ntests:\n{TEST}"))
    assert case.id == "home-lamp-1.1"
    with pytest.raises(AssistCaseError, match=r"home-lamp-1.1: the test has no oracle"):
        oracle_policy(case)


# --- commands -------------------------------------------------------------------------------------


def test_run_and_report_on_a_folder_of_cases(tmp_path: Path) -> None:
    cli = CliRunner()
    out = tmp_path / "teacher"
    arguments = [str(CASES), "--policy", TEACHER, "--types", "Light,vacuum", "--subset", "2"]
    result = cli.invoke(run, [*arguments, "--workers", "1", "-o", str(out)])
    assert result.exit_code == 0, result.output
    ids = [r["id"] for r in json.loads((out / "results.json").read_text())["instances"]]
    assert len(ids) == 4
    result = cli.invoke(report, [str(out)])
    assert result.exit_code == 0, result.output
    table = (out / "results.md").read_text()
    assert "| light | 2 | 100.0% |" in table
    assert "| vacuum | 2 | 100.0% |" in table
    result = cli.invoke(run, [str(CASES), "--policy", NOOP, "--types", "QT1", "-o", str(out)])
    assert result.exit_code == 2
    assert "unknown task types ['QT1']; use alarm_control_panel, binary_sensor" in result.output

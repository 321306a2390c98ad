# ruff: noqa: F811  (the `server` fixture is imported)
"""SmartHome-Bench's evaluator: scoring by the home's state, runs, resume, reports, the CLI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agent.backends.twin import TwinBackend
from agent.bench import evaluate as bench
from agent.bench.commands import compare, report, run
from agent.bench.evaluate import NOOP, TEACHER, Record, score, select, summarise, violations
from agent.bench.instances import BenchInstance, generate_bench
from agent.bench.report import (
    Results,
    ResultsError,
    compare_markdown,
    load_results,
    markdown,
    mcnemar_p,
    paired_markdown,
    write_report,
)
from agent.episode import EpisodeLimits, Step, Trajectory, run_episode
from agent.flywheel.runner import RunError
from agent.policies import AssistantMessage, Message, ToolCall
from agent.policies.specs import SpecError
from tests.agent.test_openai_policy import FakeServer, completion, server  # noqa: F401
from twin.homemaker import make_home

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def instances() -> list[BenchInstance]:
    """Two instances of each task type (QT1-QT5)."""
    return generate_bench(10)


def _trajectory(
    *, done: bool, collateral: list[str], messages: Sequence[Message] = ()
) -> Trajectory:
    step = Step(1, "call_service", {}, True, 0.01, 1.0, done, [done], collateral)
    return Trajectory(messages=list(messages), steps=[step], done=done, tool_calls=1)


def _record(kind: str, success: bool, tool_calls: int, tokens: int, refused: int) -> Record:
    return {
        "type": kind,
        "success": success,
        "tool_calls": tool_calls,
        "output_tokens": tokens,
        "violations": refused,
        "latency_s": 0.5,
    }


# --- scoring ----------------------------------------------------------------------------------


def test_all_conditions_and_nothing_else_is_a_success() -> None:
    assert score(_trajectory(done=True, collateral=[]))["success"] is True


def test_a_collateral_change_fails_even_when_the_goal_holds() -> None:
    scored = score(_trajectory(done=True, collateral=["light.hall"]))
    assert (scored["success"], scored["done"], scored["collateral"]) == (
        False,
        True,
        ["light.hall"],
    )


def test_an_unmet_goal_or_no_action_fails() -> None:
    assert score(_trajectory(done=False, collateral=[]))["success"] is False
    assert score(Trajectory())["success"] is False


def test_refused_calls_count_as_violations_and_other_errors_do_not() -> None:
    def tool(result: dict[str, Any]) -> Message:
        return {
            "role": "tool",
            "tool_call_id": "c",
            "name": "call_service",
            "content": json.dumps(result),
        }

    refused = {"success": False, "error": {"code": "forbidden_domain", "message": "no"}}
    missing = {"success": False, "error": {"code": "entity_not_found", "message": "no"}}
    asked = {"success": False, "error": {"code": "confirmation_required", "message": "ask"}}
    messages = [tool(refused), tool(missing), tool({"success": True}), tool(asked), tool(refused)]
    assert violations(messages) == 2
    assert score(_trajectory(done=True, collateral=[], messages=messages))["violations"] == 2


class _Restarter:
    """Asks the auditor for something it refuses (restarting HA), then replies."""

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        if messages[-1]["role"] == "tool":
            return AssistantMessage("I may not do that.")
        call = ToolCall("c1", "call_service", {"domain": "homeassistant", "service": "restart"})
        return AssistantMessage("", (call,))


class _Looper:
    """Reads the same state again and again, as small models do."""

    async def act(self, messages: list[Message], tools: list[dict[str, Any]]) -> AssistantMessage:
        call = ToolCall(f"c{len(messages)}", "get_state", {"entity_id": "light.nowhere"})
        return AssistantMessage("", (call,))


def test_an_agent_that_loops_is_scored_at_the_call_limit_and_repeating() -> None:
    limits = EpisodeLimits(max_tool_calls=4)
    home = TwinBackend(make_home(3))
    trajectory = asyncio.run(run_episode(_Looper(), home, ["is it on?"], limits=limits))
    scored = score(trajectory)
    assert (scored["end_reason"], scored["repeats"], scored["tool_calls"]) == (
        "max_tool_calls",
        True,
        4,
    )
    restarted = asyncio.run(run_episode(_Restarter(), home, ["restart the server"]))
    assert score(restarted)["repeats"] is False


def test_a_real_refusal_on_the_twin_is_counted() -> None:
    trajectory = asyncio.run(
        run_episode(_Restarter(), TwinBackend(make_home(3)), ["restart the server"])
    )
    assert trajectory.tool_calls == 1
    assert score(trajectory)["violations"] == 1


def test_summary_averages_per_type_and_overall() -> None:
    records = [
        _record("QT2", True, 4, 100, 0) | {"end_reason": "done", "repeats": False},
        _record("QT2", False, 2, 50, 1) | {"end_reason": "max_tool_calls", "repeats": True},
        _record("QT1", True, 3, 30, 2),  # from before call limits and repeats were kept
    ]
    summary = summarise(records)
    assert list(summary) == ["QT1", "QT2", "overall"]
    assert summary["QT2"] == pytest.approx(
        {
            "instances": 2,
            "success": 0.5,
            "tool_calls": 3,
            "output_tokens": 75,
            "latency_s": 0.5,
            "violations": 1,
            "at_call_limit": 0.5,
            "repeats": 0.5,
        }
    )
    assert summary["overall"]["at_call_limit"] == pytest.approx(1 / 3)
    assert summary["overall"]["success"] == pytest.approx(2 / 3)
    assert summary["overall"]["tool_calls"] == pytest.approx(3)
    assert summary["overall"]["output_tokens"] == pytest.approx(60)
    assert summary["overall"]["violations"] == 3


def test_select_takes_types_and_the_first_of_each(instances: list[BenchInstance]) -> None:
    firsts = [*(f"qt{n}-0000" for n in range(1, 6)), "qs-0000", "qi-0000"]
    assert [i.id for i in select(instances, subset=1)] == firsts
    assert [i.id for i in select(instances, 1, ["QT2", "QT4"])] == ["qt2-0000", "qt4-0000"]
    assert [i.id for i in select(instances, types=["QT1"])] == ["qt1-0000", "qt1-0001"]


# --- runs -------------------------------------------------------------------------------------


def test_teacher_solves_all_and_noop_none(instances: list[BenchInstance], tmp_path: Path) -> None:
    for policy, expected in ((TEACHER, 1.0), (NOOP, 0.0)):
        directory = tmp_path / policy
        outcome = bench.evaluate(instances, directory, policy, progress=False)
        assert outcome.complete
        assert len(outcome.records) == len(instances)
        results = json.loads(bench.write_results(directory).read_text(encoding="utf-8"))
        assert results["summary"]["overall"]["success"] == expected
        assert results["summary"]["overall"]["instances"] == 10
        assert results["config"]["policy"] == policy
        assert [r["id"] for r in results["instances"]] == sorted(i.id for i in instances)
        assert "trajectory" not in results["instances"][0]
        lines = (directory / bench.TRAJECTORIES).read_text(encoding="utf-8").splitlines()
        trajectory = Trajectory.from_json(json.dumps(json.loads(lines[0])["trajectory"]))
        assert trajectory.messages[0]["role"] == "system"
        assert trajectory.done is (policy == TEACHER)
    noop = json.loads((tmp_path / NOOP / bench.RESULTS).read_text(encoding="utf-8"))
    assert all(r["tool_calls"] == 0 and r["end_reason"] == "max_turns" for r in noop["instances"])


def test_an_interrupted_run_continues_without_repeats(
    instances: list[BenchInstance], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    played = bench.evaluate_instance
    calls: list[str] = []

    def interrupted(job: dict[str, str], **options: Any) -> Record:
        calls.append(job["id"])
        if len(calls) == 5:
            raise KeyboardInterrupt
        return played(job, **options)

    monkeypatch.setattr(bench, "evaluate_instance", interrupted)
    first = bench.evaluate(instances, tmp_path, TEACHER, progress=False)
    assert not first.complete
    assert len(first.records) == 4
    monkeypatch.setattr(bench, "evaluate_instance", played)
    second = bench.evaluate(instances, tmp_path, TEACHER, progress=False)
    assert second.complete
    assert len(second.fresh) == 6
    lines = [
        json.loads(line)["key"]
        for shard in (tmp_path / "shards").glob("*.jsonl")
        for line in shard.read_text(encoding="utf-8").splitlines()
    ]
    assert sorted(lines) == sorted(i.id for i in instances)
    with pytest.raises(RunError, match="another run"):
        bench.evaluate(instances, tmp_path, NOOP, progress=False)


def test_a_bad_policy_spec_says_the_forms() -> None:
    with pytest.raises(SpecError, match=r"teacher\|noop"):
        bench.check_policy("gpt4")


async def test_a_server_policys_connections_close_with_its_instance(
    instances: list[BenchInstance], server: FakeServer
) -> None:
    """Each instance runs in an event loop of its own, which its connections must not outlive."""
    server.replies = [completion({"content": "Okay."})] * 10
    instance = instances[0]
    job = {"id": instance.id, "type": instance.task_type, "blueprint": instance.blueprint.to_json()}
    record = await asyncio.to_thread(
        bench.evaluate_instance, job, f"openai:{server.url}#m", 1, 2, False
    )
    await asyncio.sleep(0.05)
    assert record["turns"] == 1
    assert server.connections
    assert all(connection.is_closing() for connection in server.connections)


# --- reports ----------------------------------------------------------------------------------


def test_report_and_compare_write_tables_and_charts(
    instances: list[BenchInstance], tmp_path: Path
) -> None:
    for policy in (TEACHER, NOOP):
        bench.evaluate(instances, tmp_path / policy, policy, progress=False)
        bench.write_results(tmp_path / policy)
    teacher, noop = load_results(tmp_path / TEACHER), load_results(tmp_path / NOOP / "results.json")
    table = markdown(teacher)
    assert "| QT3 | 2 | 100.0% |" in table
    assert "| at call limit | repeats |" in table
    assert table.splitlines()[-1].endswith(
        "| 0.0% | 0.0% |"
    )  # the teacher neither loops nor stalls
    assert "| **overall** | 10 | 100.0% |" in table
    compared = compare_markdown([teacher, noop])
    assert "| results | policy | QT1 | QT2 | QT3 | QT4 | QT5 | QS | QI | overall |" in compared
    assert (
        "| teacher | `teacher` | 100.0% | 100.0% | 100.0% | 100.0% | 100.0% | 100.0% |" in compared
    )
    assert "| noop | `noop` | 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 0.0% |" in compared
    assert "| noop | teacher | 10 | 0 | 10 | 0.002 |" in compared  # paired, on the same ids
    trained = Results("rl", {"policy": f"local:{Path.home()}/models/rl"}, noop.summary)
    assert "| rl | `local:~/models/rl` |" in compare_markdown([teacher, trained])
    assert "(policy `local:~/models/rl`)" in markdown(trained)
    for results, stem in (([teacher], tmp_path / "one"), ([teacher, noop], tmp_path / "both")):
        text, chart = write_report(results, stem)
        assert text.read_text(encoding="utf-8").count("\n|") >= len(results)
        assert chart.read_bytes().startswith(PNG)


def test_paired_differences_count_the_instances_only_one_solved() -> None:
    """18 solved only by the later, 7 only by the earlier (as the measured MCTS-Flow SFT against
    the base): exact McNemar p 0.043; instances one of them lacks are left out."""
    ids = [f"i{n}" for n in range(40)]
    before = dict.fromkeys(ids, False) | dict.fromkeys(ids[:7], True) | {"gone": True}
    after = dict.fromkeys(ids, False) | dict.fromkeys(ids[7:25], True)
    summary = {"overall": {"success": 0.0}}
    table = paired_markdown([Results("base", {}, summary, before), Results("sft", {}, {}, after)])
    assert table.splitlines()[-1] == "| sft | base | 40 | 18 | 7 | 0.043 |"
    assert paired_markdown([Results("a", {}, summary), Results("b", {}, summary)]) == ""
    everything = Results("all", {}, {}, dict.fromkeys(ids, True))
    table = paired_markdown([Results("base", {}, summary, before), everything])
    assert table.splitlines()[-1] == "| all | base | 40 | 33 | 0 | <0.001 |"
    assert mcnemar_p(0, 0) == 1.0
    assert mcnemar_p(1678, 0) == 0.0  # the full benchmark, teacher against no-op
    assert mcnemar_p(1000, 1100) == pytest.approx(0.0307, abs=1e-4)
    assert mcnemar_p(3, 3) == 1.0


def test_unreadable_results_say_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ResultsError, match="homeflow bench run"):
        load_results(tmp_path)
    with pytest.raises(ResultsError):
        load_results(tmp_path / "missing")


# --- the commands -----------------------------------------------------------------------------


@pytest.fixture
def bench_dir(instances: list[BenchInstance], tmp_path: Path) -> Path:
    lines = "".join(instance.to_json() + "\n" for instance in instances)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "instances.jsonl").write_text(lines, encoding="utf-8")
    return tmp_path / "bench"


def test_run_report_and_compare_commands(bench_dir: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    for policy in (TEACHER, NOOP):
        out = tmp_path / policy
        arguments = [str(bench_dir), "--policy", policy, "--types", "qt2,QT4", "--subset", "1"]
        result = cli.invoke(run, [*arguments, "--workers", "1", "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert [r["id"] for r in json.loads((out / "results.json").read_text())["instances"]] == [
            "qt2-0000",
            "qt4-0000",
        ]
        assert (out / "results.png").read_bytes().startswith(PNG)
    result = cli.invoke(report, [str(tmp_path / TEACHER / "results.json")])
    assert result.exit_code == 0, result.output
    assert "100.0%" in (tmp_path / TEACHER / "results.md").read_text()
    stem = tmp_path / "report" / "both"  # a folder not made yet
    result = cli.invoke(compare, [str(tmp_path / TEACHER), str(tmp_path / NOOP), "-o", str(stem)])
    assert result.exit_code == 0, result.output
    assert "| results | policy | QT2 | QT4 | overall |" in stem.with_suffix(".md").read_text()
    assert "| noop | `noop` | 0.0% | 0.0% | 0.0% |" in stem.with_suffix(".md").read_text()
    assert stem.with_suffix(".png").read_bytes().startswith(PNG)


def test_commands_refuse_bad_input_clearly(bench_dir: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    out = str(tmp_path / "out")
    result = cli.invoke(run, [str(bench_dir), "--policy", "gpt4", "-o", out])
    assert result.exit_code == 2
    assert "teacher|noop|local[:PATH]|openai:URL#MODEL" in result.output
    result = cli.invoke(run, [str(bench_dir), "--policy", "noop", "--types", "QT9", "-o", out])
    assert result.exit_code == 2
    assert "unknown task types ['QT9']" in result.output
    result = cli.invoke(run, [str(tmp_path), "--policy", "noop", "-o", out])
    assert result.exit_code == 2
    assert "instances.jsonl" in result.output
    assert not (tmp_path / "out").exists()
    result = cli.invoke(report, [str(bench_dir)])
    assert result.exit_code == 2
    assert "homeflow bench run" in result.output

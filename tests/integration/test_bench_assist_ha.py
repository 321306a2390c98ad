"""HomeFlow's assist cases in a real Home Assistant: each case's home imported as a HomeFlow home,
the oracle and the no-op acting over REST, the states of that home's entities scored by the
format's rule; every verdict is the twin's, case by case, and no home is left behind.

The server is test_real_server's, emptied of HomeFlow homes by test_bench_ha's fixture.
"""

from __future__ import annotations

from pathlib import Path

from agent.bench.assist import load_cases
from agent.bench.evaluate import NOOP, TEACHER, evaluate
from agent.bench.ha import Server
from tests.integration import test_real_server as real
from tests.integration.test_bench_ha import homes, server

CASES = Path(__file__).parents[2] / "agent" / "bench" / "external"
ASSIST = "conversation.home_assistant"

served_api = real.api
unix_sockets = real.unix_sockets
auto_enable_custom_integrations = real.auto_enable_custom_integrations
__all__ = ["server"]


def test_verdicts_on_home_assistant_are_the_twins_case_by_case(
    server: Server, served_api: real.Api, tmp_path: Path
) -> None:
    cases = load_cases(CASES)
    for policy in (TEACHER, NOOP):
        verdicts = []
        for where, on in (("twin", None), ("ha", server)):
            outcome = evaluate(
                cases, tmp_path / f"{where}-{policy}", policy, progress=False, server=on
            )
            assert outcome.complete
            verdicts.append({r["id"]: (r["success"], r["unexpected"]) for r in outcome.records})
        on_twin, on_ha = verdicts
        assert {k: v for k, v in on_ha.items() if v != on_twin[k]} == {}
        assert sum(success for success, _ in on_ha.values()) == sum(
            policy == TEACHER or not case.expect_changes for case in cases
        )
        assert homes(served_api) == []


def test_assist_hears_a_case_and_the_rule_decides(
    server: Server, served_api: real.Api, tmp_path: Path
) -> None:
    chosen = ("farmhouse-ohio-light-1.1", "studio-lisbon-switch-1.1", "cabin-lake-sensor-2.1")
    cases = [case for case in load_cases(CASES) if case.id in chosen]
    outcome = evaluate(cases, tmp_path / "assist", ASSIST, progress=False, server=server)
    assert outcome.complete
    records = {record["id"]: record for record in outcome.records}
    assert {key: record["success"] for key, record in records.items()} == dict.fromkeys(
        chosen, True
    )
    for record in records.values():
        said = [m for m in record["trajectory"]["messages"] if m["role"] == "assistant"]
        assert [bool(m["content"]) for m in said] == [True]
        assert record["tool_calls"] == 0  # Assist's own calls are not visible
    assert homes(served_api) == []

"""The one reward: its terms, the outcome recorder, success, and HomeEnv-v0 scoring with it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.twin.test_env import KITCHEN, KITCHEN_ON, LOUNGE, call, make_home
from twin.auditor import DEFAULT_POLICY
from twin.env import HomeEnv
from twin.reward import (
    ActionOutcome,
    OutcomeRecorder,
    code_tokens,
    episode_value,
    progress,
    reward_terms,
    solved,
    step_reward,
)
from twin.tools import run_tool
from twin.verifier import Verifier

RESTRICTED = {"name": "pyexec", "arguments": {"code": "getattr(hass, 'states')"}}
SOLVE = {
    "name": "pyexec",
    "arguments": {"code": f'call_service("light", "turn_on", entity_id="{KITCHEN}")'},
}
# Collateral, a refused call, restricted code, the collateral undone, then the task solved.
TRAJECTORY: list[dict[str, Any]] = [
    call("light", "turn_on", LOUNGE),
    {"name": "call_service", "arguments": {"domain": "shell_command", "service": "rm"}},
    RESTRICTED,
    call("light", "turn_off", LOUNGE),
    SOLVE,
]
REWARDS = [-1.0, -1.0, -2.0, 0.0, 1.0]


def test_homeenv_rewards_are_the_step_reward_of_each_action() -> None:
    env = HomeEnv(make_home(), [KITCHEN_ON])
    env.reset()
    found = [float(env.step(action)[1]) for action in TRAJECTORY]
    assert found == REWARDS
    home = make_home()
    verifier = Verifier(home, [KITCHEN_ON])
    report = verifier.step(home)
    scored = []
    for action in TRAJECTORY:
        recorder = OutcomeRecorder(report)
        result = run_tool(home, action["name"], action["arguments"], DEFAULT_POLICY)
        report = verifier.step(home)
        recorder.call(action["name"], action["arguments"], result, report)
        scored.append(step_reward(recorder.outcome()))
    assert scored == REWARDS
    assert solved(report)
    assert episode_value(report, solved(report)) == 1.0


def test_the_terms_of_each_variant() -> None:
    outcome = ActionOutcome(
        conditions=2, progress=0.5, collateral=1, penalties=-0.3, restricted=1, code_tokens=9
    )
    assert reward_terms(outcome) == {
        "verifier_reward": 0.0,
        "auditor_reward": -0.3,
        "format_reward": 0.0,
        "code_check": -1.0,
        "code_length": 0.0,
        "turn_check": 0.0,
    }
    late = ActionOutcome(conditions=1, malformed=2, code_tokens=9, turn=4, success=True)
    assert reward_terms(late, "st", code_limit=8, turn_limit=3) == {
        "outcome_reward": 1.0,
        "format_reward": -1.0,
        "code_check": 0.0,
        "code_length": -1.0,
        "turn_check": -1.0,
    }
    assert step_reward(late, "st", code_limit=8) == -2.0
    with pytest.raises(ValueError, match="step"):
        reward_terms(outcome, "sparse")


def test_the_recorder_counts_what_the_action_newly_did() -> None:
    home = make_home()
    verifier = Verifier(home, [KITCHEN_ON])
    home.call_service("light", "turn_on", {}, {"entity_id": LOUNGE})  # before the action
    before = verifier.step(home)
    recorder = OutcomeRecorder(before, turn=2, tokens=len)
    assert recorder.outcome() == ActionOutcome(conditions=1, turn=2)
    bad = {"domain": "light", "service": "turn_on", "target": {"entity_id": "light.attic"}}
    recorder.call("call_service", bad, run_tool(home, "call_service", bad), verifier.step(home))
    code = 'call_service("lock", "lock", entity_id="lock.front_door")'
    code_result = run_tool(home, "pyexec", {"code": code})
    recorder.call("pyexec", {"code": code}, code_result, verifier.step(home))
    recorder.malformed()
    assert recorder.outcome() == ActionOutcome(
        conditions=1, penalties=-0.3, malformed=1, code_tokens=len(code), turn=2
    )


def test_solved_progress_and_value_read_the_report() -> None:
    home = make_home()
    verifier = Verifier(home, [KITCHEN_ON])
    home.call_service("light", "turn_on", {}, {"entity_id": KITCHEN})
    home.call_service("light", "turn_on", {}, {"entity_id": LOUNGE})
    report = verifier.step(home)
    assert report.done
    assert not solved(report)
    assert progress(report) == 0.0
    assert episode_value(report, False) == 0.0
    home.call_service("light", "turn_off", {}, {"entity_id": LOUNGE})
    report = verifier.step(home)
    assert solved(report)
    assert (progress(report), episode_value(report, False)) == (1.0, 0.5)


def test_code_tokens_count_words_and_symbols() -> None:
    assert code_tokens('turn_on("light", 1)') == 8  # turn_on ( " light " , 1 )
    assert code_tokens("") == 0

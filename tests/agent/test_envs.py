"""HomeEnv-v1: a whole dialogue per episode, the runner's trajectory, twin.reward's reward, the
gymnasium checks, vectorised runs, malformed actions, and registration by import."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import agent.envs
from agent.bench.instances import play
from agent.envs import ENV_ID, DialogueEnv, EnvError
from agent.episode import EpisodeLimits, Trajectory
from agent.policies import AssistantMessage, ToolCall
from agent.policies.teacher import TeacherPolicy
from tests.agent.test_rl import LIGHT, blueprint, blueprint_seed
from twin.reward import OutcomeRecorder, step_reward
from twin.tools import run_tool
from twin.verifier import Verifier

TURN_OFF = {
    "name": "call_service",
    "arguments": {"domain": "light", "service": "turn_off", "target": {"entity_id": LIGHT}},
}


def started(limits: EpisodeLimits | None = None) -> DialogueEnv:
    env = DialogueEnv(blueprint(), limits)
    env.reset(options={"user_seed": blueprint_seed()})
    return env


def teach(env: DialogueEnv) -> tuple[list[AssistantMessage], float]:
    """Play the scripted teacher through the env: its messages and the summed reward."""
    teacher = TeacherPolicy(blueprint().task, blueprint_seed())
    actions, total, over = [], 0.0, False
    while not over:
        action = asyncio.run(teacher.act(list(env.trajectory.messages), env.tool_schemas))
        _, reward, terminated, truncated, _ = env.step(action)
        actions.append(action)
        total += float(reward)
        over = terminated or truncated
    return actions, total


def comparable(trajectory: Trajectory) -> dict[str, Any]:
    """What an episode recorded, less what timing and the policy's own calls cost."""
    data = dataclasses.asdict(trajectory)
    for key in ("policy_calls", "policy_latency_s", "tool_latency_s", "wall_s"):
        del data[key]
    for step in data["steps"]:
        del step["latency_s"]
    return data


def test_the_env_passes_gymnasiums_checks() -> None:
    check_env(gym.make(ENV_ID, blueprint=blueprint()).unwrapped)


def test_reset_observes_the_system_prompt_and_the_first_request() -> None:
    env = DialogueEnv(blueprint())
    observation, info = env.reset(options={"user_seed": blueprint_seed()})
    system, user = json.loads(observation)
    assert system["role"] == "system"
    assert "smart home agent" in system["content"]
    assert user == {"role": "user", "content": blueprint().task.turns[0]}
    assert info["turns"] == 1
    assert info["end_reason"] is None


def test_the_teacher_solves_the_dialogue_as_the_episode_runner_records_it() -> None:
    env = started()
    actions, total = teach(env)
    episode = asyncio.run(play(blueprint(), TeacherPolicy(blueprint().task, blueprint_seed())))
    assert comparable(env.trajectory) == comparable(episode)
    assert env.trajectory.done
    assert env.trajectory.end_reason == "done"
    assert total == pytest.approx(1.0)
    assert total == pytest.approx(reward_of(actions))


def reward_of(actions: list[AssistantMessage]) -> float:
    """twin.reward's step rewards for the actions played in order on a fresh home."""
    home = blueprint().home()
    verifier = Verifier(home, blueprint().task.conditions(home))
    report, total = verifier.step(home), 0.0
    for action in actions:
        recorder = OutcomeRecorder(report)
        for call in action.tool_calls:
            result = run_tool(home, call.name, call.arguments)
            report = verifier.step(home)
            recorder.call(call.name, call.arguments, result, report)
        recorder.malformed(len(action.parse_errors))
        total += step_reward(recorder.outcome())
    return total


def test_tool_results_and_the_users_answer_are_observed() -> None:
    env = started()
    observation, reward, terminated, truncated, info = env.step({"content": None, **as_openai()})
    (result,) = json.loads(observation)
    assert result["role"] == "tool"
    assert json.loads(result["content"])["success"] is True
    assert (reward, terminated, truncated) == (1.0, False, False)
    assert info["outcome"]["success"]
    assert info["reward_terms"]["verifier_reward"] == 1.0
    observation, reward, terminated, _, info = env.step("All done: the light is off.")
    (closing,) = json.loads(observation)
    assert closing["role"] == "user"
    assert (reward, terminated) == (0.0, True)
    assert info["end_reason"] == "done"


def as_openai() -> dict[str, Any]:
    """TURN_OFF as an OpenAI assistant message's tool_calls."""
    function = {"name": TURN_OFF["name"], "arguments": json.dumps(TURN_OFF["arguments"])}
    return {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": function}],
    }


@pytest.mark.parametrize(
    "action",
    [
        TURN_OFF,
        json.dumps(TURN_OFF),
        f"<tool_call>{json.dumps(TURN_OFF)}</tool_call>",
        json.dumps({"content": "", **as_openai()}),
        AssistantMessage("", (ToolCall("c1", TURN_OFF["name"], TURN_OFF["arguments"]),)),
    ],
)
def test_every_form_of_a_message_is_read(action: Any) -> None:
    assert started().step(action)[1] == 1.0


def test_calls_read_from_text_get_the_same_ids_every_time() -> None:
    text = f"<tool_call>{json.dumps(TURN_OFF)}</tool_call>"
    assert started().step(text)[0] == started().step(text)[0]


@pytest.mark.parametrize(
    "action",
    [
        42,
        None,
        ["not", "a", "message"],
        {"role": "assistant", "content": 7},
        {"role": "assistant", "tool_calls": "call_service"},
        {"role": "assistant", "tool_calls": [{"function": "call_service"}]},
        {
            "role": "assistant",
            "tool_calls": [{"function": {"name": "get_state", "arguments": "{"}}],
        },
        "<tool_call>{not json</tool_call>",
    ],
)
def test_malformed_actions_get_an_error_observation_and_never_raise(action: Any) -> None:
    env = started()
    observation, reward, terminated, truncated, _ = env.step(action)
    (correction,) = json.loads(observation)
    assert correction["role"] == "user"
    assert json.loads(correction["content"])["error"]["code"] == "malformed_tool_call"
    assert (reward, terminated, truncated) == (-1.0, False, False)  # format_reward
    assert env.trajectory.malformed == 1


def test_failed_calls_cost_the_auditors_penalty() -> None:
    call = {"name": "call_service", "arguments": {**TURN_OFF["arguments"], "target": {}}}
    call["arguments"]["target"] = {"entity_id": "light.nowhere"}
    observation, reward, *_ = started().step(call)
    assert json.loads(json.loads(observation)[0]["content"])["success"] is False
    assert reward == -0.3  # twin.auditor.PENALTIES["unknown_entity"]


def test_the_runners_limits_truncate_the_episode() -> None:
    env = started(EpisodeLimits(max_retries=1))
    assert env.step("<tool_call>{</tool_call>")[2:4] == (False, False)
    _, _, terminated, truncated, info = env.step("<tool_call>{</tool_call>")
    assert (terminated, truncated, info["end_reason"]) == (False, True, "max_retries")
    look = {"name": "get_state", "arguments": {"entity_id": LIGHT}}
    env = started(EpisodeLimits(max_tool_calls=1))
    _, _, terminated, truncated, info = env.step(json.dumps([look, look]))
    assert (terminated, truncated, info["end_reason"]) == (False, True, "max_tool_calls")
    env = started(EpisodeLimits(max_turns=1))
    _, _, terminated, truncated, info = env.step("Which light do you mean?")
    assert (terminated, truncated, info["end_reason"]) == (False, True, "max_turns")


def test_a_snapshot_brings_the_episode_back() -> None:
    env = started()
    state = env.snapshot()
    first = env.step(TURN_OFF)
    env.step("Done.")
    env.restore(state)
    assert env.step(TURN_OFF)[:4] == first[:4]
    assert env.home.states[LIGHT].state == "off"


@pytest.mark.parametrize(
    ("mode", "vector_kwargs"), [("sync", {}), ("async", {"shared_memory": False})]
)
def test_vectorised_envs_play_dialogues(mode: str, vector_kwargs: dict[str, Any]) -> None:
    envs = gym.make_vec(
        ENV_ID,
        num_envs=3,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        blueprint=blueprint().to_json(),
    )
    observations, _ = envs.reset(seed=0)
    assert len(observations) == 3
    _, rewards, terminated, truncated, _ = envs.step(
        (json.dumps(TURN_OFF), "Which light?", "<tool_call>{</tool_call>")
    )
    assert list(rewards) == [1.0, 0.0, -1.0]
    assert not any(terminated)
    assert not any(truncated)
    _, _, terminated, _, _ = envs.step(("Done, the light is off.", "Okay.", "Okay."))
    assert terminated[0]
    envs.close()


@pytest.mark.parametrize(
    ("module", "make"),
    [
        ("agent.envs", f"gym.make('{ENV_ID}', blueprint=make_blueprint({blueprint_seed()}))"),
        ("agent.envs", "gym.make('homeflow/HomeEnv-v0', home=H, goal=['True'])"),
        ("twin.env", "gym.make('homeflow/HomeEnv-v0', home=H, goal=['True'])"),
    ],
)
def test_importing_a_module_registers_its_envs_in_a_fresh_process(module: str, make: str) -> None:
    """Once, and silently: a module imported again (reloaded) registers nothing twice."""
    code = (
        "import gymnasium as gym, importlib\n"
        "from agent.flywheel.blueprints import make_blueprint\n"
        f"H = make_blueprint({blueprint_seed()}).home()\n"
        f"module = importlib.import_module({module!r})\n"
        "gym.register_envs(importlib.reload(module))\n"
        f"env = {make}\n"
        "env.reset(seed=0)\n"
    )
    command = [sys.executable, "-W", "error", "-c", code]
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


def test_registration_is_idempotent() -> None:
    gym.register_envs(agent.envs)
    assert ENV_ID in gym.registry
    assert gym.registry[ENV_ID].entry_point == "agent.envs:DialogueEnv"


class WaitingUser:
    """A user that waits on I/O, as an LLM user does."""

    async def next_turn(self, dialogue: Any, status: Any) -> str:
        await asyncio.sleep(0)
        return "Turn off the light."


def test_a_user_that_waits_needs_a_loop_and_says_so() -> None:
    env = DialogueEnv(blueprint(), user=lambda home: WaitingUser())
    with pytest.raises(EnvError, match="pass `loop`"):
        env.reset()


async def test_the_env_steps_inside_a_running_event_loop() -> None:
    env = started()
    assert env.step(TURN_OFF)[1] == 1.0

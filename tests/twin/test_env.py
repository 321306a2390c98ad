"""HomeEnv-v0: the gymnasium API, rewards and penalties, termination, time, and vectorisation."""

from __future__ import annotations

import copy
import json
import pickle
import warnings
from importlib.resources import files
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import twin.env
from twin.auditor import CONFIRMING_POLICY
from twin.catalog import load_catalog
from twin.env import ENV_ID, BMPText, Goal, HomeEnv
from twin.errors import ConditionError
from twin.home import Home
from twin.registry import Area, EntityEntry, Floor

KITCHEN = "light.kitchen_light"
LOUNGE = "light.lounge_lamp"
DOOR = "lock.front_door"
KITCHEN_ON = f'state("{KITCHEN}") == "on"'
LOUNGE_DIM = f'state("{LOUNGE}") == "on" and attr("{LOUNGE}", "brightness") <= 128'
GOAL = Goal((KITCHEN_ON,), "Turn on the kitchen light, please.")


def make_home(variant: int = 0) -> Home:
    """A kitchen light, a lounge lamp and a front door lock; `variant` names the home."""
    home = Home(f"Home {variant}")
    home.add_floor(Floor("ground", "Ground floor"))
    home.add_area(Area("kitchen", "Kitchen", "ground"))
    home.add_area(Area("lounge", "Lounge", "ground"))
    catalog = load_catalog()
    catalog["dimmable_bulb"].install(home, "kitchen", "Kitchen light", "kitchen")
    catalog["dimmable_bulb"].install(home, "lounge", "Lounge lamp", "lounge")
    catalog["smart_door_lock"].install(home, "door", "Front door", "lounge")
    return home


def call(domain: str, service: str, entity_id: str, **data: Any) -> dict[str, Any]:
    arguments = {"domain": domain, "service": service, "target": {"entity_id": entity_id}}
    return {"name": "call_service", "arguments": {**arguments, "data": data}}


TURN_ON_KITCHEN = call("light", "turn_on", KITCHEN)


@pytest.fixture
def home() -> Home:
    return make_home()


@pytest.fixture
def env(home: Home) -> HomeEnv:
    return HomeEnv(home, GOAL, max_turns=5)


# Without gymnasium.make the checker has no spec to try render modes with, and says so.
@pytest.mark.filterwarnings("ignore:.*not having a spec")
def test_the_env_passes_gymnasiums_checker(home: Home) -> None:
    check_env(HomeEnv(home, GOAL))
    made = gym.make(ENV_ID, home=home, goal=GOAL)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(made.unwrapped)
    assert [str(warning.message) for warning in caught] == []


def test_reset_observes_the_instruction(env: HomeEnv) -> None:
    observation, info = env.reset(seed=3)
    assert observation == "Turn on the kitchen light, please."
    assert observation in env.observation_space
    assert info == {
        "turn": 0,
        "conditions": [
            {"text": KITCHEN_ON, "satisfied": False, "newly_satisfied": False, "error": None}
        ],
        "all_satisfied": False,
        "collateral": [],
    }
    without = HomeEnv(make_home(), [KITCHEN_ON])
    assert without.reset()[0] == twin.env.NEUTRAL_PROMPT


def test_the_right_call_solves_the_task(env: HomeEnv) -> None:
    env.reset()
    observation, _, terminated, _, _ = env.step({"name": "list_entities", "arguments": {}})
    assert not terminated
    assert KITCHEN in [item["entity_id"] for item in json.loads(observation)["entities"]]
    observation, reward, terminated, truncated, info = env.step(json.dumps(TURN_ON_KITCHEN))
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert json.loads(observation)["changed"][0] == {
        "entity_id": KITCHEN,
        "name": "Kitchen light",
        "area": "kitchen",
        "state": "on",
        "brightness": 255,
    }
    assert info["turn"] == 2
    assert info["action"] == "call_service"
    assert info["verdict"] == {"allowed": True, "code": "ok", "message": "", "penalty": 0.0}
    assert info["conditions"][0]["newly_satisfied"] is True
    assert info["all_satisfied"] is True


def test_step_rewards_follow_the_conditions_and_collateral_is_reported(home: Home) -> None:
    env = HomeEnv(home, [KITCHEN_ON, LOUNGE_DIM], max_turns=10)
    env.reset()
    _, reward, terminated, _, _ = env.step(call("light", "turn_on", LOUNGE, brightness=100))
    assert (reward, terminated) == (0.5, False)
    _, reward, _, _, info = env.step(call("light", "turn_on", LOUNGE, brightness=200))
    assert reward == -0.5
    assert [status["satisfied"] for status in info["conditions"]] == [False, False]
    _, reward, _, _, info = env.step(call("lock", "lock", DOOR))
    assert reward == 0.0  # already locked: nothing changed
    env.step(call("light", "turn_on", LOUNGE, brightness=50))
    _, reward, terminated, _, info = env.step(
        {
            "name": "pyexec",
            "arguments": {"code": f'call_service("light", "turn_on", entity_id="{KITCHEN}")'},
        }
    )
    assert (reward, terminated) == (0.5, True)
    assert info["collateral"] == []


@pytest.mark.parametrize(
    ("action", "code", "penalty"),
    [
        (call("light", "turn_on", "light.attic"), "unknown_entity", -0.3),
        (call("light", "dance", KITCHEN), "unknown_service", -0.3),
        (call("light", "turn_on", KITCHEN, brightness_pct=140), "invalid_data", -0.2),
        (
            {"name": "call_service", "arguments": {"domain": "shell_command", "service": "rm"}},
            "forbidden_domain",
            -1.0,
        ),
        ({"name": "open_door", "arguments": {}}, "invalid_action", -0.2),
        ({"name": "get_state", "arguments": {"id": KITCHEN}}, "invalid_action", -0.2),
        ({"name": "get_state", "arguments": "{not json"}, "invalid_action", -0.2),
        ({"arguments": {}}, "invalid_action", -0.2),
        ('{"name": 3}', "invalid_action", -0.2),
        ({"name": "reply", "arguments": {}}, "invalid_action", -0.2),
        ({"name": "reply", "arguments": {"text": " "}}, "invalid_action", -0.2),
        (42, "invalid_action", -0.2),
        ("   ", "invalid_action", -0.2),
        ({"name": "pyexec", "arguments": {"code": "import os"}}, "restricted_code", -1.0),
        ({"name": "pyexec", "arguments": {"code": "while True: pass"}}, "step_limit", -0.5),
        ({"name": "pyexec", "arguments": {"code": "1 +"}}, "syntax_error", -0.2),
    ],
)
def test_bad_actions_cost_and_change_nothing(
    env: HomeEnv, action: Any, code: str, penalty: float
) -> None:
    env.reset()
    before = dict(env.home.states)
    observation, reward, terminated, truncated, info = env.step(action)
    result = json.loads(observation)
    assert result["success"] is False
    assert result["error"]["message"]
    code_check = -1.0 if code == "restricted_code" else 0.0  # twin.reward's CodeCheck, as in RL
    assert reward == penalty + code_check
    assert (terminated, truncated) == (False, False)
    assert info["verdict"]["allowed"] is False
    assert info["verdict"]["code"] == code
    assert info["verdict"]["penalty"] == penalty
    assert env.home.states == before


def test_unlocking_asks_for_confirmation_only_under_the_confirming_policy(home: Home) -> None:
    """HomeEnv-v0 has no user to say yes: under CONFIRMING_POLICY an unlock is refused, at no
    cost (asking is no mistake); by default it unlocks, as Home Assistant lets an agent."""
    confirming = HomeEnv(home.copy(), GOAL, policy=CONFIRMING_POLICY)
    confirming.reset()
    observation, reward, _, _, info = confirming.step(call("lock", "unlock", DOOR))
    assert json.loads(observation)["error"]["code"] == "confirmation_required"
    assert (reward, info["verdict"]["code"]) == (0.0, "confirmation_required")
    assert confirming.home.state(DOOR).state == "locked"
    default = HomeEnv(home, GOAL)
    default.reset()
    observation, _, _, _, _ = default.step(call("lock", "unlock", DOOR))
    assert json.loads(observation)["success"] is True
    assert default.home.state(DOOR).state == "unlocked"


def test_a_failed_pyexec_undoes_its_calls(env: HomeEnv) -> None:
    env.reset()
    code = f'call_service("light", "turn_on", entity_id="{KITCHEN}")\n1 / 0'
    observation, reward, terminated, _, _ = env.step(
        {"name": "pyexec", "arguments": {"code": code}}
    )
    assert json.loads(observation)["error"]["code"] == "code_error"
    assert (reward, terminated) == (-0.2, False)
    assert env.home.state(KITCHEN).state == "off"


@pytest.mark.parametrize(
    "action",
    [
        "The kitchen light is already on.",
        {"name": "reply", "arguments": {"text": "The kitchen light is already on."}},
        '{"name": "reply", "arguments": {"text": "The kitchen light is already on."}}',
        {
            "function": {
                "name": "reply",
                "arguments": '{"text": "The kitchen light is already on."}',
            }
        },
        {"name": "reply", "arguments": "The kitchen light is already on."},
        {"name": "reply", "arguments": '"The kitchen light is already on."'},
    ],
)
def test_a_reply_ends_the_episode(env: HomeEnv, action: Any) -> None:
    env.reset()
    observation, reward, terminated, truncated, info = env.step(action)
    assert json.loads(observation)["success"] is True
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["reply"] == "The kitchen light is already on."
    assert info["action"] == "reply"


def test_openai_style_tool_calls_are_accepted(env: HomeEnv) -> None:
    env.reset()
    action = {
        "type": "function",
        "function": {"name": "call_service", "arguments": json.dumps(TURN_ON_KITCHEN["arguments"])},
    }
    assert env.step(action)[1:3] == (1.0, True)


def test_a_question_without_conditions_ends_only_on_the_reply(home: Home) -> None:
    env = HomeEnv(home, Goal((), "Is the front door locked?"))
    env.reset()
    observation, reward, terminated, _, _ = env.step(
        {"name": "get_state", "arguments": {"entity_id": DOOR}}
    )
    assert json.loads(observation)["state"] == "locked"
    assert (reward, terminated) == (0.0, False)
    assert env.step("Yes, it is locked.")[2] is True


def test_episodes_are_truncated_at_max_turns(env: HomeEnv) -> None:
    env.reset()
    look = {"name": "describe", "arguments": {"entity_id": KITCHEN}}
    for turn in range(1, 6):
        observation, _, terminated, truncated, info = env.step(look)
        assert not terminated
        assert truncated is (turn == 5)
        assert info["turn"] == turn
    assert "turn_on" in json.loads(observation)["services"]


def test_reset_restores_the_start_and_leaves_the_callers_home_alone(home: Home) -> None:
    env = HomeEnv(home, GOAL)
    first = env.reset(seed=1)
    env.step(TURN_ON_KITCHEN)
    env.step(call("light", "turn_on", LOUNGE))
    assert home.state(KITCHEN).state == "off"
    second = env.reset(seed=1)
    assert second == first
    assert env.home.states == home.states
    assert env.step(TURN_ON_KITCHEN)[1:3] == (1.0, True)


def test_a_factory_makes_the_same_home_for_the_same_seed() -> None:
    seeds: list[int] = []

    def factory(seed: int) -> Home:
        seeds.append(seed)
        return make_home(seed % 3)

    env = HomeEnv(factory, GOAL)
    with pytest.raises(ResetNeeded):
        _ = env.home
    env.reset(seed=7)
    name = env.home.name
    env.step(TURN_ON_KITCHEN)
    env.reset(seed=7)
    assert env.home.name == name
    assert env.home.state(KITCHEN).state == "off"
    assert seeds[0] == seeds[1]
    env.reset()
    assert seeds[2] != seeds[1]


def test_a_home_file_is_loaded() -> None:
    env = HomeEnv(
        files("twin.examples") / "demo_home.yaml", ['state("switch.kettle_plug") == "off"']
    )
    env.reset()
    turn_off = call("switch", "turn_off", "switch.kettle_plug")
    assert env.step(turn_off)[1:3] == (1.0, True)


def test_bad_tasks_and_settings_are_refused_at_construction(home: Home) -> None:
    with pytest.raises(ConditionError):
        HomeEnv(home, ['state("light.attic") == "on"'])
    with pytest.raises(ConditionError):
        HomeEnv(home, ["state("])
    with pytest.raises(TypeError):
        HomeEnv(home, [3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        HomeEnv(42, GOAL)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_turns"):
        HomeEnv(home, GOAL, max_turns=0)
    with pytest.raises(ValueError, match="seconds_per_step"):
        HomeEnv(home, GOAL, seconds_per_step=-1)
    with pytest.raises(ValueError, match="Basic Multilingual Plane"):
        HomeEnv(home, Goal((KITCHEN_ON,), "Lights on \U0001f4a1"))
    assert HomeEnv(home, KITCHEN_ON).goal == Goal((KITCHEN_ON,))  # one condition alone


def test_step_before_reset_raises(env: HomeEnv) -> None:
    with pytest.raises(ResetNeeded):
        env.step(TURN_ON_KITCHEN)


def test_observations_always_fit_the_space(home: Home, monkeypatch: pytest.MonkeyPatch) -> None:
    home.add_entity(EntityEntry("switch.party", "Party \U0001f389 \ud83d"), "off")
    env = HomeEnv(home, GOAL)
    env.reset()
    observation = env.step({"name": "get_state", "arguments": {"entity_id": "switch.party"}})[0]
    assert observation in env.observation_space
    assert json.loads(observation)["attributes"]["friendly_name"] == "Party \U0001f389 \ud83d"
    monkeypatch.setattr(twin.env, "MAX_OBSERVATION", 200)
    observation, reward, *_ = env.step({"name": "list_entities", "arguments": {}})
    assert len(observation) <= 200
    assert json.loads(observation)["truncated"] is True
    assert reward == 0.0


def test_text_spaces_copy_and_pickle_cheaply_and_faithfully(env: HomeEnv) -> None:
    space = env.observation_space
    assert isinstance(space, BMPText)
    space.seed(5)
    twin_space = copy.deepcopy(space)
    assert twin_space == space
    assert twin_space.character_list is space.character_list  # shared, not copied
    assert twin_space.np_random is not space.np_random
    assert twin_space.sample() == space.sample()
    loaded = pickle.loads(pickle.dumps(space))
    assert loaded == space
    assert loaded.sample() == space.sample()
    assert loaded.character_index("é") == space.character_index("é")
    assert '{"entity_id":"light.küche","state":"°C"}\n' in loaded
    assert "\U0001f4a1" not in loaded


def test_simulated_time_moves_with_every_step(home: Home) -> None:
    load_catalog()["split_air_conditioner"].install(home, "ac", "Kitchen AC", "kitchen")
    home.call_service(
        "climate",
        "set_temperature",
        {"temperature": 16, "hvac_mode": "cool"},
        {"area_id": "kitchen"},
    )
    cool = 'num("sensor.kitchen_ac_inside_temperature") <= 19'
    env = HomeEnv(home, [cool], seconds_per_step=600, max_turns=30)
    env.reset()
    start = env.home.now
    look = {"name": "get_state", "arguments": {"entity_id": "climate.kitchen_ac"}}
    total = 0.0
    for turn in range(1, 31):
        _, reward, terminated, truncated, _ = env.step(look)
        total += float(reward)
        assert env.home.now == start + 600 * turn
        if terminated or truncated:
            break
    assert terminated
    assert total == 1.0
    env.reset()
    assert env.home.now == start


def test_importing_the_module_registers_the_env(home: Home) -> None:
    gym.register_envs(twin.env)  # once more, and silently (agent/test_envs: fresh processes)
    assert gym.registry[ENV_ID].entry_point == "twin.env:HomeEnv"
    env = gym.make(ENV_ID, home=home, goal=GOAL, max_turns=3)
    assert isinstance(env.unwrapped, HomeEnv)
    env.reset(seed=0)
    assert env.step(TURN_ON_KITCHEN)[1:3] == (1.0, True)
    env.close()


def run_vector(envs: gym.vector.VectorEnv, steps: int) -> tuple[int, float]:
    """Eight envs, each with its own policy: solve at once, solve after looking, reply, or fail."""
    look = {"name": "get_state", "arguments": {"entity_id": KITCHEN}}
    bad = {"name": "call_service", "arguments": {"domain": "shell_command", "service": "rm"}}
    plans = [
        [TURN_ON_KITCHEN],
        [look, TURN_ON_KITCHEN],
        ["Which light?"],
        [bad, look, look],
    ] * 2
    observations, _ = envs.reset(seed=11)
    assert observations == ("Turn on the kitchen light, please.",) * 8
    turns = [0] * 8
    episodes, total = 0, 0.0
    for _ in range(steps):
        actions = tuple(
            json.dumps(plan[turn % len(plan)]) for plan, turn in zip(plans, turns, strict=True)
        )
        observations, rewards, terminated, truncated, _ = envs.step(actions)
        for index in range(8):
            turns[index] += 1
            assert observations[index]
            if terminated[index] or truncated[index]:
                episodes += 1
                turns[index] = -1  # the next step only resets this env (next-step autoreset)
        total += float(rewards.sum())
    return episodes, total


@pytest.mark.parametrize(
    ("mode", "vector_kwargs"),
    [("sync", {}), ("async", {"shared_memory": False})],
)
def test_vectorised_envs_run_episodes(home: Home, mode: str, vector_kwargs: dict[str, Any]) -> None:
    assert pickle.loads(pickle.dumps(home)).states == home.states
    envs = gym.make_vec(
        ENV_ID,
        num_envs=8,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        home=home,
        goal=GOAL,
        max_turns=3,
    )
    try:
        episodes, total = run_vector(envs, steps=6)
    finally:
        envs.close()
    # In 6 steps (every other one a reset after an episode ends), for each of two copies: solving
    # at once ends 3 episodes (+1 each), solving after a look 2 (+1 each), replying 3 (0), and the
    # failing plan is truncated once (with two forbidden calls at -1.0).
    assert episodes == 2 * (3 + 2 + 3 + 1)
    assert total == 2 * (3 + 2 - 2.0)


def test_async_envs_refuse_shared_memory_that_would_freeze_observations(home: Home) -> None:
    with pytest.raises(ValueError, match="shared_memory=False") as caught:
        gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="async", home=home, goal=GOAL)
    assert 'vector_kwargs={"shared_memory": False}' in str(caught.value.__cause__)

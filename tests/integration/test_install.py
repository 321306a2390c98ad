"""The install a Home Assistant OS or Container user has: no homeflow in Home Assistant's Python,
no package registry (hass runs with --skip-pip, in a network namespace with loopback only).

From the release archive, unzipped as the README says, "Add integration → HomeFlow" creates a
home; from a plain copy of the repository's folder, it answers with a translated reason that
says what to install, never a bare server error.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import pytest_socket

from scripts.hass_server import HassServer, python_without_homeflow

REPO = Path(__file__).resolve().parents[2]
STRINGS = json.loads((REPO / "custom_components/homeflow/strings.json").read_text())


@pytest.fixture(autouse=True)
def unix_sockets() -> None:
    """The servers' bridges are unix sockets (Home Assistant's test plugin allows 127.0.0.1)."""
    pytest_socket.socket_allow_hosts(["127.0.0.1"], allow_unix_socket=True)


@pytest.fixture
def auto_enable_custom_integrations() -> None:
    """No Home Assistant in this process: the servers are others."""


def test_python_without_homeflow_lacks_it(tmp_path: Path) -> None:
    """The interpreter hass runs on with `without_homeflow` imports neither twin nor agent and
    knows no homeflow distribution, while Home Assistant imports."""
    python = python_without_homeflow(tmp_path / "python")
    code = (
        "import importlib.metadata as m, importlib.util as u, homeassistant\n"
        "print([n for n in ('twin', 'agent') if u.find_spec(n)], "
        "[d.name for d in m.distributions() if d.name == 'homeflow'])"
    )
    result = subprocess.run(
        [python, "-P", "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert result.stdout.strip() == "[] []"


def test_release_archive_installs_offline() -> None:
    """The archive carries what the integration imports: the config flow creates the home."""
    with HassServer(from_archive=True, without_homeflow=True) as server:
        token = server.onboard().access_token
        server.wait_until_running(token)
        entry = server.create_home(token, "Archive Home", seed=7, home_type="apartment")
        assert entry["state"] == "loaded"
        assert server.home_areas(token)


def test_plain_copy_says_what_to_install() -> None:
    """Without the package the flow aborts with the translated reason and its fix (status 200)."""
    with HassServer(without_homeflow=True) as server:
        token = server.onboard().access_token
        server.wait_until_running(token)
        answer = server.request(
            "POST", "/api/config/config_entries/flow", {"handler": "homeflow"}, token=token
        )
        with server.websocket(token) as ws:
            translations = ws.command(
                "frontend/get_translations",
                language="en",
                category="config",
                integration=["homeflow"],
            )["resources"]
    assert answer.status == 200
    assert answer.data["type"] == "abort"
    assert answer.data["reason"] == "package_missing"
    assert answer.data["description_placeholders"]["missing"] == "twin, agent"
    message = STRINGS["config"]["abort"]["package_missing"]
    assert translations["component.homeflow.config.abort.package_missing"] == message
    assert "homeflow.zip" in message

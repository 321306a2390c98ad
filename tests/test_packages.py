"""Packaging facts that must hold in both environments (.venv and Home Assistant's)."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_import_pulls_in_nothing_heavy() -> None:
    """twin and agent import inside Home Assistant's Python without torch or homeassistant."""
    heavy = "{'torch', 'transformers', 'trl', 'homeassistant'}"
    code = f"import sys, twin, agent, agent.cli\nprint(sorted({heavy} & set(sys.modules)) or '')"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == ""


def test_versions_agree() -> None:
    """The integration requires exactly the homeflow version this repository builds."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    manifest = json.loads((ROOT / "custom_components/homeflow/manifest.json").read_text())
    assert manifest["version"] == version
    assert f"homeflow=={version}" in manifest["requirements"]


def test_translations_match_strings() -> None:
    """The English translation is the source strings, as Home Assistant's tooling would make it."""
    component = ROOT / "custom_components/homeflow"
    strings = json.loads((component / "strings.json").read_text())
    assert json.loads((component / "translations/en.json").read_text()) == strings

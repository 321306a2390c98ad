"""The installed `homeflow` command."""

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from agent.cli import main


def test_console_script_lists_command_groups() -> None:
    """The console script is installed beside the interpreter and explains itself."""
    homeflow = Path(sys.executable).parent / "homeflow"
    result = subprocess.run([homeflow, "--help"], capture_output=True, text=True, check=True)
    for group in ("home", "data", "bench", "train"):
        assert group in result.stdout


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert "homeflow, version 0.1.0" in result.output


def test_unknown_command_is_an_error() -> None:
    result = CliRunner().invoke(main, ["fly"])
    assert result.exit_code == 2
    assert "No such command 'fly'" in result.output

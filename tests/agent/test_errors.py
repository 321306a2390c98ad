"""agent's errors have one root, AgentError, which the homeflow CLI reports without a traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from click.testing import CliRunner

import agent
import agent.flywheel.cli as flywheel_cli
from agent.bench.instances import BenchError
from agent.bench.report import ResultsError
from agent.cli import main
from agent.errors import AgentError
from agent.flywheel.blueprints import BlueprintError, SplitError
from agent.flywheel.datasets import DatasetError
from agent.policies.specs import SpecError
from agent.task import TaskError
from agent.training.common import TrainingError


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module under agent/, by its qualified name."""
    found = {}
    for info in pkgutil.walk_packages(agent.__path__, "agent."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            defined_here = inspect.isclass(value) and value.__module__ == module.__name__
            if defined_here and issubclass(value, BaseException):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_exception_class_under_agent_derives_from_the_root() -> None:
    classes = exception_classes()
    assert "agent.backends.home_assistant.HomeAssistantRequestError" in classes
    assert {name for name, cls in classes.items() if not issubclass(cls, AgentError)} == set()


@pytest.mark.parametrize(
    "error",
    [
        BenchError,
        BlueprintError,
        DatasetError,
        ResultsError,
        SpecError,
        SplitError,
        TaskError,
        TrainingError,
    ],
)
def test_errors_about_bad_data_stay_value_errors(error: type[AgentError]) -> None:
    assert issubclass(error, AgentError)
    assert issubclass(error, ValueError)


def test_the_cli_reports_an_agent_error_no_command_caught_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(seed: int) -> None:
        raise AgentError(f"profile {seed} could not be drawn; check profiles.yaml")

    monkeypatch.setattr(flywheel_cli, "make_profile", broken)
    result = CliRunner().invoke(main, ["data", "profiles", "--count", "1"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines()[-1] == (
        "Error: profile 0 could not be drawn; check profiles.yaml"
    )

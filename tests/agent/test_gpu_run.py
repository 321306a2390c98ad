"""bench/gpu_run.py, the recipe prepared for a GPU, run end to end on the CPU with a tiny model:
SFT on a flywheel dataset, then SmartHome-Bench and Assist-format cases, reported as markdown."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent.bench.instances import generate, write_bench

from .test_sft import cli_config, small  # noqa: F401 (the tiny model, a fixture)

ROOT = Path(__file__).parents[2]
EXTERNAL = ROOT / "agent" / "bench" / "external" / "berlin-altbau"


def test_the_gpu_recipe_trains_evaluates_and_reports_on_the_cpu(
    tmp_path: Path,
    small: tuple[Any, Any],  # noqa: F811
) -> None:
    pytest.importorskip("trl")
    config = cli_config(tmp_path, small, max_samples=2)
    write_bench(tmp_path / "bench", generate(7, held_out=7))
    cases = tmp_path / "cases" / "berlin-altbau"
    cases.mkdir(parents=True)
    for name in ("_fixtures.yaml", "schalter.yaml"):
        shutil.copy(EXTERNAL / name, cases / name)
    command = [sys.executable, str(ROOT / "bench" / "gpu_run.py"), "--config", str(config)]
    command += ["--data", str(tmp_path / "mcts"), "--bench", str(tmp_path / "bench")]
    command += ["--cases", str(tmp_path / "cases"), "--work", str(tmp_path / "work")]
    command += ["--max-steps", "1", "--subset", "1"]

    def report() -> list[str]:
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        return [line for line in done.stdout.splitlines() if line.startswith("| ")]

    rows = report()
    assert rows[0] == "| stage | what | seconds |"
    assert rows[1].startswith("| SFT | 1 steps, ")
    assert "tokens/s (median)" in rows[1]
    assert re.match(r"\| eval bench \| ID [\d.]+%, OOD [\d.]+%, overall [\d.]+%", rows[2])
    assert re.match(r"\| eval cases \| overall [\d.]+%", rows[3])
    assert (tmp_path / "work" / "sft" / "config.json").is_file()
    assert (tmp_path / "work" / "bench" / "results.json").is_file()
    again = report()  # a second run finds every stage done and reports the same scores
    assert [row.rsplit("|", 2)[0] for row in again] == [row.rsplit("|", 2)[0] for row in rows]

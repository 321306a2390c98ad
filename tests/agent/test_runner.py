"""The resumable runner: a killed run continues with nothing lost and nothing repeated, parallel
output equals serial output, Ctrl-C keeps what finished, and Ray runs the same work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agent.flywheel.blueprints import generate
from agent.flywheel.datasets import blueprint_record, read_rows
from agent.flywheel.runner import RunError, read_records, run

CONFIG = {"dataset": "test"}


def jobs(count: int) -> list[tuple[str, int]]:
    return [(str(seed), seed) for seed in range(count)]


def lines(directory: Path) -> list[str]:
    return [
        line
        for shard in (directory / "shards").glob("*.jsonl")
        for line in shard.read_text().split("\n")
    ]


def test_resume_after_a_killed_run(tmp_path: Path) -> None:
    """SIGKILL the CLI (and its workers) mid-run, cut its last line short, run it again: the
    union is the whole dataset, each seed once."""
    out = tmp_path / "bp"
    homeflow = Path(sys.executable).parent / "homeflow"
    command = [str(homeflow), "data", "blueprints", "--count", "300"]
    command += ["--workers", "2", "-o", str(out)]
    first = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len([line for line in lines(out) if line] if out.exists() else []) < 20:
        assert first.poll() is None, "the run finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    done = read_records(out)
    assert 20 <= len(done) < 300
    assert not (out / "blueprints.jsonl").exists()
    shard = next((out / "shards").glob("*.jsonl"))
    with shard.open("a") as file:  # a line cut short, as a kill mid-write leaves it
        file.write('{"key": "299", "seed": 299, "ro')
    second = subprocess.run(command, capture_output=True, text=True, check=False)
    assert second.returncode == 0, second.stderr
    records = read_records(out)
    keys = [json.loads(line)["key"] for line in lines(out) if line.endswith("}")]
    assert len(keys) == len(set(keys)) == 300  # nothing written twice, the cut line dropped
    assert {r["key"] for r in records} == {str(s) for s in range(300)}
    assert [r for r in records if r["key"] in {d["key"] for d in done}] == done
    expected = [b.seed for b in generate(range(300)).blueprints]
    assert [row["seed"] for row in read_rows(out / "blueprints.jsonl")] == expected


# Seconds that only a broken run waits out (one that never starts, stops or lets its workers go):
# the tests wait for events, and this ends a test that would otherwise hang.
PATIENCE = 300.0


def pid_then_block(directory: str, job: int) -> dict[str, int]:
    """Work that says which process runs it, then never ends: a run it is part of can only
    stop by giving up on it."""
    (Path(directory) / str(os.getpid())).touch()
    threading.Event().wait()
    return {"job": job}


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has exited; nobody may reap it in a container


def until(done: Callable[[], bool], what: str) -> None:
    """Wait for `done()`, which only a broken run leaves false for PATIENCE seconds."""
    deadline = time.monotonic() + PATIENCE
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@contextmanager
def driving(tmp_path: Path, count: int) -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    """A driver process running `count` never-ending jobs on 2 workers (it prints whether the
    run completed), once both workers have started: the driver and the workers' pids. The
    driver takes Ctrl-C as a terminal's foreground process does, even where this test runs with
    SIGINT ignored (a background job of a shell); it and its workers are killed on the way out."""
    pids = tmp_path / "pids"
    pids.mkdir()
    script = (
        "import signal\n"
        "from functools import partial\n"
        "from pathlib import Path\n"
        "from agent.flywheel.runner import run\n"
        "from tests.agent.test_runner import pid_then_block\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        f"work = partial(pid_then_block, {str(pids)!r})\n"
        f"jobs = [(str(n), n) for n in range({count})]\n"
        f"outcome = run(Path({str(tmp_path / 'run')!r}), jobs, work, {{}}, workers=2,"
        " progress=False)\n"
        "print(outcome.complete)\n"
    )
    driver = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=Path(__file__).parents[2],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, with its workers, to kill at the end
    )

    def started() -> bool:
        return len(list(pids.iterdir())) >= 2 or driver.poll() is not None

    try:
        until(started, "the workers did not start")
        assert driver.poll() is None, "the driver ended before its workers started"
        yield driver, [int(path.name) for path in pids.iterdir()]
    finally:
        with suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
        driver.communicate()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_exit_when_their_driver_is_killed(tmp_path: Path) -> None:
    """SIGKILL only the driver: its workers leave on their own instead of lingering."""
    with driving(tmp_path, 2) as (driver, workers):
        driver.kill()
        driver.wait()
        until(lambda: not any(map(running, workers)), "the workers outlived their driver")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_ends_a_parallel_run_at_once(tmp_path: Path) -> None:
    """SIGINT the driver of 2 workers busy with jobs that never end, more queued: it returns,
    its workers gone and no queued job started, instead of waiting for the jobs (forever)."""
    with driving(tmp_path, 6) as (driver, workers):
        driver.send_signal(signal.SIGINT)
        out, _ = driver.communicate(timeout=PATIENCE)
        assert out.strip() == "False"
        assert not any(map(running, workers))  # the driver ends its workers before it returns
        assert len(list((tmp_path / "pids").iterdir())) == 2  # no job started after Ctrl-C


def dies(seed: int) -> dict[str, Any]:
    """Work whose process is killed at job 3, as the out-of-memory killer does."""
    if seed == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"seed": seed}


def test_a_worker_that_dies_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"A worker process died.*fewer --workers"):
        run(tmp_path, jobs(6), dies, CONFIG, workers=2, progress=False)


def test_parallel_output_equals_serial(tmp_path: Path) -> None:
    work = partial(blueprint_record, error_rate=0.2)
    serial = run(tmp_path / "serial", jobs(30), work, CONFIG, workers=1, progress=False)
    parallel = run(tmp_path / "parallel", jobs(30), work, CONFIG, workers=2, progress=False)
    assert serial.complete
    assert parallel.complete
    as_set = {json.dumps(r, sort_keys=True) for r in serial.records}
    assert as_set == {json.dumps(r, sort_keys=True) for r in parallel.records}
    assert len(as_set) == 30


def interrupted(seed: int) -> dict[str, Any]:
    if seed == 5:
        raise KeyboardInterrupt
    return {"seed": seed, "rows": []}


def test_ctrl_c_keeps_what_finished_and_a_rerun_completes(tmp_path: Path) -> None:
    stopped = run(tmp_path, jobs(10), interrupted, CONFIG, workers=1, progress=False)
    assert not stopped.complete
    assert [r["key"] for r in stopped.records] == ["0", "1", "2", "3", "4"]
    resumed = run(tmp_path, jobs(10)[5:] + jobs(10), lambda s: {"seed": s}, CONFIG, workers=1)
    assert resumed.complete
    assert [r["key"] for r in resumed.fresh] == [str(s) for s in range(5, 10)]
    assert len(read_records(tmp_path)) == 10


def test_a_directory_of_another_run_is_refused(tmp_path: Path) -> None:
    run(tmp_path, jobs(2), lambda s: {"seed": s}, CONFIG, workers=1, progress=False)
    with pytest.raises(RunError, match="holds another run"):
        run(tmp_path, jobs(2), lambda s: {"seed": s}, {"dataset": "other"}, workers=1)
    assert len(read_records(tmp_path)) == 2


def test_ray_runs_the_same_work(tmp_path: Path) -> None:
    work = partial(blueprint_record, error_rate=0.2)
    local = run(tmp_path / "local", jobs(8), work, CONFIG, workers=1, progress=False)
    ray = run(tmp_path / "ray", jobs(8), work, CONFIG, ray=True, progress=False)
    assert ray.complete
    assert sorted(ray.records, key=lambda r: r["seed"]) == local.records

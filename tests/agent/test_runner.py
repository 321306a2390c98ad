"""The resumable runner: a killed run continues with nothing lost and nothing repeated, parallel
output equals serial output, Ctrl-C keeps what finished, and Ray runs the same work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
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


def pid_then_sleep(directory: str, job: int) -> dict[str, int]:
    """Work that says which process runs it, then takes a minute."""
    (Path(directory) / str(os.getpid())).touch()
    time.sleep(60)
    return {"job": job}


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has exited; nobody may reap it in a container


def driving(tmp_path: Path, count: int) -> tuple[subprocess.Popen[str], list[int]]:
    """A driver process running `count` minute-long jobs on 2 workers (it prints whether the
    run completed), once both workers have started: the driver and the workers' pids."""
    pids = tmp_path / "pids"
    pids.mkdir()
    script = (
        "from functools import partial\n"
        "from pathlib import Path\n"
        "from agent.flywheel.runner import run\n"
        "from tests.agent.test_runner import pid_then_sleep\n"
        f"work = partial(pid_then_sleep, {str(pids)!r})\n"
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
    )
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2:
        assert driver.poll() is None, "the driver ended before its workers started"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return driver, [int(path.name) for path in pids.iterdir()]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_exit_when_their_driver_is_killed(tmp_path: Path) -> None:
    """SIGKILL only the driver: its workers leave within seconds instead of lingering."""
    driver, workers = driving(tmp_path, 2)
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 10
    while any(map(running, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(running, workers))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_ends_a_parallel_run_at_once(tmp_path: Path) -> None:
    """SIGINT the driver of 2 workers with minute-long jobs queued: it returns within seconds,
    its workers gone, instead of running every job left and dropping their results."""
    driver, workers = driving(tmp_path, 6)
    stopped = time.monotonic()
    driver.send_signal(signal.SIGINT)
    out, _ = driver.communicate(timeout=30)
    assert time.monotonic() - stopped < 10
    assert out.strip() == "False"
    assert not any(map(running, workers))
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

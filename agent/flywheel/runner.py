"""Resumable, parallel generation: a work function over many jobs, each finished job saved at once.

A run lives in a directory: `manifest.json` (the config that defines the run) and `shards/`,
one JSONL file per session of the run, to which the driver appends each finished job's record
(`{"key", ...the work's result}`) as one line, flushed and fsynced. A kill loses only the jobs
in flight and at most a partial last line, which reading drops; running again reads every
shard, skips the keys done, and appends only new keys, so nothing is lost and nothing repeated.

The work runs in a process pool by default (workers ignore Ctrl-C, the driver stops cleanly,
keeping what finished and ending the workers; a worker whose driver was killed exits rather than
linger), in-process with one worker, or as Ray tasks (`ray=True`, on the cluster at RAY_ADDRESS,
else a local one). The driver does all the writing, so Ray tasks on other nodes need no shared
disk. The work function must be importable at module level (a functools.partial of one is
fine) and return JSON-able dicts.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import IO, Any

from rich.progress import Progress

from twin.atomic import write_text

from ..errors import AgentError

Record = dict[str, Any]
Work = Callable[[Any], Record]
RAY_HINT = "Ray is not installed: pip install 'homeflow[cluster]' (or pip install ray)"


class RunError(AgentError):
    """A run that cannot start or continue: another run's directory, Ray missing, a failed job."""


@dataclass(frozen=True)
class Outcome:
    """How a session of a run ended."""

    records: list[Record]
    fresh: list[Record]  # this session's
    complete: bool
    seconds: float


def read_records(directory: Path) -> list[Record]:
    """Every finished record of the run in `directory`, the first of each key, by key order of
    completion; a line cut short by a kill is dropped."""
    seen: dict[str, Record] = {}
    for shard in sorted((directory / "shards").glob("*.jsonl")):
        with shard.open(encoding="utf-8") as file:
            for line in file:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the partial last line of a killed session
                seen.setdefault(record["key"], record)
    return list(seen.values())


def run(
    directory: Path,
    jobs: Sequence[tuple[str, Any]],
    work: Work,
    config: Mapping[str, Any],
    *,
    workers: int | None = None,
    ray: bool = False,
    progress: bool = True,
    description: str = "jobs",
) -> Outcome:
    """Do `work(payload)` for every (key, payload) of `jobs` not yet done in `directory`.

    `config` is what defines the run (not how it is run); a directory that holds a run of
    another config is refused. Ctrl-C ends the session with what finished kept
    (`complete` False); a worker that dies (killed, out of memory) is a RunError, with what
    finished kept too.
    """
    started = time.perf_counter()
    _claim(directory, config)
    done = {record["key"] for record in read_records(directory)}
    unique = dict(jobs)  # a key given twice is done once
    todo = [(key, payload) for key, payload in unique.items() if key not in done]
    complete = True
    fresh: list[Record] = []
    with _shard(directory) as shard, Progress(disable=not progress) as bar:
        task = bar.add_task(description, total=len(unique), completed=len(unique) - len(todo))
        try:
            for key, result in _results(todo, work, workers, ray):
                record = {"key": key, **result}
                shard.write(json.dumps(record, ensure_ascii=False) + "\n")
                shard.flush()
                os.fsync(shard.fileno())
                fresh.append(record)
                bar.advance(task)
        except KeyboardInterrupt:
            complete = False
        except BrokenProcessPool as err:
            raise RunError(
                f"A worker process died ({err}); what finished is kept. If it ran out of "
                "memory, run the same command again with fewer --workers"
            ) from err
    records = read_records(directory)
    return Outcome(records, fresh, complete, time.perf_counter() - started)


def _claim(directory: Path, config: Mapping[str, Any]) -> None:
    """Start a run in `directory`, or check that it holds this same run."""
    manifest = directory / "manifest.json"
    wanted = json.loads(json.dumps(dict(config)))
    if manifest.exists():
        held = json.loads(manifest.read_text(encoding="utf-8"))
        if held != wanted:
            raise RunError(
                f"{directory} holds another run ({held}); use a new directory to run {wanted}"
            )
        return
    (directory / "shards").mkdir(parents=True, exist_ok=True)
    write_text(manifest, json.dumps(wanted, indent=2) + "\n")


@contextmanager
def _shard(directory: Path) -> Iterator[IO[str]]:
    """This session's own shard file."""
    name = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl"
    path = directory / "shards" / name
    with path.open("a", encoding="utf-8") as file:
        yield file
    if path.stat().st_size == 0:
        path.unlink()


def _results(
    jobs: Sequence[tuple[str, Any]], work: Work, workers: int | None, ray: bool
) -> Iterator[tuple[str, Record]]:
    """(key, record) for each job, in the order they finish."""
    if ray:
        yield from _ray_results(jobs, work)
    elif workers == 1 or len(jobs) <= 1:
        for key, payload in jobs:
            yield key, work(payload)
    else:
        yield from _pool_results(jobs, work, workers)


def _pool_results(
    jobs: Sequence[tuple[str, Any]], work: Work, workers: int | None
) -> Iterator[tuple[str, Record]]:
    # Spawned, not forked: the driver may hold threads (the progress bar) and event loops.
    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=_worker, initargs=(os.getpid(),)
    )
    pending: dict[Future[Record], str] = {}
    try:
        for key, payload in jobs:
            pending[pool.submit(work, payload)] = key
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield pending.pop(future), future.result()
    except BaseException:
        # Stopped (Ctrl-C, a failed job, the caller done), even while submitting: the rest is
        # not wanted, nor waited for.
        _terminate(pool, pending)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _terminate(pool: ProcessPoolExecutor, pending: Iterable[Future[Record]]) -> None:
    """Cancel the jobs not started and end the workers, whose results would be dropped."""
    for future in pending:
        future.cancel()
    if hasattr(pool, "terminate_workers"):  # Python 3.14+
        pool.terminate_workers()
        return
    for process in list((pool._processes or {}).values()):
        process.terminate()


def _worker(driver: int) -> None:
    """Leave Ctrl-C to the driver, which stops the run and keeps what finished; exit once the
    driver is gone (killed), instead of holding a model's memory for nothing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_without, args=(driver,), daemon=True).start()


def _exit_without(driver: int) -> None:
    while os.getppid() == driver:
        time.sleep(1)
    os._exit(1)


def _ray_results(jobs: Sequence[tuple[str, Any]], work: Work) -> Iterator[tuple[str, Record]]:
    try:
        import ray  # type: ignore[import-not-found, unused-ignore]
    except ImportError as err:
        raise RunError(RAY_HINT) from err
    started = not ray.is_initialized()
    if started:
        ray.init(address=os.environ.get("RAY_ADDRESS"))
    remote = ray.remote(_call)  # a function itself: Ray refuses a functools.partial
    pending = {remote.remote(work, payload): key for key, payload in jobs}
    try:
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1)
            for ref in finished:
                yield pending.pop(ref), ray.get(ref)
    finally:
        for ref in pending:
            ray.cancel(ref)
        if started:
            ray.shutdown()


def _call(work: Work, payload: Any) -> Record:
    return work(payload)

"""Parallelism: benchmark folders shared among this process and forked workers (largest first, each
claiming the next), and workers stopped at once on Ctrl-C or a failure."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..model import (
    BenchmarkFolder,
)
from ..rule import EngineContext
from .context import Host

#: What a forked worker inherits: the host, the context, the folders, the work, the position of the
#: next folder nobody has claimed and the order of claims, largest first (set just before the pool
#: starts). Only an index goes to a worker
#: and only the work's plain results come back, so nothing a plugin or the model holds ever needs
#: to be picklable on the way in.
_WORKER: tuple[Any, EngineContext, list[BenchmarkFolder], Callable[..., Any], Any, list[int]] | None = None
#: Called with (result files done, of all) as folders are done (`each_folder`).
Progress = Callable[[int, int], None]


def _claimed_folders(
    first: int | None, progress: Progress | None = None, others: int = 0
) -> tuple[int, list[tuple[int, Any]]]:
    """Does the `first`-largest folder, then claims the next unclaimed one until none is left: so the
    processes share the work however unequal the folders are (one bert folder of a round holds
    more records than a hundred others), the largest first, so that none is left to one process
    at the end."""
    assert _WORKER is not None
    host, context, folders, work, claimed, order = _WORKER
    done: list[tuple[int, Any]] = []
    position = first
    while True:
        if position is None:
            with claimed.get_lock():
                position = claimed.value
                claimed.value += 1
        if position >= len(order):
            return os.getpid(), done
        index = order[position]
        done.append((index, work(folders[index], host, context)))
        position = None
        if progress is not None:  # this process's view: every folder claimed but the `others` may work on
            _claims_done(progress, folders, order, claimed, others)


def files_of(folder: BenchmarkFolder) -> int:
    return len(folder.result_files)


def _claims_done(
    progress: Progress, folders: list[BenchmarkFolder], order: list[int], claimed: Any, others: int
) -> None:
    """Reports as done the folders claimed before the last `others` (which other processes may still
    work on): an estimate, which the final count after the pool corrects."""
    with claimed.get_lock():
        claims = min(claimed.value, len(order))
    finished = order[: max(0, claims - others)]
    progress(sum(files_of(folders[i]) for i in finished), sum(files_of(folder) for folder in folders))


@dataclass
class FolderRun:
    """The outputs of the work on every folder, in folder order, and how they were computed."""

    outputs: list[Any]
    processes: frozenset[int]  # the process ids that did the work
    fallback: str | None = None  # why the work ran in one process although more were asked for


def parallel_fallback() -> str | None:
    """Why this platform checks in one process whatever --jobs says, or None."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this platform cannot fork worker processes; benchmark folders were checked in one process"
    return None


def _worker_signals() -> None:
    """In each forked worker: Ctrl-C (which a terminal sends to the whole process group) is the
    main process's to handle, which then stops the workers; SIGTERM ends a worker at once, whatever
    handler it inherited from the main process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


#: How long stopped workers get to end before they are killed.
STOP_GRACE_SECONDS = 2.0


def _stop_workers(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    """Ends the pool's worker processes now, not after the work they claimed (the executor's own
    shutdown waits for it): SIGTERM, then SIGKILL for any still there after a grace period."""
    # A second Ctrl-C while the workers are stopped waits until they are: it must not leave one.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        _end_processes(pool)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _end_processes(pool: concurrent.futures.ProcessPoolExecutor) -> None:
    # Python 3.14 has pool.terminate_workers(); up to 3.13 the processes are only reachable here.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
    pool.shutdown(wait=True, cancel_futures=True)


def each_folder(
    folders: list[BenchmarkFolder],
    host: Host,
    context: EngineContext,
    jobs: int,
    work: Callable[[BenchmarkFolder, Any, EngineContext], Any],
    progress: Progress | None = None,
) -> FolderRun:
    """`work(folder, host, context)` for each folder, in folder order: here, or here and in `jobs - 1`
    forked processes (which inherit the host, context and folders, so plugins need not be picklable).
    This process works too: `jobs` processes on `jobs` cores, not one more idling beside them (and
    holding its share of memory). `progress(done, total)` counts result files, in this process."""
    global _WORKER
    fallback = parallel_fallback() if jobs > 1 else None
    if jobs <= 1 or len(folders) < 2 or fallback:
        results_here = []
        total, files_done = sum(files_of(folder) for folder in folders), 0
        for folder in folders:
            results_here.append(work(folder, host, context))
            files_done += files_of(folder)
            if progress is not None:
                progress(files_done, total)
        return FolderRun(results_here, frozenset({os.getpid()}), fallback)
    fork = multiprocessing.get_context("fork")
    workers = min(jobs, len(folders)) - 1
    # each worker starts with a folder of its own, so every process does some of the work
    order = sorted(range(len(folders)), key=lambda i: -sum(entry.size_bytes for entry in folders[i].result_files))
    _WORKER = (host, context, folders, work, fork.Value("q", workers + 1), order)
    pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=fork, initializer=_worker_signals)
    try:
        futures = [pool.submit(_claimed_folders, index + 1) for index in range(workers)]
        results = [_claimed_folders(0, progress, workers)] + [future.result() for future in futures]
    except BaseException:  # Ctrl-C, SIGTERM or a failure: no worker outlives this process's work
        _stop_workers(pool)
        raise
    else:
        pool.shutdown()
    finally:
        _WORKER = None
    outputs: list[Any] = [None] * len(folders)
    for _, done in results:
        for index, output in done:
            outputs[index] = output
    return FolderRun(outputs, frozenset(pid for pid, done in results if done))

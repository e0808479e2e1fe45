"""Spreading independent jobs over the CPU cores (used by `flash_attention`).

NumPy releases the GIL inside BLAS calls and inside ufunc loops over large
arrays, so plain Python threads can keep every core busy as long as each job
is mostly big array operations. Two things make that work in practice:

- BLAS is limited to one thread while our workers run. Otherwise each worker's
  matrix product would start BLAS's own threads as well, and on a machine with
  two cores four busy threads fight over them (measured: up to 10x slower).
- Jobs are handed out one at a time from a shared queue rather than split in
  fixed shares up front, so a worker whose core is busy with something else
  simply takes fewer jobs instead of holding everybody up at the end.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import ThreadpoolController

_controller: ThreadpoolController | None = None
_controller_lock = threading.Lock()


def cpu_count() -> int:
    """The number of cores this process may run on (at least 1)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # sched_getaffinity is Linux-only
        return os.cpu_count() or 1


def _blas() -> ThreadpoolController:
    """The (cached) handle on the BLAS libraries NumPy has loaded."""
    global _controller
    with _controller_lock:
        if _controller is None:
            _controller = ThreadpoolController()  # inspects the loaded libraries once (~2 ms)
        return _controller


def run_jobs(jobs: Iterable, make_worker: Callable[[], Callable], n_workers: int) -> None:
    """Call `worker(job)` for every job, with `n_workers` threads sharing the jobs.

    `make_worker()` is called once per thread and returns that thread's
    `worker`, so each thread can own its scratch buffers. Jobs must be
    independent (they may run in any order, on any thread). With one worker,
    everything runs in the calling thread and BLAS keeps its own threads.
    An exception in any job is raised here once all threads have stopped.
    """
    jobs = list(jobs)
    n_workers = max(1, min(n_workers, len(jobs)))
    if n_workers == 1:
        worker = make_worker()
        for job in jobs:
            worker(job)
        return

    todo: queue.SimpleQueue = queue.SimpleQueue()
    for job in jobs:
        todo.put(job)
    failed = threading.Event()  # one worker failed: the others stop taking jobs

    def drain() -> None:
        worker = make_worker()
        try:
            while not failed.is_set():
                try:
                    job = todo.get_nowait()
                except queue.Empty:
                    return
                worker(job)
        except BaseException:
            failed.set()
            raise

    with _blas().limit(limits=1, user_api="blas"), ThreadPoolExecutor(n_workers) as pool:
        futures = [pool.submit(drain) for _ in range(n_workers)]
    for future in futures:
        future.result()  # re-raises a worker's exception

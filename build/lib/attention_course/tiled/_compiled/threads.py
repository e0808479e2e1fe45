"""Spreading independent jobs over the CPU cores (used by `driver`).

NumPy releases the GIL inside BLAS calls and inside ufunc loops over large
arrays, so plain Python threads can keep every core busy as long as each job
is mostly big array operations. Two things make that work in practice:

- BLAS is limited to one thread while the jobs run, even with a single
  worker. A tile-sized matrix product gains little from BLAS's threads, and on
  a busy machine those threads wait for each other, which made tiled attention
  many times slower when BLAS could start its own threads next to ours.
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

from ..._cpus import available_cores

_controller: ThreadpoolController | None = None
_controller_lock = threading.Lock()


def cpu_count() -> int:
    """How many threads to use: the cores this process may run on, at most OMP_NUM_THREADS.

    Like OpenMP-based libraries, a positive OMP_NUM_THREADS caps the threads
    (the course's grading sandbox sets it to 1: one thread per process).
    """
    cores = available_cores()
    limit = os.environ.get("OMP_NUM_THREADS", "").strip()
    if limit.isdigit() and int(limit) > 0:
        cores = min(cores, int(limit))
    return cores


def _blas() -> ThreadpoolController:
    """The (cached) handle on the BLAS libraries NumPy has loaded."""
    global _controller
    with _controller_lock:
        if _controller is None:
            _controller = ThreadpoolController()  # inspects the loaded libraries once, not per call
        return _controller


def forget_blas_libraries() -> None:
    """Inspect the loaded libraries again on the next `run_jobs`: call it after loading another BLAS."""
    global _controller
    with _controller_lock:
        _controller = None


def run_jobs(jobs: Iterable, make_worker: Callable[[], Callable], n_workers: int) -> None:
    """Call `worker(job)` for every job, with `n_workers` threads sharing the jobs.

    `make_worker()` is called once per thread and returns that thread's
    `worker`, so each thread can own its scratch buffers. Jobs must be
    independent (they may run in any order, on any thread). With one worker,
    everything runs in the calling thread. BLAS runs single-threaded until all
    jobs are done. An exception in any job is raised here once all threads
    have stopped.
    """
    jobs = list(jobs)
    n_workers = max(1, min(n_workers, len(jobs)))
    if n_workers == 1:
        worker = make_worker()
        with _blas().limit(limits=1, user_api="blas"):
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

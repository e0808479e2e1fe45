"""A worker seen from outside, with psutil: its processes, their memory, and what is still running at the end.

`SandboxProcesses` is a bubblewrap sandbox. bwrap writes the outer pid of
the sandbox's first process (its reaper, pid 1 inside) to its info pipe; the
grader opens a pidfd on it, checks with psutil that it is bwrap's own child
(so that a reused pid is never signalled) and from then on reads, with
psutil, every process under it: the worker (pid 2 inside) and whatever the
notebook started, orphans included, since the sandbox's first process adopts
them. A SIGKILL through the pidfd ends the whole PID namespace.

`LoneProcess` is a worker without a sandbox (`--no-sandbox`): one process,
whose own resident memory is watched.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from dataclasses import dataclass
from typing import Callable

import psutil

from .bubblewrap import WORK

LIST_SECONDS = 1.0
"""How often the sandbox's processes are listed again (psutil reads every process of the machine to do it),
unless the worker says the notebook started one; their memory is read as often as the supervisor asks."""


@dataclass(frozen=True)
class Leftover:
    """A process still running in the sandbox when the worker had finished."""

    command: str
    """Its command line (shortened); "" for a copy of the worker itself (the notebook called `os.fork()`), whose
    command line is the grader's own."""
    detached: bool
    """It had left the worker's session or been orphaned (setsid, a double fork, nohup ... &)."""
    step: tuple[str, int] | None
    """The cell or call during which it started, when known."""


class SandboxProcesses:
    """The processes of one bubblewrap sandbox (see the module docstring); `bwrap` is the pid of bwrap itself."""

    def __init__(self, bwrap: int):
        self._bwrap = bwrap
        self._info = bytearray()
        self._first: psutil.Process | None = None
        self._pidfd: int | None = None
        self._worker_found: psutil.Process | None = None
        self._listed: list[psutil.Process] = []
        self._listed_at: float | None = None  # None: not watched yet (the worker is not ready)
        self.peak = 0
        """The most processes seen running at once (the sandbox's first process aside)."""

    def add_info(self, chunk: bytes) -> None:
        """Bytes from bwrap's info pipe; once its JSON is whole, a pidfd on the sandbox's first process."""
        self._info += chunk
        if self._first is not None:
            return
        try:
            info = json.loads(bytes(self._info))
        except ValueError:
            return  # not complete yet
        pid = info.get("child-pid") if isinstance(info, dict) else None
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
            return
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return
        try:
            first = psutil.Process(pid)
            mine = first.ppid() == self._bwrap
        except psutil.Error:
            mine = False
        if not mine:  # the pid was reused: never signal a stranger
            os.close(fd)
            return
        self._first, self._pidfd = first, fd

    def alive(self) -> bool:
        """Whether the sandbox's first process is known and still running (its pidfd not yet readable)."""
        return self._pidfd is not None and not _exited(self._pidfd)

    def _worker(self, processes: list[psutil.Process]) -> psutil.Process | None:
        """The worker among `processes`: the first the sandbox started (older than anything the notebook started,
        orphans the sandbox's first process adopted included)."""
        if self._worker_found is None:
            try:
                started = [p for p in processes[1:] if p.ppid() == self._first.pid]
                self._worker_found = min(started, key=lambda p: p.create_time(), default=None)
            except psutil.Error:
                pass
        return self._worker_found

    def processes(self) -> list[psutil.Process] | None:
        """The sandbox's first process and every process under it, or None if the sandbox cannot be seen (any more)."""
        if not self.alive():
            return None
        try:
            found = [self._first, *self._first.children(recursive=True)]
        except psutil.Error:
            return None
        return found if self.alive() else None  # its pid may have been reused while we read: trust nothing

    def started_more(self) -> None:
        """The notebook started a process (its worker says so): list them again at the next `memory`."""
        self._listed_at = float("-inf")

    def memory(self, limit: int) -> int | None:
        """Bytes the sandbox's processes hold together: resident, or shared pages counted once when that is over.

        The processes are those listed at most LIST_SECONDS ago, or since the
        notebook last started one (`started_more`); when their total is over
        `limit`, they are listed again before anything is said. The worker
        alone never needs it: its address space is limited to `limit` (see
        `bubblewrap.py`), so the first listing waits LIST_SECONDS.
        """
        processes, fresh = self._listing()
        resident = _resident(processes)
        if resident is not None and resident > limit and not fresh:  # a process started since may hold more
            processes, fresh = self._listing(now=True)
            resident = _resident(processes)
        if resident is None or resident <= limit or len(processes) <= 2:
            return resident
        # Forked children share their parent's pages: count each page once, in shares (PSS), before killing.
        shares = [_quietly(lambda p=p: p.memory_full_info().pss, None) for p in processes]
        return resident if None in shares or not self.alive() else sum(shares)

    def _listing(self, now: bool = False) -> tuple[list[psutil.Process] | None, bool]:
        """(`processes()` as listed at most LIST_SECONDS ago, or `now`; whether it was listed by this call)."""
        if self._listed_at is None:  # the worker has just become ready: it runs alone
            self._listed_at = time.monotonic()
        fresh = now or time.monotonic() - self._listed_at >= LIST_SECONDS
        if fresh:
            listed = self.processes()
            if listed is None:
                return None, True
            self._listed, self._listed_at = listed, time.monotonic()
            self.peak = max(self.peak, len(listed) - 1)
        return (self._listed if self.alive() else None), fresh

    def leftovers(self, step_at: Callable[[float], tuple[str, int] | None]) -> list[Leftover]:
        """What still runs besides the worker: its command, whether it left the worker's session, and the step
        `step_at` finds for when it started (in seconds since the machine booted, the clock of the worker's steps)."""
        processes = self.processes() or []
        worker = self._worker(processes) if processes else None
        own = _quietly(lambda: worker.cmdline(), None) if worker is not None else None
        found = []
        for p in processes[1:]:
            if worker is not None and p.pid == worker.pid:
                continue
            try:
                with p.oneshot():
                    if p.status() == psutil.STATUS_ZOMBIE:  # finished, only not reaped
                        continue
                    detached = (worker is None or os.getsid(p.pid) != os.getsid(worker.pid)
                                or p.ppid() == self._first.pid)
                    line = p.cmdline()
                    command = "" if own and line == own else " ".join(line) or p.name()  # a fork: the grader's line
                    started = p.create_time() - psutil.boot_time()
            except (psutil.Error, OSError):  # ended while we looked
                continue
            found.append(Leftover(command[:120], detached, step_at(started)))
        return found if self.alive() else []

    def descriptor(self, number: int) -> str | None:
        """What the worker's file descriptor `number` is (`pipe:[inode]`), "" if closed, None if it cannot be seen."""
        processes, _ = self._listing(now=self._worker_found is None)
        worker = self._worker(processes) if processes else None
        return None if worker is None or not self.alive() else _descriptor(worker.pid, number)

    def files(self) -> list[str]:
        """The files the notebook left in its working folder, read through the sandbox's root."""
        return _list_files(f"/proc/{self._first.pid}/root{WORK}") if self.alive() else []

    def kill(self) -> None:
        """SIGKILL to the sandbox's first process: the kernel then ends every process of its PID namespace."""
        if self._pidfd is not None:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except OSError:
                pass

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


class LoneProcess:
    """A worker run without a sandbox, in `folder` (its `work/` holds the notebook): one process, watched from outside."""

    peak = 0

    def __init__(self, pid: int, folder: str):
        self._pid, self._folder = pid, folder
        self._process = _quietly(lambda: psutil.Process(pid), None)

    def memory(self, limit: int) -> int | None:
        return None if self._process is None else _quietly(lambda: self._process.memory_info().rss, None)

    def descriptor(self, number: int) -> str | None:
        return _descriptor(self._pid, number)

    def started_more(self) -> None:
        pass  # its own memory is all that is watched

    def files(self) -> list[str]:
        return _list_files(os.path.join(self._folder, "work"))

    def leftovers(self, step_at) -> list[Leftover]:
        return []  # nothing holds them together to be listed: they are the machine's


def _resident(processes: list[psutil.Process] | None) -> int | None:
    """The resident bytes of these processes together (those that have ended count 0), or None for no list."""
    return None if processes is None else sum(_quietly(lambda p=p: p.memory_info().rss, 0) for p in processes)


def _quietly(read, default):
    """`read()`, or `default` if its process has ended or may not be read."""
    try:
        return read()
    except psutil.Error:
        return default


def _descriptor(pid: int, number: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{number}")
    except FileNotFoundError:
        return ""  # closed
    except OSError:
        return None  # cannot be seen: say nothing


def _exited(pidfd: int) -> bool:
    """Whether the process behind a pidfd has ended (its pidfd is readable then)."""
    try:
        return bool(select.select([pidfd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


FILES_LISTED = 1000
"""The most files of a working folder listed (a notebook that wrote more is said to have written at least as many)."""


def _list_files(folder: str, limit: int = FILES_LISTED) -> list[str]:
    """Paths (relative to `folder`) of up to `limit` files found in it (never following a link)."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found.append(os.path.relpath(os.path.join(root, name), folder))
            if len(found) >= limit:
                return found
    return found

"""One worker process: start it in its sandbox, watch it from outside, stop it, say how it ended.

`WorkerProcess` starts the worker (`worker.py`) inside a bubblewrap sandbox
(`bubblewrap.py`; or, without one, in an empty temporary folder and its own
process group), sends it the notebook's cells and the calls to make, and
reads its output and its result channel as they come, from one thread with
`selectors`: nothing it reads can block it. `channel.Reports` checks that
each frame arrives in its turn; `tree.py` looks at the sandbox's processes
from outside, with psutil. The whole sandbox is killed (through the first
process of its PID namespace, so that every process the notebook started
dies with it) when a cell or a call overruns its time limit by more than the
grace period, when the notebook's time budget runs out, when the sandbox's
processes together use more memory than allowed, or when the result channel
carries anything but the worker's frames. A worker given checks to follow
up waits after its calls for the grader's answer, written on its stdin
after the request: which checks failed (the caller's `Judge` of the calls,
asked through `to_follow`; none: the worker is done at once). When the worker
is done, the grader notes what the notebook wrote and left running, then
kills it. `runner.py` decides what to do next.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Protocol

from ...checks.engine.calls import Observation
from ..status import Finding, Stop
from . import bubblewrap
from .bubblewrap import Bubblewrap
from .channel import Call, Follow, Reports, StepKind
from .protocol import CHANNEL_LOST, ProtocolError, encode, pack_value
from .tree import Leftover, LoneProcess, SandboxProcesses

GiB = 1 << 30
MiB = 1 << 20
DRAIN_SECONDS = 1.0
"""How long the grader keeps reading a killed worker's pipes before it closes them."""
POLL_SECONDS = 0.2
"""How often the sandbox's processes are counted and their memory added up."""
_WORKER = "from attention_course.grading.run.sandbox.worker import main; main()"


class Judge(Protocol):
    """What tells a waiting worker which follow-ups to make: the grader's judgement of its calls (`judge.Verdicts`).
    The sandbox never judges, and a verdict's reasons never reach it: only the indices chosen."""

    def to_follow(self, follows: tuple[Follow, ...], observed: dict[int, Observation]) -> Iterable[int]:
        """The indices of `follows` to make, given every call's observation so far (call id -> Observation)."""


@dataclass(frozen=True)
class Limits:
    """How much one notebook may use."""

    cell_seconds: float = 20.0
    """Time limit for one code cell."""
    call_seconds: float = 10.0
    """Time limit for one call of a student's function by the grader."""
    notebook_seconds: float = 240.0
    """Time budget for the whole notebook, restarts included."""
    memory_bytes: int = 2 * GiB
    """Memory of the notebook: the address space of each of its processes, and their resident memory together."""
    file_bytes: int = 64 * MiB
    """Largest file the notebook may write."""
    scratch_bytes: int = 256 * MiB
    """Size of the sandbox's writable folder (its working folder, home and temporary files together)."""
    processes: int = 64
    """Processes (and threads) the notebook may run at once, in the sandbox."""
    output_bytes: int = 20_000
    """How much of the notebook's printed output is kept for the report."""
    restarts: int = 4
    """How many times a notebook whose process died is run again."""
    grace_seconds: float = 3.0
    """How long past a time limit the worker may take before it is killed."""
    startup_seconds: float = 60.0
    """Time for the worker to start (import numpy and IPython)."""
    follow_seconds: float = 5.0
    """Time for the worker's closer look at one failed check (`run.search`: a helper swapped, smaller inputs); 0
    for none (the batch's feedback then lacks the helper at fault and the smallest failing input)."""


class Output:
    """Keeps the first `limit` bytes of a stream and counts the rest."""

    def __init__(self, limit: int):
        self.limit = limit
        self.kept = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


class WorkerProcess:
    """One worker process running the notebook until it finishes or dies (see the module docstring).

    `skip`: code cells not to run (they killed an earlier attempt); `pending`:
    the calls still to make; `deadline`: when the notebook's time budget ends
    (time.monotonic); `output` keeps what it prints. `sandbox` is the
    bubblewrap to run it in (None: an unsandboxed process); `notebook` the
    submitted file, copied into the worker's folder; `provided` the names the
    exercise lets the notebook take from `attention_course`; `started` a worker
    `start_worker` started with the same sandbox and notebook (None: `run`
    starts one); `follows` the checks whose failures it may follow up after the
    calls, and `judge` which of them to (`Judge.to_follow`, given the
    observations of `earlier` workers' calls and this one's, once it made every
    call; None: all of them, the worker's own verdict deciding). Only those
    whose every call this worker made are asked for.
    """

    def __init__(self, cells: list[str], skip, pending: list[Call], limits: Limits, deadline: float, output: Output,
                 *, sandbox: Bubblewrap | None = None, notebook: str | Path | None = None, provided: tuple = (),
                 started: Started | None = None, follows: tuple[Follow, ...] = (), judge: Judge | None = None,
                 earlier: dict[int, Observation] | None = None):
        self.cells_src, self.skip, self.pending = cells, set(skip), pending
        self.limits, self.deadline, self.output = limits, deadline, output
        self.sandbox, self.notebook, self.provided = sandbox, notebook, tuple(provided)
        self.follows, self._judge, self._earlier = follows, judge, dict(earlier or {})
        self._given = started
        self._to_send = memoryview(b"")  # what is left to write on the worker's stdin: the request, then the answer
        self._last = not follows  # whether the stdin is closed once it is written (the answer is the last thing)
        self.reports = Reports(len(cells), self.skip, pending, limits.cell_seconds, limits.grace_seconds,
                               len(follows), limits.follow_seconds)
        """What the worker reported: its cells, its calls' observations, what its watch saw."""
        self.kill: Stop | None = None
        """Why the grader stopped the process, if it did."""
        self.reason = ""
        """How it ended, for people: what overran, or how it died; "" when it finished."""
        self.files_written: list[str] = []
        self.leftovers: list[Leftover] = []
        self.peak_processes = 0
        self._tree: SandboxProcesses | LoneProcess | None = None
        self._started = 0  # processes the worker said the notebook started, when the sandbox was last listed
        self._channel = (-1, 0)  # the result channel's descriptor number in the worker, and the pipe's inode

    finished = property(lambda self: self.reports.finished, doc="Whether the worker reported every cell and call.")
    step = property(lambda self: self.reports.step, doc="The cell or call running when the process ended.")
    cells = property(lambda self: self.reports.cells, doc="Code-cell index -> what happened to it.")
    observations = property(lambda self: self.reports.observations, doc="Call id -> what the call did.")
    alerts = property(lambda self: self.reports.alerts, doc="What the worker's watch saw the notebook try.")
    counts = property(lambda self: self.reports.counts, doc="Step -> how many findings of each kind.")
    follow_ups = property(lambda self: self.reports.follow_ups,
                          doc="Index in `follows` -> what the worker's follow-up found, its cases as call ids.")
    waited = property(lambda self: self.reports.waiting,
                      doc="Whether the worker made every call and waited for the grader's answer on what to follow up.")

    def run(self) -> None:
        """Run the worker to its end (or the grader's kill), then clean up everything it left."""
        started, self._given = self._given, None
        started = started or start_worker(self.limits, sandbox=self.sandbox, notebook=self.notebook)
        started.taken = True
        proc = started.proc
        self._channel = started.channel
        self._tree = SandboxProcesses(proc.pid) if self.sandbox else LoneProcess(proc.pid, started.folder)
        selector = selectors.DefaultSelector()
        try:
            self._watch(proc, selector, started.result_r, started.info_r, self._request(started.writable), started.at)
            if self.finished:
                self._look_inside()
        finally:
            self._end(proc, selector, [started.result_r, started.info_r])
            if self.sandbox:
                self._tree.close()
            if started.folder:
                _remove(started.folder)

    def _request(self, writable: list[str]) -> bytes:
        """The one frame the worker reads: the cells, the calls (their arguments as arrays), what to watch."""
        arrays: dict = {}
        calls_json = [
            {"id": c.id, "group": c.group, "function": c.function,
             "args": [pack_value(a, arrays) for a in c.args],
             "kwargs": {k: pack_value(v, arrays) for k, v in c.kwargs.items()},
             "seconds": c.seconds, "measure_memory": c.measure_memory}
            for c in self.pending
        ]
        request = {"cells": self.cells_src, "skip": sorted(self.skip), "cell_seconds": self.limits.cell_seconds,
                   "calls": calls_json, "provided": list(self.provided), "writable": writable,
                   "course": _course_paths(self.notebook), "visible": bubblewrap.visible(),
                   "processes": self.limits.processes, "follow_seconds": self.limits.follow_seconds,
                   "follow": [{"exercise": f.exercise, "check": f.check, "calls": list(f.calls), "cases": list(f.cases),
                               "seconds": f.seconds, "check_file": f.check_file} for f in self.follows]}
        return encode(request, arrays)

    # --- watching -----------------------------------------------------------------------------------

    def _watch(self, proc: subprocess.Popen, selector, result_r: int, info_r: int | None, request: bytes,
               started: float) -> None:
        """Send the request, read everything the worker writes, and stop it as soon as it overruns (`started`: when
        the worker was started, time.monotonic)."""
        for fd, name in [(result_r, "result"), (proc.stdout.fileno(), "output")] + (
                [(info_r, "info")] if info_r is not None else []):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ, name)
        os.set_blocking(proc.stdin.fileno(), False)
        self._write(proc, selector, request)
        next_poll = 0.0
        while True:
            for key, _ in selector.select(timeout=0.02):
                if key.data == "request":
                    self._send_some(proc, selector)
                else:
                    self._read(selector, key)
            try:
                self.reports.parse()
                if self.reports.flooded:
                    raise ProtocolError("more data than any answer needs")
            except ProtocolError as err:
                return self._stop(proc, Stop.CHANNEL, f"interfered with the grader's result channel ({err})")
            if self.reports.waiting and self.reports.asked is None:
                self._answer(proc, selector)
            if self.finished or _ended(proc):
                return
            overdue = self._overdue(started)
            if overdue is not None:
                return self._stop(proc, *overdue)
            if self.reports.ready and time.monotonic() >= next_poll:  # before, only the worker's imports run
                next_poll = time.monotonic() + POLL_SECONDS
                started = sum(a.kind == Finding.PROCESS for a in self.reports.alerts)
                if started > self._started:  # the notebook started processes: look for them at once
                    self._started = started
                    self._tree.started_more()
                used = self._tree.memory(self.limits.memory_bytes)
                self.peak_processes = self._tree.peak
                if used is not None and used > self.limits.memory_bytes:
                    together = " (its processes together)" if self.sandbox is not None else ""
                    return self._stop(proc, Stop.MEMORY,
                                      f"used more than {size_text(self.limits.memory_bytes)} of memory{together}")

    def _overdue(self, started: float) -> tuple[Stop, str] | None:
        """(why, what to say) if the worker must be stopped for time (or for a result channel it took away)."""
        now = time.monotonic()
        if not self.reports.ready and now - started > self.limits.startup_seconds:
            return Stop.TIME, "did not start in time"
        if (self.step is not None or self.reports.answered) and now > self.reports.deadline:
            if self._channel_replaced():
                return Stop.CHANNEL, ("interfered with the grader's result channel (it closed or replaced its "
                                      "descriptor, so the worker's reports never came)")
            if self.step is None:  # told what to follow up, it neither began nor said it was done
                return Stop.TIME, "did not go on when the grader answered it"
            limit = {StepKind.CELL: self.limits.cell_seconds, StepKind.FOLLOW: self.limits.follow_seconds}.get(
                self.step[0]) or self._call_seconds(self.step[1])
            return Stop.TIME, f"ran past its {limit:g} s time limit and did not stop when told to"
        if now > self.deadline:
            return Stop.TIME, f"ran past the notebook's {self.limits.notebook_seconds:g} s time budget"
        return None

    def _answer(self, proc, selector) -> None:
        """Tell the waiting worker which checks to follow up: those the judge chooses (all without one) of the ones
        whose every call it made; it follows up those alone, and says it is done at once if there are none."""
        made = set(self.observations)
        chosen = (range(len(self.follows)) if self._judge is None
                  else self._judge.to_follow(self.follows, {**self._earlier, **self.observations}))
        follow = sorted({i for i in chosen if 0 <= i < len(self.follows) and set(self.follows[i].calls) <= made})
        self.reports.answer(follow)
        self._last = True
        self._write(proc, selector, encode({"follow": follow}))

    def _write(self, proc, selector, data: bytes) -> None:
        """Queue `data` for the worker's stdin, written as the pipe has room (`_send_some`): nothing blocks."""
        if proc.stdin.closed:  # a write failed: the worker is gone, nothing will read it
            return
        if not self._to_send:
            selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "request")
        self._to_send = memoryview(bytes(self._to_send) + data)

    def _send_some(self, proc, selector) -> None:
        """Write what the pipe takes of what is queued; when all is written, stop waiting for room, and close the
        pipe after the last thing the worker is sent (the request, or the answer when it has follow-ups)."""
        try:
            self._to_send = self._to_send[os.write(proc.stdin.fileno(), self._to_send[:1 << 16]):]
        except BlockingIOError:
            return
        except OSError:  # the worker died at once; _watch sees it
            self._to_send = memoryview(b"")
            self._last = True
        if not self._to_send:
            selector.unregister(proc.stdin.fileno())
            if self._last:
                proc.stdin.close()

    def _read(self, selector, key) -> None:
        try:
            chunk = os.read(key.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            selector.unregister(key.fd)
        elif key.data == "output":
            self.output.add(chunk)
        elif key.data == "result":
            self.reports.add(chunk)
        elif key.data == "info":
            self._tree.add_info(chunk)

    def _channel_replaced(self) -> bool:
        """Whether the worker's descriptor of the result channel is no longer the grader's pipe (closed, dup2'ed)."""
        number, inode = self._channel
        link = self._tree.descriptor(number)
        return link is not None and link != f"pipe:[{inode}]"

    def _call_seconds(self, call_id: int) -> float:
        return next((c.seconds for c in self.pending if c.id == call_id), self.limits.call_seconds)

    def _look_inside(self) -> None:
        """At the end: the files the notebook wrote and the processes it left running."""
        copy = bubblewrap.safe_name(str(self.notebook)) if self.notebook is not None else None
        self.files_written = [f for f in self._tree.files() if f != copy]
        self.leftovers = self._tree.leftovers(self.reports.step_at)

    # --- stopping -----------------------------------------------------------------------------------

    def _stop(self, proc: subprocess.Popen, kind: Stop, reason: str) -> None:
        self.kill, self.reason = kind, reason
        self._kill(proc)

    def _kill(self, proc: subprocess.Popen) -> None:
        """Kill the sandbox through its PID namespace's first process, and the process group we started.

        The process we started is not reaped before this (see `_ended`), so its
        pid, which is its group's id, cannot have been given to another process.
        """
        if self.sandbox:
            self._tree.kill()
        if proc.returncode is None:
            try:  # the worker (or bwrap) leads its own process group, made for it by Popen
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _end(self, proc: subprocess.Popen, selector, fds: list[int | None]) -> None:
        """Kill the worker and its sandbox, read what is left for a moment, close everything, say how it ended."""
        self._kill(proc)
        self._drain(selector)
        for key in list(selector.get_map().values()):
            selector.unregister(key.fileobj)
        selector.close()
        for fd in fds:
            if fd is not None:
                _close(fd)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # stuck in the kernel; the kill is on its way
            pass
        try:
            self.reports.parse()
            if self.finished and self.reports.unread:  # the worker writes each frame whole: someone else wrote these
                raise ProtocolError(f"{self.reports.unread} bytes that make no frame came after the worker's last one")
        except ProtocolError as err:
            self.kill = self.kill or Stop.CHANNEL
            self.reason = self.reason or f"interfered with the grader's result channel ({err})"
        lost = _exit_status(proc.returncode, self.sandbox is not None) == CHANNEL_LOST
        if not self.finished and not self.reason and lost:
            self.kill = Stop.CHANNEL
            self.reason = ("interfered with the grader's result channel (it closed or replaced its descriptor, so the "
                           "worker could not report)")
        if not self.finished and not self.reason:
            if self.sandbox is not None and not self.reports.ready and proc.returncode not in (None, 0):
                self.kill = Stop.SANDBOX
                self.reason = "could not start its sandbox: " + (self.output.text().strip().splitlines() or ["?"])[-1]
            else:
                self.reason = _death(proc.returncode, self.sandbox is not None)

    def _drain(self, selector) -> None:
        """Read what the killed worker left in its pipes, for at most DRAIN_SECONDS: then stop, whoever holds them."""
        end = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < end:
            reading = [k for k in selector.get_map().values() if k.data in ("output", "result")]
            if not reading:
                return
            for key, _ in selector.select(timeout=0.05):
                if key.data in ("output", "result"):
                    self._read(selector, key)


@dataclass
class Started:
    """A worker process started before its request (`start_worker`): it starts its interpreter, imports the
    package and IPython and makes its shell, then waits for the request on its stdin."""

    proc: subprocess.Popen
    info_r: int | None
    """bwrap's info pipe (None unsandboxed)."""
    result_r: int
    """The grader's end of the result channel."""
    channel: tuple[int, int]
    """The result channel's descriptor number in the worker, and the pipe's inode."""
    folder: str | None
    """The worker's temporary folder, unsandboxed (None in a sandbox)."""
    writable: list[str]
    """Where the worker may write."""
    at: float
    """When it was started (time.monotonic)."""
    taken: bool = False
    """Whether a `WorkerProcess` took it (then that one ends it, and `discard` does nothing)."""

    def discard(self) -> None:
        """End a worker that was not given a request (no code of the notebook has run in it); nothing once taken."""
        if self.taken:
            return
        self.taken = True
        try:  # bwrap (or the worker) leads its own process group, made for it by Popen; the sandbox dies with bwrap
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # stuck in the kernel; the kill is on its way
            pass
        for fd in (self.result_r, self.info_r):
            if fd is not None:
                _close(fd)
        if self.folder:
            _remove(self.folder)


def start_worker(limits: Limits, *, sandbox: Bubblewrap | None = None, notebook: str | Path | None = None) -> Started:
    """Start a worker in the sandbox (or, with `sandbox=None`, in an empty temporary folder), `notebook` copied into
    its folder; `WorkerProcess(..., started=...)` sends it its request. A worker that will not get one is ended with
    `Started.discard()`."""
    folder = None if sandbox else tempfile.mkdtemp(prefix="attention-course-grading-")
    result_r, result_w = os.pipe()
    channel = (result_w, os.fstat(result_r).st_ino)
    child_fds = [result_w]
    info_r = None
    try:
        if sandbox is None:
            work, home, tmp = (os.path.join(folder, name) for name in ("work", "home", "tmp"))
            for path in (work, home, tmp):
                os.mkdir(path)
            if notebook is not None:
                shutil.copyfile(notebook, os.path.join(work, bubblewrap.safe_name(str(notebook))))
            argv, cwd, writable = _python(), work, [folder]
        else:
            home, tmp = bubblewrap.HOME, bubblewrap.TMP
            info_r, info_w = os.pipe()
            child_fds.append(info_w)
            copy = None
            if notebook is not None:
                copy = (os.open(notebook, os.O_RDONLY), str(notebook))
                child_fds.append(copy[0])
            argv, options = sandbox.hidden(sandbox.command(
                _python(), memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes,
                processes=limits.processes, scratch_bytes=limits.scratch_bytes, info_fd=info_w,
                notebook=copy, uid=None if sandbox.user_namespace else bubblewrap.new_uid()))
            child_fds.append(options)
            cwd, writable = "/", [bubblewrap.SCRATCH]
        env = _child_env(home, tmp, result_w, limits, sandboxed=sandbox is not None)
        at = time.monotonic()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, pass_fds=child_fds, start_new_session=True)
    except BaseException:
        for fd in (result_r, info_r):
            if fd is not None:
                _close(fd)
        if folder:
            _remove(folder)
        raise
    finally:
        for fd in child_fds:
            _close(fd)
    return Started(proc, info_r, result_r, channel, folder, writable, at)


def _python() -> list[str]:
    """The worker's command: this interpreter, isolated from the user's site-packages and the working folder."""
    return [sys.executable, "-s", "-B", "-P", "-c", _WORKER]


def _ended(proc: subprocess.Popen) -> bool:
    """Whether the process has ended, without reaping it (so its pid stays its own until `wait`)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _child_env(home: str, tmp: str, result_fd: int, limits: Limits, *, sandboxed: bool) -> dict[str, str]:
    """A small environment: nothing of the grader's secrets, one thread per process."""
    keep = ("LANG", "LC_ALL", "LC_CTYPE", "SYSTEMROOT") + (() if sandboxed else ("PATH", "LD_LIBRARY_PATH", "COVERAGE_PROCESS_START"))
    env = {k: os.environ[k] for k in keep if k in os.environ}
    package_root = str(bubblewrap.package_dir().parent)  # inside the sandbox it holds the package alone
    if sandboxed:
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    env.update(
        HOME=home, TMPDIR=tmp, IPYTHONDIR=os.path.join(home, ".ipython"),
        MPLCONFIGDIR=os.path.join(home, ".matplotlib"), MPLBACKEND="Agg", NUMBA_CACHE_DIR=os.path.join(home, ".numba"),
        PYTHONPATH=os.pathsep.join(p for p in (package_root, "" if sandboxed else os.environ.get("PYTHONPATH", "")) if p),
        PYTHONNOUSERSITE="1", PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1",
        OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1",
        ATTENTION_COURSE_RESULT_FD=str(result_fd),
        ATTENTION_COURSE_MEMORY=str(limits.memory_bytes),
        ATTENTION_COURSE_FILE_SIZE=str(limits.file_bytes),
    )
    return env


def _course_paths(notebook) -> list[str]:
    """Folders whose files the notebook is not given: the course's checkout, the submissions beside it."""
    paths = []
    root = bubblewrap.course_root()
    if root is not None:
        paths.append(str(root))
    if notebook is not None:
        paths.append(str(Path(notebook).resolve().parent))
    return paths


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _exit_status(returncode: int | None, sandboxed: bool) -> int | None:
    """The worker's own exit status (negative: the signal that killed it), as Popen gives it without a sandbox."""
    if sandboxed and returncode is not None and returncode > 128:  # bwrap: a command killed by signal N exits 128 + N
        return 128 - returncode
    return returncode


def _death(returncode: int | None, sandboxed: bool = False) -> str:
    """How a process that ended by itself ended, for people."""
    returncode = _exit_status(returncode, sandboxed)
    if returncode is None:
        return "stopped"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return {"SIGSEGV": "crashed (segmentation fault)", "SIGKILL": "was killed (SIGKILL)",
                "SIGABRT": "aborted"}.get(name, f"was stopped by {name}")
    if returncode == 1:  # what Python exits with after an error the worker's own code could not survive
        return "ended the process (exit code 1: os._exit(1), or an error that broke the worker itself, say builtins replaced)"
    return f"ended the process (exit code {returncode}, as os._exit does)"


def _remove(folder: str) -> None:
    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=_force_remove)
    else:
        shutil.rmtree(folder, onerror=_force_remove)


def _force_remove(func, path, _error) -> None:
    """rmtree's error handler: make read-only files and folders removable, then retry."""
    try:
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)
    except OSError:
        pass


def size_text(n: int) -> str:
    """A number of bytes for people: 1.5 MB, 20.0 kB, 12 bytes."""
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= factor:
            return f"{n / factor:.1f} {unit}"
    return f"{n} bytes"

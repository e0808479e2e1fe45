"""One worker process: start it in a sandbox, watch it, collect what it reports.

`WorkerProcess` starts the worker (`worker.py`) inside a bubblewrap sandbox
(`bubblewrap.py`; or, without one, in an empty temporary folder and its own
process group), sends it the notebook's cells and the calls to make, and reads
its reports and its output as they come, from one thread with `selectors`:
nothing it reads can block it. It kills the whole sandbox (through the first
process of its PID namespace, so that every process the notebook started dies
with it) when a cell or a call overruns its time limit by more than the grace
period, when the notebook's time budget runs out, when the sandbox's processes
together use more memory than allowed, or when the result channel carries
anything but the grader's frames. When the worker is done, the grader looks at
what is still running in the sandbox and what the notebook wrote, then kills
it. `runner.py` decides what to do next.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ...checks.engine.calls import Observation
from . import bubblewrap
from .bubblewrap import Bubblewrap
from ..status import Stop
from .protocol import MAX_BLOB, MAX_HEADER, ProtocolError, decode, encode, pack_value, unpack_observation

GiB = 1 << 30
MiB = 1 << 20
MAX_UNREAD = MAX_BLOB + MAX_HEADER + MiB
"""Bytes of result channel held unparsed before the worker counts as flooding it."""
DRAIN_SECONDS = 1.0
"""How long the grader keeps reading a killed worker's pipes before it closes them."""
POLL_SECONDS = 0.2
"""How often the sandbox's processes are counted and their memory added up."""
_WORKER = "from attention_course.grading.kit.sandbox.worker import main; main()"


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


@dataclass(frozen=True)
class Call:
    """One call the grader wants made: `function(*args, **kwargs)`."""

    id: int
    """Identifies the call's result."""
    group: str
    """Calls of one check share a group: after a timeout, the rest of the group is skipped."""
    function: str
    """Name of the student's function in the notebook's namespace."""
    args: tuple
    """Positional arguments (arrays and plain numbers)."""
    kwargs: dict = field(default_factory=dict)
    """Keyword arguments (plain values)."""
    seconds: float = 10.0
    """Time limit of the call."""
    measure_memory: bool = False
    """Measure the call's peak memory."""


@dataclass(frozen=True)
class CellReport:
    """What happened to one code cell."""

    index: int
    """Position among the notebook's code cells, from 0."""
    status: str
    """ok, error, timeout, memory, exit, killed (the process died in it) or skipped."""
    error: str = ""
    """The exception or what happened."""
    stop: Stop | None = None
    """For a cell whose process was killed: why the grader stopped it (None: it died by itself)."""


@dataclass(frozen=True)
class Alert:
    """Something the notebook tried, as its worker's watch saw it (see `audit.py`)."""

    kind: str
    """One of `audit.KINDS`: signal, network, process, write outside, course files, read outside, tampered, ..."""
    detail: str
    """What exactly, e.g. "SIGKILL to process 1 (its parent)"."""
    step: tuple[str, int] | None
    """("cell", index) or ("call", id) during which it happened; None between them."""


@dataclass(frozen=True)
class Leftover:
    """A process still running in the sandbox when the worker had finished."""

    command: str
    """Its command line (shortened)."""
    detached: bool
    """It had left the worker's session or been orphaned (setsid, a double fork, nohup ... &)."""
    step: tuple[str, int] | None
    """The cell or call during which it started, when known."""


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

    `sandbox` is the bubblewrap to run it in (None: an unsandboxed process);
    `notebook` the submitted file, copied into the worker's folder; `provided`
    the names the exercise lets the notebook take from `attention_course`.
    """

    def __init__(self, cells, skip, pending, limits: Limits, deadline: float, output: Output, *,
                 sandbox: Bubblewrap | None = None, notebook: str | Path | None = None, provided: tuple = ()):
        self.cells_src, self.skip, self.pending = cells, set(skip), pending
        self.limits, self.deadline, self.output = limits, deadline, output
        self.sandbox, self.notebook, self.provided = sandbox, notebook, tuple(provided)
        self.cells: dict[int, CellReport] = {}
        self.observations: dict[int, Observation] = {}
        self.finished = False
        self.ready = False
        self.step: tuple[str, int] | None = None
        self.step_deadline = 0.0
        self.reason = ""
        self.kill: Stop | None = None  # why the grader stopped the process, if it did
        self.files_written: list[str] = []
        self.alerts: list[Alert] = []
        self.counts: dict[tuple[str, int] | None, Counter] = {}
        self.leftovers: list[Leftover] = []
        self.peak_processes = 0
        # The worker reports cells in order, then calls in order, each once: a frame out of turn is forged.
        self._cells_left = set(range(len(cells))) - self.skip
        self._calls_left = {c.id for c in pending}
        self._channel = (-1, 0)
        self._buffer = bytearray()
        self._pos = 0
        self._flooded = False
        self._timeline: list[tuple[float, tuple[str, int]]] = []
        self._worker_pid = 2
        self._init_pid: int | None = None
        self._init_fd: int | None = None
        self._info = bytearray()
        self._proc_pid: int | None = None

    # --- running ------------------------------------------------------------------------------------

    def run(self) -> None:
        """Run the worker to its end (or the grader's kill), then clean up everything it left."""
        folder = None if self.sandbox else tempfile.mkdtemp(prefix="attention-course-grading-")
        result_r, result_w = os.pipe()
        self._channel = (result_w, os.fstat(result_r).st_ino)  # its number in the worker, and the pipe's identity
        try:
            proc, info_r, request = self._start(folder, result_w)
        except BaseException:
            _close(result_r)
            if folder:
                _remove(folder)
            raise
        selector = selectors.DefaultSelector()
        try:
            self._watch(proc, selector, result_r, info_r, request)
            if self.finished:
                self._look_inside(folder)
        finally:
            self._end(proc, selector, [result_r, info_r, self._init_fd])
            if folder:
                _remove(folder)

    def _start(self, folder: str | None, result_w: int) -> tuple[subprocess.Popen, int | None, bytes]:
        """Start the worker, in the sandbox or in `folder`: (its process, bwrap's info pipe, the request)."""
        child_fds = [result_w]
        info_r = None
        try:
            if self.sandbox is None:
                work, home, tmp = (os.path.join(folder, name) for name in ("work", "home", "tmp"))
                for path in (work, home, tmp):
                    os.mkdir(path)
                if self.notebook is not None:
                    shutil.copyfile(self.notebook, os.path.join(work, bubblewrap._safe_name(str(self.notebook))))
                argv, cwd, writable = self._python(), work, [folder]
            else:
                home, tmp = bubblewrap.HOME, bubblewrap.TMP
                info_r, info_w = os.pipe()
                child_fds.append(info_w)
                copy = None
                if self.notebook is not None:
                    copy = (os.open(self.notebook, os.O_RDONLY), str(self.notebook))
                    child_fds.append(copy[0])
                limits = self.limits
                argv = self.sandbox.command(
                    self._python(), memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes,
                    processes=limits.processes, scratch_bytes=limits.scratch_bytes, info_fd=info_w, notebook=copy,
                    uid=None if self.sandbox.user_namespace else bubblewrap.new_uid())
                cwd, writable = "/", [bubblewrap.SCRATCH]
            env = _child_env(home, tmp, result_w, self.limits, sandboxed=self.sandbox is not None)
            request = self._request(writable)
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, pass_fds=child_fds, start_new_session=True)
        except BaseException:
            if info_r is not None:
                _close(info_r)
            raise
        finally:
            for fd in child_fds:
                _close(fd)
        self._proc_pid = proc.pid
        return proc, info_r, request

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
            self._parse()
        except ProtocolError as err:
            self.kill = self.kill or Stop.CHANNEL
            self.reason = self.reason or f"interfered with the grader's result channel ({err})"
        if not self.finished and not self.reason:
            if self.sandbox is not None and not self.ready and proc.returncode not in (None, 0):
                self.kill = Stop.SANDBOX
                self.reason = "could not start its sandbox: " + (self.output.text().strip().splitlines() or ["?"])[-1]
            else:
                self.reason = _death(proc.returncode, self.sandbox is not None)

    def _python(self) -> list[str]:
        flags = ["-s", "-B"] + (["-P"] if sys.version_info >= (3, 11) else [])
        return [sys.executable, *flags, "-c", _WORKER]

    def _request(self, writable: list[str]) -> bytes:
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
                   "course": _course_paths(self.notebook), "visible": bubblewrap.visible()}
        return encode(request, arrays)

    def _watch(self, proc: subprocess.Popen, selector, result_r: int, info_r: int | None, request: bytes) -> None:
        for fd, name in [(result_r, "result"), (proc.stdout.fileno(), "output")] + (
                [(info_r, "info")] if info_r is not None else []):
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ, name)
        os.set_blocking(proc.stdin.fileno(), False)
        selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, "request")
        pending = memoryview(request)
        started = time.monotonic()
        next_poll = 0.0
        while True:
            for key, _ in selector.select(timeout=0.02):
                if key.data == "request":
                    pending = self._send_some(proc, selector, pending)
                else:
                    self._read(selector, key)
            try:
                self._parse()
                if self._flooded:
                    raise ProtocolError("more data than any answer needs")
            except ProtocolError as err:
                self._stop(proc, Stop.CHANNEL, f"interfered with the grader's result channel ({err})")
                return
            if self.finished or _ended(proc):
                return
            now = time.monotonic()
            if not self.ready and now - started > self.limits.startup_seconds:
                self._stop(proc, Stop.TIME, "did not start in time")
                return
            if self.step is not None and now > self.step_deadline:
                if self._channel_replaced(proc):
                    self._stop(proc, Stop.CHANNEL, "interfered with the grader's result channel (it closed or replaced "
                                                "its descriptor, so the worker's reports never came)")
                    return
                kind = "cell" if self.step[0] == "cell" else "call"
                limit = self.limits.cell_seconds if kind == "cell" else self._call_seconds(self.step[1])
                self._stop(proc, Stop.TIME, f"ran past its {limit:g} s time limit and did not stop when told to")
                return
            if now > self.deadline:
                self._stop(proc, Stop.TIME, f"ran past the notebook's {self.limits.notebook_seconds:g} s time budget")
                return
            if now >= next_poll:
                next_poll = now + POLL_SECONDS
                used = self._memory(proc)
                if used is not None and used > self.limits.memory_bytes:
                    together = " (its processes together)" if self.sandbox is not None else ""
                    self._stop(proc, Stop.MEMORY, f"used more than {size_text(self.limits.memory_bytes)} of memory{together}")
                    return

    def _send_some(self, proc, selector, pending: memoryview) -> memoryview:
        try:
            pending = pending[os.write(proc.stdin.fileno(), pending[:1 << 16]):]
        except BlockingIOError:
            return pending
        except OSError:  # the worker died at once; _watch sees it
            pending = pending[len(pending):]
        if not pending:
            selector.unregister(proc.stdin.fileno())
            proc.stdin.close()
        return pending

    def _read(self, selector, key) -> None:
        try:
            chunk = os.read(key.fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            selector.unregister(key.fd)
            return
        if key.data == "output":
            self.output.add(chunk)
        elif key.data == "result":
            if len(self._buffer) - self._pos > MAX_UNREAD:
                self._flooded = True  # keep draining so the worker never blocks, but drop it
            else:
                self._buffer += chunk
        elif key.data == "info":
            self._info += chunk
            self._open_init()

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

    def _channel_replaced(self, proc: subprocess.Popen) -> bool:
        """Whether the worker's descriptor of the result channel is no longer the grader's pipe (closed, dup2'ed)."""
        number, inode = self._channel
        if self.sandbox is None:
            where = f"/proc/{proc.pid}/fd/{number}"
        elif self._init_fd is not None and not _exited(self._init_fd):
            where = f"/proc/{self._init_pid}/root/proc/{self._worker_pid}/fd/{number}"
        else:
            return False
        try:
            return os.readlink(where) != f"pipe:[{inode}]"
        except FileNotFoundError:
            return True  # closed
        except OSError:
            return False  # cannot be seen: say nothing

    def _call_seconds(self, call_id: int) -> float:
        return next((c.seconds for c in self.pending if c.id == call_id), self.limits.call_seconds)

    # --- killing ------------------------------------------------------------------------------------

    def _stop(self, proc: subprocess.Popen, kind: Stop, reason: str) -> None:
        self.kill, self.reason = kind, reason
        self._kill(proc)

    def _kill(self, proc: subprocess.Popen) -> None:
        """Kill the sandbox through its PID namespace's first process, and the process group we started.

        The process we started is not reaped before this (see `_ended`), so its
        pid, which is its group's id, cannot have been given to another process.
        """
        if self._init_fd is not None:
            try:
                signal.pidfd_send_signal(self._init_fd, signal.SIGKILL)
            except (ProcessLookupError, OSError):
                pass
        if proc.returncode is None:
            try:  # the worker (or bwrap) leads its own process group, made for it by Popen
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _open_init(self) -> None:
        """From bwrap's info, a pidfd on the sandbox's first process (checked to be bwrap's own child)."""
        if self._init_pid is not None:
            return
        try:
            info = json.loads(bytes(self._info))
        except ValueError:
            return  # not complete yet
        pid = info.get("child-pid") if isinstance(info, dict) else None
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 1:
            return
        self._init_pid = pid
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return
        if _parent(pid) != self._proc_pid:  # the pid was reused: never signal a stranger
            os.close(fd)
            return
        self._init_fd = fd

    # --- looking inside the sandbox -----------------------------------------------------------------

    def _processes(self) -> list[dict] | None:
        """The sandbox's processes as its own /proc shows them, or None if it cannot be seen (any more).

        Only once the worker is ready: until then the sandbox's first process may still see the host's /proc.
        """
        if not self.ready or self._init_fd is None or _exited(self._init_fd):
            return None
        base = f"/proc/{self._init_pid}/root/proc"
        found = []
        try:
            names = [n for n in os.listdir(base) if n.isdigit()]
        except OSError:
            return None
        for name in names:
            info = _stat(f"{base}/{name}")
            if info is not None:
                info["command"] = _cmdline(f"{base}/{name}") or info["comm"]
                found.append(info)
        if _exited(self._init_fd):  # its pid may have been reused while we read: trust nothing
            return None
        return found

    def _memory(self, proc: subprocess.Popen) -> int | None:
        if self.sandbox is None:
            return _resident_bytes(proc.pid)
        processes = self._processes()
        if processes is None:
            return None
        self.peak_processes = max(self.peak_processes, len(processes) - 1)  # without bwrap's own first process
        resident = sum(p["rss"] for p in processes)
        if resident <= self.limits.memory_bytes or len(processes) <= 2:
            return resident
        # Forked children share their parent's pages: count each page once, in shares (PSS), before killing.
        base = f"/proc/{self._init_pid}/root/proc"
        shares = [_proportional(f"{base}/{p['pid']}") for p in processes]
        return resident if None in shares or _exited(self._init_fd) else sum(shares)

    def _look_inside(self, folder: str | None) -> None:
        """At the end: the files the notebook wrote and the processes it left running."""
        if self.sandbox is None:
            self.files_written = _list_files(os.path.join(folder, "work"))
        elif self._init_fd is not None and not _exited(self._init_fd):
            self.files_written = _list_files(f"/proc/{self._init_pid}/root{bubblewrap.WORK}")
        copy = bubblewrap._safe_name(str(self.notebook)) if self.notebook is not None else None
        self.files_written = [f for f in self.files_written if f != copy]
        processes = self._processes() if self.sandbox is not None else None
        if not processes:
            return
        worker = next((p for p in processes if p["pid"] == self._worker_pid), None)
        for p in processes:
            if p["pid"] in (1, self._worker_pid) or p["state"] == "Z":  # a zombie is finished, only not reaped
                continue
            detached = worker is None or p["session"] != worker["session"] or p["ppid"] == 1
            self.leftovers.append(Leftover(p["command"][:120], detached, self._step_at(p["start"])))

    def _step_at(self, started: float) -> tuple[str, int] | None:
        step = None
        for t, s in self._timeline:
            if t <= started + 0.01:
                step = s
        return step

    # --- the result channel -------------------------------------------------------------------------

    def _parse(self) -> None:
        """Handle every complete frame received so far."""
        while True:
            frame = decode(self._buffer, self._pos)
            if frame is not None and frame[2] > 1 << 20:  # forget what was read
                del self._buffer[:frame[2]]
                frame = (*frame[:2], 0)
            if frame is not None:
                self._pos = frame[2]
            if frame is None:
                return
            self._handle(*frame[:2])

    def _handle(self, header: dict, arrays: dict) -> None:
        event = header.get("event")
        now = time.monotonic()
        if event == "ready":
            self.ready = True
            pid = header.get("pid")
            if isinstance(pid, int) and not isinstance(pid, bool):
                self._worker_pid = pid
        elif event == "cell":
            index = _int(header.get("index"))
            if self.step is not None or index not in self._cells_left or index < max(self.cells, default=-1):
                raise ProtocolError(f"code cell {index + 1} started out of turn")
            self.step, self.step_deadline = ("cell", index), now + self.limits.cell_seconds + self.limits.grace_seconds
            self._mark(header)
        elif event == "cell_done":
            index = _int(header.get("index"))
            if self.step != ("cell", index):
                raise ProtocolError(f"code cell {index + 1} reported done while it was not running")
            self._cells_left.discard(index)
            self.cells[index] = CellReport(index, str(header.get("status", "error"))[:20], str(header.get("error", ""))[:2000])
            self._count(header)
            self.step = None
        elif event == "call":
            call_id = _int(header.get("id"))
            if self.step is not None or self._cells_left or call_id not in self._calls_left:
                raise ProtocolError(f"call {call_id} started out of turn")
            self.step = ("call", call_id)
            self.step_deadline = now + self._call_seconds(call_id) + self.limits.grace_seconds
            self._mark(header)
        elif event == "result":
            call_id = _int(header.get("id"))
            if call_id not in {c.id for c in self.pending}:
                raise ProtocolError(f"a result for call {call_id}, which was never asked for")
            if self.step != ("call", call_id):
                raise ProtocolError(f"a result for call {call_id}, which was not running")
            self._calls_left.discard(call_id)
            self.observations[call_id] = unpack_observation(header.get("observation"), arrays)
            self._count(header)
            self.step = None
        elif event == "alert":
            kind, detail = header.get("kind"), header.get("detail")
            if not isinstance(kind, str) or not isinstance(detail, str):
                raise ProtocolError("an alert is malformed")
            if len(self.alerts) < 200:
                self.alerts.append(Alert(kind[:40], detail[:300], self.step))
        elif event == "done":
            if self.step is not None or self._cells_left or self._calls_left:
                raise ProtocolError("the worker reported done before every cell and call had reported")
            self.finished = True
            self.step = None
        else:
            raise ProtocolError(f"unknown event {event!r}")

    def _mark(self, header: dict) -> None:
        t = header.get("t")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            self._timeline.append((float(t), self.step))

    def _count(self, header: dict) -> None:
        counts = header.get("alerts", {})
        if isinstance(counts, dict):
            clean = Counter({str(k)[:40]: v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)})
            if clean:
                self.counts[self.step] = self.counts.get(self.step, Counter()) + clean


def _ended(proc: subprocess.Popen) -> bool:
    """Whether the process has ended, without reaping it (so its pid stays its own until `wait`)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("an index is not an integer")
    return value


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


def _stat(folder: str) -> dict | None:
    """pid, ppid, session, start time (s since boot), resident bytes and name, from <folder>/stat."""
    try:
        with open(f"{folder}/stat", "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    head, _, rest = text.rpartition(")")
    fields = rest.split()
    try:
        return {"pid": int(head.split(" (", 1)[0]), "comm": head.split(" (", 1)[1], "state": fields[0],
                "ppid": int(fields[1]),
                "session": int(fields[3]), "start": int(fields[19]) / _TICKS, "rss": int(fields[21]) * _PAGE}
    except (IndexError, ValueError):
        return None


def _proportional(folder: str) -> int | None:
    """A process's proportional set size in bytes (its share of every page it maps), from smaps_rollup."""
    try:
        with open(f"{folder}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return 0  # a process that has just ended


def _cmdline(folder: str) -> str:
    try:
        with open(f"{folder}/cmdline", "rb") as f:
            raw = f.read(400)
    except OSError:
        return ""
    return " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("PPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _exited(pidfd: int) -> bool:
    """Whether the process behind a pidfd has ended (its pidfd is readable then)."""
    import select

    try:
        return bool(select.select([pidfd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _death(returncode: int | None, sandboxed: bool = False) -> str:
    if returncode is None:
        return "stopped"
    if sandboxed and returncode > 128:  # bwrap reports a command killed by signal N as exit status 128 + N
        returncode = 128 - returncode
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = {"SIGSEGV": "crashed (segmentation fault)", "SIGKILL": "was killed (SIGKILL)",
                "SIGABRT": "aborted"}.get(name, f"was stopped by {name}")
        return what
    if returncode == 1:  # what Python exits with after an error the worker's own code could not survive
        return "ended the process (exit code 1: os._exit(1), or an error that broke the worker itself, say builtins replaced)"
    return f"ended the process (exit code {returncode}, as os._exit does)"


def _list_files(folder: str, limit: int = 1000) -> list[str]:
    """Paths (relative to `folder`) of up to `limit` files found in it (never following a link)."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found.append(os.path.relpath(os.path.join(root, name), folder))
            if len(found) >= limit:
                return found
    return found


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
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= factor:
            return f"{n / factor:.1f} {unit}"
    return f"{n} bytes"

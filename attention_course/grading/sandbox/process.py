"""One worker process: start it in a sandbox, watch it, collect what it reports.

`WorkerProcess` starts `python -m attention_course.grading.sandbox.worker` in an empty
temporary folder (its own process group, a small environment, one BLAS
thread), sends it the notebook's cells and the calls to make, and reads its
reports as they come. It kills the whole process group when a cell or a call
overruns its time limit by more than the grace period (the worker's own alarm
was ignored), when the process uses more memory than allowed, or when the
result channel carries anything but the grader's frames. `runner.py` decides
what to do next.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.calls import Observation
from .protocol import MAX_BLOB, MAX_HEADER, ProtocolError, decode, encode, pack_value, unpack_observation

GiB = 1 << 30
MiB = 1 << 20
MAX_UNREAD = MAX_BLOB + MAX_HEADER + MiB
"""Bytes of result channel held unparsed before the worker counts as flooding it."""


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
    """Address-space limit of the worker process (Python, numpy and IPython take about 120 MB of it)."""
    file_bytes: int = 64 * MiB
    """Largest file the notebook may write."""
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
    """One worker process running the notebook until it finishes or dies (see the module docstring)."""

    def __init__(self, cells, skip, pending, limits: Limits, deadline: float, output: Output):
        self.cells_src, self.skip, self.pending = cells, set(skip), pending
        self.limits, self.deadline, self.output = limits, deadline, output
        self.cells: dict[int, CellReport] = {}
        self.observations: dict[int, Observation] = {}
        self.finished = False
        self.ready = False
        self.step: tuple[str, int] | None = None
        self.step_deadline = 0.0
        self.reason = ""
        self.kill = ""  # "time", "memory" or "channel" when the grader killed the process
        self.files_written: list[str] = []
        self._buffer = bytearray()
        self._pos = 0
        self._flooded = False
        self._lock = threading.Lock()

    def run(self) -> None:
        folder = tempfile.mkdtemp(prefix="attention-course-grading-")
        work, home = os.path.join(folder, "work"), os.path.join(folder, "home")
        os.mkdir(work)
        os.mkdir(home)
        read_fd, write_fd = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "attention_course.grading.sandbox.worker"],
                cwd=work, env=_child_env(home, write_fd, self.limits),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                pass_fds=(write_fd,), start_new_session=True,
            )
        finally:
            os.close(write_fd)
        readers = [
            threading.Thread(target=self._read_results, args=(read_fd,), daemon=True),
            threading.Thread(target=self._read_output, args=(proc.stdout,), daemon=True),
        ]
        for t in readers:
            t.start()
        try:
            self._send_request(proc)
            self._watch(proc)
        finally:
            _kill_group(proc)
            proc.wait()
            for t in readers:
                t.join(timeout=5)
            try:
                self._parse()
            except ProtocolError as err:
                self.kill = self.kill or "channel"
                self.reason = self.reason or f"interfered with the grader's result channel ({err})"
            if not self.finished and not self.reason:
                self.reason = _death(proc.returncode)
            for stream in (proc.stdin, proc.stdout):
                stream.close()
            self.files_written = _list_files(work)
            if sys.version_info >= (3, 12):
                shutil.rmtree(folder, onexc=_force_remove)
            else:
                shutil.rmtree(folder, onerror=_force_remove)

    def _send_request(self, proc: subprocess.Popen) -> None:
        arrays: dict = {}
        calls_json = [
            {"id": c.id, "group": c.group, "function": c.function,
             "args": [pack_value(a, arrays) for a in c.args],
             "kwargs": {k: pack_value(v, arrays) for k, v in c.kwargs.items()},
             "seconds": c.seconds, "measure_memory": c.measure_memory}
            for c in self.pending
        ]
        request = {"cells": self.cells_src, "skip": sorted(self.skip), "cell_seconds": self.limits.cell_seconds,
                   "calls": calls_json}
        try:
            proc.stdin.write(encode(request, arrays))
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass  # the worker died at once; _watch sees it

    def _read_results(self, fd: int) -> None:
        with os.fdopen(fd, "rb", buffering=0) as stream:
            while chunk := stream.read(1 << 16):
                with self._lock:
                    if len(self._buffer) - self._pos > MAX_UNREAD:
                        self._flooded = True  # keep draining so the worker never blocks, but drop it
                        continue
                    self._buffer += chunk

    def _read_output(self, stream) -> None:
        while chunk := stream.read1(1 << 16):
            self.output.add(chunk)

    def _watch(self, proc: subprocess.Popen) -> None:
        started = time.monotonic()
        next_memory_check = 0.0
        while True:
            try:
                self._parse()
                if self._flooded:
                    raise ProtocolError("more data than any answer needs")
            except ProtocolError as err:
                self._stop(proc, "channel", f"interfered with the grader's result channel ({err})")
                return
            if self.finished or proc.poll() is not None:
                return
            now = time.monotonic()
            if not self.ready and now - started > self.limits.startup_seconds:
                self._stop(proc, "time", "did not start in time")
                return
            if self.step is not None and now > self.step_deadline:
                kind = "cell" if self.step[0] == "cell" else "call"
                limit = self.limits.cell_seconds if kind == "cell" else self._call_seconds(self.step[1])
                self._stop(proc, "time", f"ran past its {limit:g} s time limit and did not stop when told to")
                return
            if now > self.deadline:
                self._stop(proc, "time", f"ran past the notebook's {self.limits.notebook_seconds:g} s time budget")
                return
            if now >= next_memory_check:
                next_memory_check = now + 0.25
                rss = _resident_bytes(proc.pid)
                if rss is not None and rss > self.limits.memory_bytes:
                    self._stop(proc, "memory", f"used more than {size_text(self.limits.memory_bytes)} of memory")
                    return
            time.sleep(0.01)

    def _call_seconds(self, call_id: int) -> float:
        return next((c.seconds for c in self.pending if c.id == call_id), self.limits.call_seconds)

    def _stop(self, proc: subprocess.Popen, kind: str, reason: str) -> None:
        self.kill, self.reason = kind, reason
        _kill_group(proc)

    def _parse(self) -> None:
        """Handle every complete frame received so far."""
        while True:
            with self._lock:
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
        elif event == "cell":
            index = _int(header.get("index"))
            self.step, self.step_deadline = ("cell", index), now + self.limits.cell_seconds + self.limits.grace_seconds
        elif event == "cell_done":
            index = _int(header.get("index"))
            self.cells[index] = CellReport(index, str(header.get("status", "error"))[:20], str(header.get("error", ""))[:2000])
            self.step = None
        elif event == "call":
            call_id = _int(header.get("id"))
            self.step = ("call", call_id)
            self.step_deadline = now + self._call_seconds(call_id) + self.limits.grace_seconds
        elif event == "result":
            call_id = _int(header.get("id"))
            if call_id not in {c.id for c in self.pending}:
                raise ProtocolError(f"a result for call {call_id}, which was never asked for")
            self.observations[call_id] = unpack_observation(header.get("observation"), arrays)
            self.step = None
        elif event == "done":
            self.finished = True
            self.step = None
        else:
            raise ProtocolError(f"unknown event {event!r}")


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("an index is not an integer")
    return value


def _child_env(home: str, result_fd: int, limits: Limits) -> dict[str, str]:
    """A small environment: nothing of the grader's secrets, one thread per process."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LD_LIBRARY_PATH", "SYSTEMROOT", "COVERAGE_PROCESS_START")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    package_root = str(Path(__file__).resolve().parents[3])
    env.update(
        HOME=home, TMPDIR=home, IPYTHONDIR=os.path.join(home, ".ipython"),
        MPLCONFIGDIR=os.path.join(home, ".matplotlib"), MPLBACKEND="Agg",
        PYTHONPATH=os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p),
        PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1",
        OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
        ATTENTION_COURSE_RESULT_FD=str(result_fd),
        ATTENTION_COURSE_MEMORY=str(limits.memory_bytes),
        ATTENTION_COURSE_FILE_SIZE=str(limits.file_bytes),
    )
    return env


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the worker and anything it started (it leads its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
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


def _death(returncode: int | None) -> str:
    if returncode is None:
        return "stopped"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        what = {"SIGSEGV": "crashed (segmentation fault)", "SIGKILL": "was killed (SIGKILL)",
                "SIGABRT": "aborted"}.get(name, f"was stopped by {name}")
        return what
    return f"ended the process (exit code {returncode}, as os._exit does)"


def _list_files(folder: str, limit: int = 1000) -> list[str]:
    """Paths (relative to `folder`) of up to `limit` files found in it."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            found.append(os.path.relpath(os.path.join(root, name), folder))
            if len(found) >= limit:
                return found
    return found


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

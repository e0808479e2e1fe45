"""Run one untrusted notebook safely and collect what its functions return.

Each run starts a fresh worker process (`worker.py`) in its own empty
temporary folder and its own process group, with a memory limit, a file-size
limit, a time limit per cell and per call (an alarm inside the worker, and a
hard kill from here if the alarm is ignored) and a time budget for the whole
notebook. If the process dies (a crash, `os._exit`, a kill), the cell or call
that was running is marked and the notebook is run again without it, so one
bad cell costs only the marks that depend on it.
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

from . import calls
from .calls import Observation
from .protocol import ProtocolError, decode, encode, pack_value, unpack_observation

GiB = 1 << 30
MiB = 1 << 20


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
    """Address-space limit of the worker process (numpy and IPython take about 0.5 GiB of it)."""
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


@dataclass
class NotebookRun:
    """Everything the grader learned from running one notebook."""

    observations: dict[int, Observation]
    """Call id -> what the call did."""
    cells: dict[int, CellReport]
    """Code-cell index -> what happened to the cell."""
    incidents: list[str]
    """Sentences about anything unusual: crashes, kills, time limits, floods of output."""
    output: str
    """The start of what the notebook printed."""
    output_bytes: int
    """How many bytes the notebook printed in all."""
    seconds: float
    """Wall-clock time, restarts included."""
    restarts: int
    """How many times the notebook was run again after its process died."""
    files_written: list[str] = field(default_factory=list)
    """Files the notebook left in its working folder (deleted after the run)."""


class InvalidNotebook(ValueError):
    """A submission that cannot be read as a notebook."""


def read_notebook(path: Path | str):
    """Read and validate a notebook; InvalidNotebook says why it cannot be graded."""
    import nbformat

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidNotebook(f"could not be read: {err}") from None
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as err:  # nbformat raises several JSON and schema errors
        raise InvalidNotebook(f"is not a valid notebook: {_first_line(err)}") from None
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as err:
        raise InvalidNotebook(f"is not a valid notebook: {_first_line(err)}") from None
    return nb


def code_cells(nb) -> list[str]:
    """The sources of the notebook's code cells, in order."""
    return [cell.source for cell in nb.cells if cell.cell_type == "code"]


def run_notebook(cells: list[str], requested: list[Call], limits: Limits = Limits()) -> NotebookRun:
    """Run the cells in a sandboxed worker, then make the requested calls."""
    start = time.monotonic()
    deadline = start + limits.notebook_seconds
    by_id = {c.id: c for c in requested}
    skip: set[int] = set()
    cells_done: dict[int, CellReport] = {}
    observations: dict[int, Observation] = {}
    incidents: list[str] = []
    output = _Output(limits.output_bytes)
    restarts = 0
    files: set[str] = set()
    while True:
        pending = [c for c in requested if c.id not in observations]
        attempt = _Attempt(cells, skip, pending, limits, deadline, output)
        attempt.run()
        files.update(attempt.files_written)
        cells_done.update(attempt.cells)
        observations.update(attempt.observations)
        if attempt.finished:
            break
        if attempt.step is None:
            incidents.append(f"the notebook's process stopped outside any cell: {attempt.reason}")
            break
        kind, index = attempt.step
        if kind == "cell":
            skip.add(index)
            cells_done[index] = CellReport(index, "killed", attempt.reason)
            incidents.append(f"code cell {index + 1} ({_excerpt(cells[index])}) {attempt.reason}; it was skipped")
        else:
            call = by_id[index]
            status = {"time": calls.TIMEOUT, "memory": calls.OUT_OF_MEMORY}.get(attempt.kill, calls.CRASHED)
            observations[index] = Observation(status, error=attempt.reason)
            incidents.append(f"{call.function}() {attempt.reason}")
            # The same function would most likely do it again: its other inputs are not tried.
            why = "ran out of time" if status == calls.TIMEOUT else "ended the process"
            for other in pending:
                if other.group == call.group and other.id not in observations:
                    observations[other.id] = Observation(calls.SKIPPED, error=f"not tried: an earlier input {why}")
        restarts += 1
        if restarts > limits.restarts or time.monotonic() >= deadline:
            why = "its time budget ran out" if time.monotonic() >= deadline else f"its process died {restarts} times"
            incidents.append(f"grading of this notebook stopped early: {why}")
            break
    for call in requested:
        observations.setdefault(call.id, Observation(calls.CRASHED, error="not run: the notebook's process did not get this far"))
    if output.total > output.limit:
        incidents.append(f"the notebook printed {_size(output.total)}; only the first {_size(output.limit)} were kept")
    for report in cells_done.values():
        if report.status in ("timeout", "memory", "exit"):
            incidents.append(f"code cell {report.index + 1} ({_excerpt(cells[report.index])}): {report.error}")
    if files:
        shown = ", ".join(sorted(files)[:5]) + (", ..." if len(files) > 5 else "")
        incidents.append(f"the notebook wrote {len(files)} file(s) into its working folder ({shown}); they were deleted")
    return NotebookRun(observations, dict(sorted(cells_done.items())), incidents, output.text(), output.total,
                       time.monotonic() - start, restarts, sorted(files))


class _Output:
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


class _Attempt:
    """One worker process running the notebook until it finishes or dies."""

    def __init__(self, cells, skip, pending, limits: Limits, deadline: float, output: _Output):
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
        self._lock = threading.Lock()

    def run(self) -> None:
        folder = tempfile.mkdtemp(prefix="attention-course-grading-")
        work, home = os.path.join(folder, "work"), os.path.join(folder, "home")
        os.mkdir(work)
        os.mkdir(home)
        read_fd, write_fd = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "attention_course.grading.worker"],
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
            self.files_written = _list_files(work)
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
                    self._stop(proc, "memory", f"used more than {_size(self.limits.memory_bytes)} of memory")
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
            if frame is None:
                return
            header, arrays, self._pos = frame
            self._handle(header, arrays)

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
    package_root = str(Path(__file__).resolve().parents[2])
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


def _force_remove(func, path, exc_info) -> None:
    """rmtree's error handler: make read-only files and folders removable, then retry."""
    try:
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)
    except OSError:
        pass


def _excerpt(source: str, width: int = 40) -> str:
    line = next((ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return f"`{line[:width]}{'…' if len(line) > width else ''}`" if line else "an empty cell"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def _size(n: int) -> str:
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= factor:
            return f"{n / factor:.1f} {unit}"
    return f"{n} bytes"

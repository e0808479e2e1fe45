"""Run one untrusted notebook safely and collect what its functions return.

Each run starts a fresh worker process (`sandbox.WorkerProcess`) in its own
empty temporary folder and its own process group, with a memory limit, a
file-size limit, a time limit per cell and per call (an alarm inside the
worker, and a hard kill if the alarm is ignored) and a time budget for the
whole notebook. If the process dies (a crash, `os._exit`, a kill), the cell or
call that was running is marked and the notebook is run again without it, so
one bad cell costs only the marks that depend on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..engine import calls
from ..engine.calls import Observation
from .process import Call, CellReport, Limits, Output, WorkerProcess, size_text

__all__ = ["Call", "CellReport", "InvalidNotebook", "Limits", "NotebookRun", "code_cells", "read_notebook", "run_notebook"]


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
    output = Output(limits.output_bytes)
    restarts = 0
    files: set[str] = set()
    while True:
        pending = [c for c in requested if c.id not in observations]
        attempt = WorkerProcess(cells, skip, pending, limits, deadline, output)
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
        incidents.append(f"the notebook printed {size_text(output.total)}; only the first {size_text(output.limit)} were kept")
    for report in cells_done.values():
        if report.status in ("timeout", "memory", "exit"):
            incidents.append(f"code cell {report.index + 1} ({_excerpt(cells[report.index])}): {report.error}")
    if files:
        shown = ", ".join(sorted(files)[:5]) + (", ..." if len(files) > 5 else "")
        incidents.append(f"the notebook wrote {len(files)} file(s) into its working folder ({shown}); they were deleted")
    return NotebookRun(observations, dict(sorted(cells_done.items())), incidents, output.text(), output.total,
                       time.monotonic() - start, restarts, sorted(files))


def _excerpt(source: str, width: int = 40) -> str:
    line = next((ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return f"`{line[:width]}{'…' if len(line) > width else ''}`" if line else "an empty cell"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__



"""Run one untrusted notebook safely and collect what its functions return.

Each run starts a fresh worker process (`process.WorkerProcess`) in a
bubblewrap sandbox of its own (or, unsandboxed, in an empty temporary folder
and its own process group), with limits on memory, file size and processes, a
time limit per cell and per call (an alarm inside the worker, and a hard kill
of the whole sandbox if the alarm is ignored) and a time budget for the whole
notebook. If the process dies (a crash, `os._exit`, a kill), the cell or call
that was running is marked and the notebook is run again without it, so one
bad cell costs only the marks that depend on it. What the notebook tried
(signals, the network, writes outside its folder, course files, patches of the
grader, processes left running) becomes incidents naming the cell, and flags
for the status column.

`run_notebook` depends only on its arguments (and finds the package and the
interpreter itself), so any process can call it: the batch's threads, or a
worker on another machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from collections import Counter

from ...checks.engine.calls import CallOutcome, Observation
from ...checks.engine.run import FollowUp
from ..status import STOPPED_IN_WORKER, CellOutcome, Finding, Incident, Status, Stop, status_of
from .bubblewrap import Bubblewrap
from .channel import Alert, Call, CellReport, Follow, StepKind
from .process import Judge, Limits, Output, Started, WorkerProcess, size_text
from .tree import FILES_LISTED, Leftover

__all__ = ["Call", "CellReport", "Follow", "Judge", "Limits", "NotebookRun", "run_notebook"]


@dataclass
class NotebookRun:
    """Everything the grader learned from running one notebook."""

    observations: dict[int, Observation]
    """Call id -> what the call did."""
    cells: dict[int, CellReport]
    """Code-cell index -> what happened to the cell."""
    incidents: list[Incident]
    """Sentences about anything unusual (crashes, kills, time limits, floods of output), each with its kind."""
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
    flags: list[Status] = field(default_factory=list)
    """What it tried that the status column shows: signal, network, wrote outside, detached process, ..."""
    stopped: dict[int, Stop] = field(default_factory=dict)
    """Call id -> why the grader stopped the process during that call (a call whose process died by itself is
    not here)."""
    sandboxed: bool = False
    """Whether it ran in a bubblewrap sandbox."""
    follow_ups: dict[str, FollowUp] = field(default_factory=dict)
    """Check name -> what its worker's closer look at the check's failure found (`run.search`), its cases as call
    ids: what the notebook's own code may have forged, so only a guide until `run.follow_up` checks it."""


def run_notebook(cells: list[str], requested: list[Call], limits: Limits = Limits(), *,
                 sandbox: Bubblewrap | None = None, notebook: Path | str | None = None,
                 provided: tuple[str, ...] = (), started: Started | None = None,
                 follows: tuple[Follow, ...] = (), judge: Judge | None = None) -> NotebookRun:
    """Run the cells in a worker, then make the requested calls; again without what killed a worker.

    `sandbox`: the bubblewrap to run each worker in (None: unsandboxed);
    `notebook`: the submitted file, copied into the worker's folder;
    `provided`: names the exercise lets the notebook take from attention_course;
    `started`: the first worker, started ahead with the same sandbox and notebook (`process.start_worker`);
    `follows`: the checks whose failures the worker may look at closer after the calls (a worker that dies doing
    so, or while it waits to be told which, is not run again: only what it found before is lost; one that forged
    the result channel doing so has all it reported dropped, and its calls are made again by a worker that looks
    at nothing closer);
    `judge`: which of them it does (`Judge.to_follow`: their indices, given every call's observation so far),
    asked while the worker waits (None: all, the worker's own verdict deciding). The caller's judge decides, so
    that this module never judges: a notebook that passes gets no follow-up at all.
    """
    start = time.monotonic()
    deadline = start + limits.notebook_seconds
    seen = _Seen()
    skip: set[int] = set()
    cells_done: dict[int, CellReport] = {}
    observations: dict[int, Observation] = {}
    incidents: list[Incident] = []
    stopped: dict[int, Stop] = {}
    output = Output(limits.output_bytes)
    restarts = 0
    found: dict[str, FollowUp] = {}
    while True:
        pending = [c for c in requested if c.id not in observations]
        attempt = WorkerProcess(cells, skip, pending, limits, deadline, output, sandbox=sandbox, notebook=notebook,
                                provided=provided, started=started, follows=follows, judge=judge, earlier=observations)
        started = None
        attempt.run()
        seen.add(attempt)
        cells_done.update(attempt.cells)
        if attempt.kill != Stop.CHANNEL or attempt.finished:
            observations.update(attempt.observations)  # a forged channel's results are not the notebook's
            found = {follows[i].check: f for i, f in attempt.follow_ups.items()}
        if attempt.step is not None and attempt.step[0] == StepKind.FOLLOW and attempt.kill == Stop.CHANNEL and follows:
            # it forged the channel while looking closer: its calls are made again by a worker that looks at nothing
            incidents.append(_forged_in_follow_up(attempt, follows))
            follows, judge, restarts = (), None, restarts + 1
            continue
        if attempt.finished or attempt.waited:  # every call made: what is left is only the follow-up
            break
        if attempt.step is not None and attempt.step[0] == StepKind.FOLLOW:
            break  # what the closer looks found before is lost, nothing else
        if attempt.kill is not None and any(a.kind == Finding.PROCESS_LIMIT and a.step == attempt.step
                                            for a in attempt.alerts):
            # it had started as many processes as it may: whichever limit (time, memory) stopped it first, they are
            # why it was stopped, so that the same notebook gets the same status every time
            attempt.kill = Stop.PROCESSES
            attempt.reason = f"started as many processes as it may ({limits.processes}) and was stopped"
        died = attempt.kill.status if attempt.kill else Status.CRASHED  # what its death gives the status
        if attempt.step is None:
            incidents.append(Incident(f"the notebook's process stopped outside any cell: {attempt.reason}", died))
            break
        kind, index = attempt.step
        if kind == StepKind.CELL:
            skip.add(index)
            cells_done[index] = CellReport(index, CellOutcome.KILLED, attempt.reason, attempt.kill)
            incidents.append(Incident(f"code cell {index + 1} ({_excerpt(cells[index])}) {attempt.reason}; it was skipped",
                                      died))
        else:
            incidents.append(_call_killed(attempt, index, pending, observations, stopped, died))
        restarts += 1
        if restarts > limits.restarts or time.monotonic() >= deadline:
            why = "its time budget ran out" if time.monotonic() >= deadline else f"its process died {restarts} times"
            incidents.append(Incident(f"grading of this notebook stopped early: {why}"))
            break
    for call in requested:
        observations.setdefault(call.id, Observation(CallOutcome.CRASHED, error="not run: the notebook's process did not get this far"))
    incidents += _what_it_did(cells, requested, cells_done, output, seen, limits, sandbox is not None)
    return NotebookRun(observations, dict(sorted(cells_done.items())), _unique(incidents), output.text(),
                       output.total, time.monotonic() - start, restarts, sorted(seen.files), sorted(seen.flags), stopped,
                       sandbox is not None, found)


class _Seen:
    """What a notebook's workers saw, over every attempt: files written, alerts, leftovers, the statuses they give."""

    def __init__(self):
        self.files: set[str] = set()
        self.alerts: list[Alert] = []
        self.counts: dict = {}
        self.leftovers: list[Leftover] = []
        self.peak = 0
        self.flags: set[Status] = set()

    def add(self, attempt: WorkerProcess) -> None:
        self.files.update(attempt.files_written)
        self.alerts += [a for a in attempt.alerts if a not in self.alerts]
        for step, found in attempt.counts.items():
            self.counts[step] = self.counts.get(step, Counter()) | found
        self.leftovers += attempt.leftovers
        # the sandbox's listing, a few times a second, or what was left running at the end beside the worker
        self.peak = max(self.peak, attempt.peak_processes, len(attempt.leftovers) + 1 if attempt.leftovers else 0)
        if attempt.kill == Stop.CHANNEL:
            self.flags.add(Status.TAMPERED)
        elif attempt.kill == Stop.SANDBOX:
            self.flags.add(Status.GRADER_ERROR)


def _call_killed(attempt: WorkerProcess, call_id: int, pending: list[Call], observations: dict[int, Observation],
                 stopped: dict[int, Stop], died: Status) -> Incident:
    """A call during which the worker died: its observation, its group's other inputs skipped, the incident."""
    call = next(c for c in pending if c.id == call_id)
    status = {Stop.TIME: CallOutcome.TIMEOUT, Stop.MEMORY: CallOutcome.OUT_OF_MEMORY}.get(attempt.kill,
                                                                                    CallOutcome.CRASHED)
    observations[call_id] = Observation(status, error=attempt.reason)
    if attempt.kill is not None:
        stopped[call_id] = attempt.kill
    # The same function would most likely do it again: its other inputs are not tried.
    why = "ran out of time" if status == CallOutcome.TIMEOUT else "ended the process"
    for other in pending:
        if other.group == call.group and other.id not in observations:
            observations[other.id] = Observation(CallOutcome.SKIPPED, error=f"not tried: an earlier input {why}")
    return Incident(f"{call.function}() {attempt.reason}", died)


def _what_it_did(cells: list[str], requested: list[Call], cells_done: dict[int, CellReport], output: Output,
                 seen: _Seen, limits: Limits, sandboxed: bool) -> list[Incident]:
    """The incidents of the whole run: output cut, cells stopped, files left, what it tried, processes."""
    incidents = []
    if output.total > output.limit:
        incidents.append(Incident(f"the notebook printed {size_text(output.total)}; only the first "
                                  f"{size_text(output.limit)} were kept"))
    for report in cells_done.values():
        if report.status in STOPPED_IN_WORKER:
            incidents.append(Incident(f"code cell {report.index + 1} ({_excerpt(cells[report.index])}): {report.error}",
                                      status_of(report.status)))
    if seen.files:
        shown = ", ".join(sorted(seen.files)[:5]) + (", ..." if len(seen.files) > 5 else "")
        many = f"at least {len(seen.files)}" if len(seen.files) >= FILES_LISTED else str(len(seen.files))
        incidents.append(Incident(f"the notebook wrote {many} file(s) into its working folder ({shown}); "
                                  "they were deleted", Status.WROTE_FILES))
    where = _places(cells, requested)
    incidents += _alert_incidents([a for a in seen.alerts if a.kind not in _PROCESS_KINDS], seen.counts, where,
                                  sandboxed, seen.flags)
    incidents += _process_incidents(seen, where, limits)
    return incidents


_SENTENCES = {
    Finding.SIGNAL: ("tried to send a signal to another process", "; the sandbox let it reach nothing outside"),
    Finding.NETWORK: ("tried to reach the network", "; the sandbox has none"),
    Finding.WRITE: ("tried to write outside its folder", "; the sandbox is read-only there"),
    Finding.READ: ("tried to read course files it was not given", "; the sandbox does not hold them"),
    Finding.OUTSIDE: ("tried to read files outside its folder", "; the sandbox does not hold them"),
    Finding.TAMPER: ("patched the course's code in its own process",
                     ": the marks are computed outside it, but from what this process reported, so check them by hand"),
    Finding.COURSE_CODE: ("called the course's own code beyond what the exercise provides", ""),
    Finding.INTROSPECT: ("reached into its process's own frames or objects, where the grader's are",
                         ": the marks are computed outside it, but from what this process reported, so check them by hand"),
    Finding.CODE_READ: ("read the code of the course's own functions beyond what the exercise provides", ""),
    Finding.NUMPY: ("replaced numpy's functions in its own process",
                    "; the grader compares results with its own numpy, so only this notebook's results could change"),
}


def _places(cells: list[str], requested: list[Call]):
    by_id = {c.id: c for c in requested}

    def where(step) -> str:
        if step is None:
            return "the notebook"
        kind, index = step
        if kind == StepKind.CELL and 0 <= index < len(cells):
            return f"code cell {index + 1} ({_excerpt(cells[index])})"
        if kind == StepKind.CALL and index in by_id:
            return f"{by_id[index].function}(), called by the grader,"
        return "the notebook"

    return where


def _alert_incidents(alerts: list[Alert], counts: dict, where, sandboxed: bool, flags: set[Status]) -> list[Incident]:
    """One sentence per step and kind of finding, with up to three details and how many there were."""
    grouped: dict[tuple, list[str]] = {}
    for alert in alerts:
        grouped.setdefault((alert.step, alert.kind), []).append(alert.detail)
    incidents = []
    for (step, kind), details in grouped.items():
        what, outcome = _SENTENCES.get(kind, (f"did something unusual ({kind})", ""))
        total = max(counts.get(step, {}).get(kind, 0), len(details))
        shown = ", ".join(details[:3]) + (f"; {total} in all" if total > min(3, len(details)) else "")
        said = outcome if sandboxed or kind in (Finding.TAMPER, Finding.INTROSPECT, Finding.NUMPY) else ""
        gives = status_of(kind)
        incidents.append(Incident(f"{where(step)} {what} ({shown}){said}", gives))
        if gives is not None:
            flags.add(gives)
    return incidents


_PROCESS_KINDS = (Finding.PROCESS, Finding.PROCESS_LIMIT)


def _process_incidents(seen: _Seen, where, limits: Limits) -> list[Incident]:
    """One sentence per step that started processes: which, how many, whether it reached the sandbox's limit, and
    which of them it left running (a fork bomb does all three: one sentence says so)."""
    started: dict = {}  # step -> the commands its watch sent
    for alert in seen.alerts:
        if alert.kind == Finding.PROCESS:
            started.setdefault(alert.step, []).append(alert.detail)
    count = {step: found.get(Finding.PROCESS, 0) for step, found in seen.counts.items()}
    limited = {a.step for a in seen.alerts if a.kind == Finding.PROCESS_LIMIT}
    left: dict = {}
    for process in seen.leftovers:
        # the worker's watch sees every process it starts itself: one that appeared during a step in which it started
        # none descends from one started before (a fork bomb's children fork on while the grader calls)
        step = process.step if process.step in started or not started else _starter(process.step, list(started))
        left.setdefault(step, []).append(process)
    if not limited and (max(count.values(), default=0) >= limits.processes or seen.peak >= limits.processes - 1):
        # no step's count reached the limit as it ran (its processes started processes themselves, say): the
        # sandbox's listing saw them; the step that started them, if one alone did
        busy = [s for s, n in count.items() if n >= limits.processes] or list(dict.fromkeys([*started, *left]))
        limited.add(busy[0] if len(busy) == 1 else None)
    incidents = []
    for step in dict.fromkeys([*started, *left, *limited]):
        found = left.get(step, [])
        commands = started.get(step) or list(dict.fromkeys(
            f"`{p.command}`" if p.command else "copies of the notebook's own process (`os.fork()`)" for p in found))
        # A step that hit the limit is told no number: how many forks were refused before it was stopped, and
        # whether any were still running at the end, depend on the machine's speed (the same notebook graded twice
        # must be told the same), and its one finding is the limit.
        total = len(commands) if step in limited else max(count.get(step, 0), len(commands))
        text = where(step) + (f" started processes ({', '.join(commands[:3])}"
                              f"{f'; {total} in all' if total > min(3, len(commands)) else ''})" if commands else "")
        if step in limited:
            text += ((", and tried to run " if commands else " tried to run ")
                     + f"more processes than the {limits.processes} it may run at once (a thread counts as one); any still "
                     "running when the notebook finished were killed with its sandbox")
            seen.flags.add(Status.TOO_MANY_PROCESSES)
        elif found:
            detached = " (detached from it)" if any(p.detached for p in found) else ""
            text += (f"; {len(found)} of them{detached} were still running when the notebook finished and were killed "
                     "with its sandbox")
            seen.flags.add(Status.DETACHED_PROCESS)
        kind = Status.TOO_MANY_PROCESSES if step in limited else Status.DETACHED_PROCESS if found else None
        incidents.append(Incident(text, kind))
    return incidents


def _forged_in_follow_up(attempt: WorkerProcess, follows: tuple[Follow, ...]) -> Incident:
    """What is said of a worker whose result channel the notebook forged during a closer look at a failed check.

    Everything it reported was dropped with its channel, the calls' results too: they are made again by a worker
    that makes no closer look (a guide only), so that the marks come from results the grader can trust.
    """
    return Incident(f"the notebook's code, run by the grader's closer look at {follows[attempt.step[1]].check}, "
                    f"{attempt.reason}; what that run reported was dropped, and its calls were made again without the "
                    "closer look", Status.TAMPERED)


def _starter(step, starters: list):
    """The last of the steps that started processes (`starters`) before `step`; the first of them if none was."""
    def order(s):
        return (2, 0) if s is None else (0 if s[0] == StepKind.CELL else 1, s[1])

    before = [s for s in starters if order(s) < order(step)]
    return max(before, key=order) if before else starters[0]


def _unique(items: list[Incident]) -> list[Incident]:
    return list(dict.fromkeys(items))


def _excerpt(source: str, width: int = 40) -> str:
    line = next((ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")), "")
    return f"`{line[:width]}{'…' if len(line) > width else ''}`" if line else "an empty cell"

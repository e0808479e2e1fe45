"""The result channel, read from the grader's side: a worker's frames, each checked to arrive in its turn.

A worker reports on one pipe (frames of `protocol.py`): ready, then each code
cell it runs (started, done), then each call it makes (started, its
observation), then done; alerts from its watch may come at any time. The
worker reports cells in order, then calls in order, each once, so a frame out
of turn (a result for a call never asked for, a cell done that never started)
was forged by the notebook: `Reports.parse` raises ProtocolError, and the
supervisor kills the sandbox. A worker given checks to follow up (`Follow`)
says, after its calls, that it is waiting; the grader judges the calls and
answers (`Reports.answer`) with the checks that failed, and the worker
follows up those alone, each in turn (started, what it found), then says it
is done: a passing notebook's worker is done at once. A follow-up never
asked for is forged; one whose content is malformed is dropped, never
believed. Only plain numbers and short strings are ever decoded.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from ...checks.engine.calls import Observation
from ...checks.engine.run import FollowUp
from ..status import STOPPED_IN_WORKER, CellOutcome, Finding, Stop
from .protocol import MAX_BLOB, MAX_HEADER, ProtocolError, decode, unpack_follow_up, unpack_observation

MAX_UNREAD = MAX_BLOB + MAX_HEADER + (1 << 20)
"""Bytes of result channel held unparsed before the worker counts as flooding it."""



class StepKind(StrEnum):
    """What the worker is running: a code cell, one of the grader's calls, or the follow-up of a failed check."""

    CELL = "cell"
    CALL = "call"
    FOLLOW = "follow"


Step = tuple[StepKind, int]
"""(CELL, index), (CALL, id) or (FOLLOW, index): what the worker is doing."""


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
class Follow:
    """A check whose failure the worker follows up after the calls (`run.search`): a guide, judged again outside."""

    exercise: str
    """Id of the exercise the check belongs to (the worker takes the check from the registry)."""
    check: str
    """Name of the check."""
    calls: tuple[int, ...]
    """Ids of its calls, in the order of its cases."""
    cases: tuple[dict, ...]
    """Each call's case, besides its arguments (`protocol.case_fields`): label, hidden, ..."""
    seconds: float
    """Time limit of one call of the check (its calls' own)."""
    check_file: dict | None = None
    """For an instructor's own exercise, which the worker's registry does not hold: its check file's data (the
    visible inputs' results, no solution, nothing hidden), from which the worker makes the check."""


@dataclass(frozen=True)
class CellReport:
    """What happened to one code cell."""

    index: int
    """Position among the notebook's code cells, from 0."""
    status: CellOutcome
    """ok, error, timeout, memory, exit, or killed (the process died in it)."""
    error: str = ""
    """The exception or what happened."""
    stop: Stop | None = None
    """For a cell whose process was killed: why the grader stopped it (None: it died by itself)."""

    def __post_init__(self):
        object.__setattr__(self, "status", CellOutcome(self.status))


@dataclass(frozen=True)
class Alert:
    """Something the notebook tried, as its worker's watch saw it (see `watch.py`)."""

    kind: Finding
    """What it was: signal, network, process, write outside, course files, read outside, tampered, ..."""
    detail: str
    """What exactly, e.g. "SIGKILL to process 1 (its parent)"."""
    step: Step | None
    """The cell or call during which it happened; None between them."""


class Reports:
    """Everything one worker reported, read frame by frame (see the module docstring).

    `cell_seconds` and `grace_seconds` set each step's deadline, the calls'
    own time limits theirs: a step still running after it is overdue.
    """

    def __init__(self, cells: int, skip: set[int], calls: list[Call], cell_seconds: float, grace_seconds: float,
                 follows: int = 0, follow_seconds: float = 0.0):
        self.cells: dict[int, CellReport] = {}
        self.observations: dict[int, Observation] = {}
        self.follow_ups: dict[int, FollowUp] = {}
        """Index among the `Follow`s asked for -> what the worker's follow-up found, its cases as call ids."""
        self.alerts: list[Alert] = []
        self.counts: dict[Step | None, Counter] = {}
        """Step -> how many findings of each kind the watch made (beyond the alerts it sent)."""
        self.timeline: list[tuple[float, Step]] = []
        """(seconds since boot, step) as each step started: which step started a leftover process."""
        self.ready = False
        self.finished = False
        self.step: Step | None = None
        self.deadline = 0.0
        """When the running step is overdue (time.monotonic)."""
        self._cells_left = set(range(cells)) - set(skip)
        self._calls = {c.id: c for c in calls}
        self._calls_left = set(self._calls)
        self._seconds = (cell_seconds, grace_seconds)
        self._follows, self._follow_seconds, self._followed = follows, follow_seconds, -1
        self.waiting = False
        """Whether the worker said it made every call and waits for the grader's answer (only with follow-ups)."""
        self.asked: tuple[int, ...] | None = None
        """The grader's answer: the follow-ups to make (indices among the `Follow`s); None before it is given."""
        self._buffer = bytearray()
        self._pos = 0
        self._flooded = False

    def add(self, chunk: bytes) -> None:
        """Bytes read from the channel; beyond MAX_UNREAD unparsed they are dropped (`flooded`)."""
        if len(self._buffer) - self._pos > MAX_UNREAD:
            self._flooded = True  # keep draining so the worker never blocks, but drop it
        else:
            self._buffer += chunk

    def parse(self) -> None:
        """Handle every complete frame received so far; ProtocolError for anything the worker would not send."""
        while True:
            frame = decode(self._buffer, self._pos)
            if frame is None:
                break
            header, arrays, end = frame
            if end > 1 << 20:  # forget what was read
                del self._buffer[:end]
                end = 0
            self._pos = end
            self._handle(header, arrays)

    @property
    def flooded(self) -> bool:
        """Whether the worker sent more than any answer needs (what came after MAX_UNREAD was dropped)."""
        return self._flooded

    @property
    def unread(self) -> int:
        """Bytes received that make no whole frame (after `done`, someone else wrote them: the worker writes each frame
        whole)."""
        return len(self._buffer) - self._pos

    def _handle(self, header: dict, arrays: dict) -> None:
        event = header.get("event")
        if self.finished and event != "alert":  # a thread of the notebook may still be watched, nothing else is sent
            raise ProtocolError(f"a frame ({str(event)[:20]!r}) came after the worker's last one")
        handler = {"ready": self._ready, "cell": self._cell, "cell_done": self._cell_done, "call": self._call,
                   "result": self._result, "waiting": self._waiting, "follow": self._follow,
                   "followed": self._followed_up, "alert": self._alert, "done": self._done}.get(event)
        if handler is None:
            raise ProtocolError(f"unknown event {event!r}")
        handler(header, arrays)

    def _ready(self, header: dict, arrays: dict) -> None:
        self.ready = True

    def _cell(self, header: dict, arrays: dict) -> None:
        index = _int(header.get("index"))
        if self.step is not None or index not in self._cells_left or index < max(self.cells, default=-1):
            raise ProtocolError(f"code cell {index + 1} started out of turn")
        cell_seconds, grace = self._seconds
        self._start((StepKind.CELL, index), cell_seconds + grace, header)

    def _cell_done(self, header: dict, arrays: dict) -> None:
        index = _int(header.get("index"))
        if self.step != (StepKind.CELL, index):
            raise ProtocolError(f"code cell {index + 1} reported done while it was not running")
        self._cells_left.discard(index)
        self.cells[index] = CellReport(index, _cell_outcome(header.get("status")), str(header.get("error", ""))[:2000])
        self._end(header)

    def _call(self, header: dict, arrays: dict) -> None:
        call_id = _int(header.get("id"))
        if self.step is not None or self._cells_left or call_id not in self._calls_left:
            raise ProtocolError(f"call {call_id} started out of turn")
        self._start((StepKind.CALL, call_id), self._calls[call_id].seconds + self._seconds[1], header)

    def _result(self, header: dict, arrays: dict) -> None:
        call_id = _int(header.get("id"))
        if call_id not in self._calls:
            raise ProtocolError(f"a result for call {call_id}, which was never asked for")
        if self.step != (StepKind.CALL, call_id):
            raise ProtocolError(f"a result for call {call_id}, which was not running")
        self._calls_left.discard(call_id)
        self.observations[call_id] = unpack_observation(header.get("observation"), arrays)
        self._end(header)

    def _waiting(self, header: dict, arrays: dict) -> None:
        if self.step is not None or self._cells_left or self._calls_left or not self._follows or self.waiting:
            raise ProtocolError("the worker said it waits for the grader's answer out of turn")
        self.waiting = True

    def answer(self, follow: list[int]) -> None:
        """The grader answers the waiting worker: the follow-ups to make, in order (none: the worker is done at once).
        From now on the worker is overdue if it takes longer than the grace period to go on (`deadline`)."""
        self.asked = tuple(sorted(set(follow)))
        self._go_on()

    def _go_on(self) -> None:
        """The worker's deadline to start its next follow-up or say it is done: the grace period (the worker only
        reads the answer, or sends a frame), so that one that hangs between them is stopped."""
        self.deadline = time.monotonic() + self._seconds[1]

    @property
    def answered(self) -> bool:
        """Whether the worker was given the grader's answer and has not said it is done (between its follow-ups,
        it must go on by `deadline`)."""
        return self.asked is not None and self.step is None and not self.finished

    def _follow(self, header: dict, arrays: dict) -> None:
        index = _int(header.get("index"))
        if (self.step is not None or self.asked is None or index not in self.asked or index <= self._followed
                or index >= self._follows):
            raise ProtocolError(f"follow-up {index} started out of turn")
        self._followed = index
        self._start((StepKind.FOLLOW, index), self._follow_seconds + self._seconds[1], header)

    def _followed_up(self, header: dict, arrays: dict) -> None:
        index = _int(header.get("index"))
        if self.step != (StepKind.FOLLOW, index):
            raise ProtocolError(f"follow-up {index} reported while it was not running")
        try:
            self.follow_ups[index] = unpack_follow_up(header.get("found"), arrays)
        except (ProtocolError, TypeError, ValueError):  # what a tampered worker made of it: nothing is said of it
            pass
        self._end(header)

    def _alert(self, header: dict, arrays: dict) -> None:
        kind, detail = header.get("kind"), header.get("detail")
        if not isinstance(kind, str) or not isinstance(detail, str) or kind not in _FINDINGS:
            raise ProtocolError("an alert is malformed")
        if len(self.alerts) < 200:
            self.alerts.append(Alert(Finding(kind), detail[:300], self.step))

    def _done(self, header: dict, arrays: dict) -> None:
        if self.step is not None or self._cells_left or self._calls_left:
            raise ProtocolError("the worker reported done before every cell and call had reported")
        if self._follows and self.asked is None:
            raise ProtocolError("the worker reported done before the grader answered it")
        self.finished = True

    def _start(self, step: Step, seconds: float, header: dict) -> None:
        """A step begins: its deadline, and when it began on the clock of the sandbox's process start times."""
        self.step, self.deadline = step, time.monotonic() + seconds
        t = header.get("t")
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            self.timeline.append((float(t), step))

    def _end(self, header: dict) -> None:
        """A step ends: the watch's counts of what it found during it."""
        counts = header.get("alerts", {})
        if isinstance(counts, dict):
            clean = Counter({str(k)[:40]: v for k, v in counts.items() if isinstance(v, int) and not isinstance(v, bool)})
            if clean:
                self.counts[self.step] = self.counts.get(self.step, Counter()) + clean
        self.step = None
        if self.asked is not None:  # a follow-up ended: the next one, or done, comes at once
            self._go_on()

    def step_at(self, started: float) -> Step | None:
        """The step running at `started` (seconds since boot), if the timeline knows it."""
        step = None
        for t, s in self.timeline:
            if t <= started + 0.01:
                step = s
        return step


_FINDINGS = {str(f) for f in Finding}


def _cell_outcome(status) -> CellOutcome:
    """How a cell ended, as its worker says: ok, error, or how the worker stopped it (killed is the grader's word,
    never a worker's); ProtocolError for anything else."""
    if status == CellOutcome.OK or status == CellOutcome.ERROR or status in STOPPED_IN_WORKER:
        return CellOutcome(status)
    raise ProtocolError("a code cell's outcome is not one a worker sends")


def _int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolError("an index is not an integer")
    return value

"""What can happen to a notebook and to a student, as data: `Status`, `Stop`, `CellOutcome`, `Finding`, `Incident`.

The status column of a gradebook is made of `Status` values, and the code
decides with them, never by reading the sentence it shows: a notebook's
outcome is the tuple of every status that applies (worst first), a student's
adds what intake found, what is missing and whether their marks are held for
review (`HOLD`: a notebook tried something beyond running its own code).
`Stop` says why the grader stopped a notebook's process, `CellOutcome` how
one of its code cells ended, `Finding` what its worker's watch saw it try.
`STATUS_OF` is the one table from what the sandbox and the checks report
(cells' and calls' outcomes, stops, findings, checks' statuses) to the
`Status` each gives a notebook. An `Incident` is the sentence a person reads,
carrying its kind (a `Status`, or None for a remark that changes no status)
as data.
"""

from __future__ import annotations

from enum import StrEnum

from ..checks.engine.calls import CallOutcome
from ..checks.engine.results import CheckStatus


class Status(StrEnum):
    """An outcome of a notebook or a student; its value is the word the status column shows."""

    # What made a notebook impossible to grade as itself.
    INVALID_NOTEBOOK = "invalid notebook"
    UNKNOWN_EXERCISE = "unknown exercise"
    EXERCISE_MISMATCH = "exercise mismatch"
    # An integrity finding: the instructor should look (the assignment file's policy says what it costs).
    HANDOUT_MISMATCH = "exercise 0 from another student's handout"
    # What a notebook tried beyond running its own code (`ATTEMPTS`): the instructor should look.
    TAMPERED = "tampered with the grader"
    USED_COURSE_CODE = "used the course's code"
    READ_COURSE_FILES = "read course files"
    READ_OUTSIDE = "read outside"
    SIGNAL = "signal"
    NETWORK = "network"
    WROTE_OUTSIDE = "wrote outside"
    DETACHED_PROCESS = "detached process"
    TOO_MANY_PROCESSES = "too many processes"
    # What went wrong while it ran.
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    OUT_OF_MEMORY = "out of memory"
    SYS_EXIT = "sys.exit"
    OUTPUT_FLOOD = "output flood"
    WROTE_FILES = "wrote files"
    MISSING_FUNCTIONS = "missing functions"
    CELL_ERRORS = "cell errors"
    GRADER_ERROR = "grader error"
    # A notebook with none of the above.
    NOT_IN_ASSIGNMENT = "not in the assignment"
    NOT_ATTEMPTED = "not attempted"
    OK = "ok"
    # A student's submission, as intake, the assignment and the deadline see it.
    HELD = "held for review"
    APPROVED = "approved after review"
    NO_NOTEBOOKS = "no notebooks"
    NO_SUBMISSION = "no submission"
    NOT_ON_ROSTER = "not on the roster"
    EXERCISE_MISSING = "exercise missing"
    IGNORED_FILES = "ignored files"
    DUPLICATES = "duplicates"
    LATE = "late"
    ADJUSTED = "adjusted"

    @classmethod
    def _missing_(cls, value):
        """A word a gradebook written before may hold for a status since renamed (`FORMER_WORDS`)."""
        return cls.__members__.get(FORMER_WORDS.get(value, ""))


FORMER_WORDS = {"released after review": "APPROVED"}
"""Statuses renamed since a gradebook could have stored them: the word it holds -> the member it now is (marks held
for review are approved with `gradebook approve`; "release" is making the students' notebooks)."""


ATTEMPTS = (Status.TAMPERED, Status.USED_COURSE_CODE, Status.READ_COURSE_FILES, Status.READ_OUTSIDE, Status.SIGNAL,
            Status.NETWORK, Status.WROTE_OUTSIDE, Status.DETACHED_PROCESS, Status.TOO_MANY_PROCESSES)
"""Statuses of a notebook that tried something beyond running its own code: the instructor should look."""

INTEGRITY = (Status.HANDOUT_MISMATCH,)
"""Statuses of a notebook whose work may not be its student's own (a notebook worked on another student's numbers):
held for review unless the assignment file's policy says otherwise (`integrity.handout_mismatch`)."""

WORST_FIRST = (Status.INVALID_NOTEBOOK, Status.UNKNOWN_EXERCISE, Status.EXERCISE_MISMATCH, *INTEGRITY, *ATTEMPTS,
               Status.CRASHED,
               Status.TIMEOUT, Status.OUT_OF_MEMORY, Status.SYS_EXIT, Status.OUTPUT_FLOOD, Status.WROTE_FILES,
               Status.MISSING_FUNCTIONS, Status.CELL_ERRORS, Status.GRADER_ERROR)
"""What can go wrong with a notebook, worst first: its status lists every one that applies, in this order."""

CLEAN = (Status.OK, Status.NOT_ATTEMPTED)
"""A notebook that ran without incident (whatever its answers)."""

HOLD = (*INTEGRITY, *ATTEMPTS)
"""A notebook with any of these statuses holds its student's marks for review: they are shown in the gradebook and
the feedback, and no file for the LMS carries them until the instructor approves them (`gradebook approve`). The
assignment's policy may grade an integrity finding instead of holding it (`score.holding`)."""

ROW_STATUSES = (Status.HELD, Status.APPROVED, Status.NO_SUBMISSION, Status.NOT_ON_ROSTER, Status.NO_NOTEBOOKS,
                Status.EXERCISE_MISSING, Status.IGNORED_FILES, Status.DUPLICATES, Status.LATE, Status.ADJUSTED)
"""What a student's row adds to their notebooks' statuses, in the order its status column shows them."""


def notebook_text(statuses: tuple[Status, ...], handout: str = "") -> str:
    """The status column of one notebook: its statuses, worst first, joined by commas ("timeout, cell errors"); a
    handout mismatch names whose handout it was (`handout`: "exercise 0 from another student's handout: s7002")."""
    said = [f"{s}: {handout}" if s == Status.HANDOUT_MISMATCH and handout else str(s)
            for s in WORST_FIRST if s in statuses]
    return ", ".join(said) or ", ".join(statuses)


class Stop(StrEnum):
    """Why the grader stopped a notebook's process before it finished."""

    TIME = "time"
    """A cell or a call ran past its time limit and did not stop when told to, or the notebook's budget ran out."""
    MEMORY = "memory"
    """The sandbox's processes together used more memory than allowed."""
    CHANNEL = "channel"
    """The result channel carried something other than the worker's frames, or was closed or replaced."""
    SANDBOX = "sandbox"
    """The sandbox itself could not start."""
    PROCESSES = "processes"
    """Stopped (for time or memory) while it had started as many processes as it may: they are the cause, whichever
    limit tripped first."""

    @property
    def status(self) -> Status:
        """What a cell or a call stopped this way gives the notebook's status (`STATUS_OF`)."""
        return STATUS_OF[Stop][self]


class CellOutcome(StrEnum):
    """How one code cell ended (`channel.CellReport.status`); its value is the word the worker's frames carry."""

    OK = "ok"
    ERROR = "error"
    """It raised an exception; the cells after it still ran."""
    TIMEOUT = "timeout"
    """Its worker's alarm stopped it at its time limit."""
    MEMORY = "memory"
    """It raised MemoryError."""
    EXIT = "exit"
    """It called sys.exit."""
    KILLED = "killed"
    """Its process died in it (the grader's word, never a worker's): stopped by the grader (`CellReport.stop` says
    why) or by itself."""


STOPPED_IN_WORKER = (CellOutcome.TIMEOUT, CellOutcome.MEMORY, CellOutcome.EXIT)
"""Cells the worker itself stopped (its alarm, a MemoryError, sys.exit), which went on to the next cell."""


class Finding(StrEnum):
    """What a notebook's worker's watch saw it try (`sandbox/watch.py`); its value is the word the worker's frames
    carry."""

    SIGNAL = "signal"
    NETWORK = "network"
    PROCESS = "process"
    """It started a process (counted apart: `runner._process_incidents`)."""
    PROCESS_LIMIT = "process limit"
    """It tried to start as many processes as the sandbox allows at once (its worker counts them)."""
    WRITE = "write outside"
    READ = "course files"
    OUTSIDE = "read outside"
    TAMPER = "tampered"
    COURSE_CODE = "course code"
    NUMPY = "numpy"
    """It replaced numpy's functions in its own process (only its own results could change: no status)."""
    INTROSPECT = "introspected"
    """It reached into its process's frames or objects, where the grader's own are."""
    CODE_READ = "course code read"
    """It read the code object of a course function (to run a copy of it, which the profiler would not see as the
    course's)."""


STATUS_OF: dict[type, dict] = {
    CellOutcome: {CellOutcome.OK: None, CellOutcome.ERROR: Status.CELL_ERRORS, CellOutcome.TIMEOUT: Status.TIMEOUT,
                  CellOutcome.MEMORY: Status.OUT_OF_MEMORY, CellOutcome.EXIT: Status.SYS_EXIT,
                  CellOutcome.KILLED: Status.CRASHED},
    CallOutcome: {CallOutcome.RETURNED: None, CallOutcome.NOT_IMPLEMENTED: None, CallOutcome.RAISED: None,
                  CallOutcome.SKIPPED: None, CallOutcome.TIMEOUT: Status.TIMEOUT,
                  CallOutcome.OUT_OF_MEMORY: Status.OUT_OF_MEMORY, CallOutcome.EXITED: Status.SYS_EXIT,
                  CallOutcome.MISSING: Status.MISSING_FUNCTIONS, CallOutcome.CRASHED: Status.CRASHED},
    Stop: {Stop.TIME: Status.TIMEOUT, Stop.MEMORY: Status.OUT_OF_MEMORY, Stop.CHANNEL: Status.TAMPERED,
           Stop.SANDBOX: Status.CRASHED, Stop.PROCESSES: Status.TOO_MANY_PROCESSES},
    Finding: {Finding.SIGNAL: Status.SIGNAL, Finding.NETWORK: Status.NETWORK, Finding.PROCESS: None,
              Finding.PROCESS_LIMIT: Status.TOO_MANY_PROCESSES, Finding.WRITE: Status.WROTE_OUTSIDE,
              Finding.READ: Status.READ_COURSE_FILES, Finding.OUTSIDE: Status.READ_OUTSIDE,
              Finding.TAMPER: Status.TAMPERED, Finding.COURSE_CODE: Status.USED_COURSE_CODE, Finding.NUMPY: None,
              Finding.INTROSPECT: Status.TAMPERED, Finding.CODE_READ: Status.USED_COURSE_CODE},
    CheckStatus: {CheckStatus.PASSED: None, CheckStatus.FAILED: None, CheckStatus.NOT_ATTEMPTED: Status.NOT_ATTEMPTED,
                  CheckStatus.MISSING: Status.MISSING_FUNCTIONS, CheckStatus.TIMEOUT: Status.TIMEOUT,
                  CheckStatus.SKIPPED: None, CheckStatus.ERROR: Status.GRADER_ERROR},
}
"""What each outcome the sandbox and the checks report gives a notebook's status, by the outcome's vocabulary (the
vocabularies share words: a cell's "error" is the notebook's, a check's "error" the grader's); None: none of its
own. A cell or a call the grader stopped gives its `Stop`'s instead of being killed's or crashed's; a process's
starts are said apart (`runner._process_incidents`); not attempted is said only of a notebook whose every check
says it, and nothing else (`judge._statuses`)."""


def status_of(outcome: CellOutcome | CallOutcome | Stop | Finding | CheckStatus) -> Status | None:
    """The status `outcome` gives a notebook (`STATUS_OF`), None for none."""
    return STATUS_OF[type(outcome)][outcome]


class Incident(str):
    """A sentence for people about what happened, with its kind (`kind`) as data for the code.

    It is the sentence itself (it prints, joins and compares as text); the
    code reads `kind`: the `Status` it gives, or None for a remark that gives
    none (say, that only the start of a long output was kept).
    """

    kind: Status | None

    def __new__(cls, text: str, kind: Status | None = None) -> Incident:
        incident = super().__new__(cls, text)
        incident.kind = None if kind is None else Status(kind)
        return incident

    def __reduce__(self):  # pickled whole (to and from a Dask worker), kind included
        return (Incident, (str(self), self.kind))

    def replace(self, old: str, new: str, count: int = -1) -> Incident:
        """The same incident with `old` replaced by `new` in its sentence (its kind kept)."""
        return Incident(str.replace(self, old, new, count), self.kind)

    def to_json(self) -> dict:
        return {"kind": self.kind, "text": str(self)}

    @classmethod
    def from_json(cls, data: dict) -> Incident:
        return cls(data["text"], data.get("kind"))

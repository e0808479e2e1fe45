"""What can happen to a notebook and to a student, as data: `Status`, `Stop` and `Incident`.

The status column of a gradebook is made of `Status` values, and the code
decides with them, never by reading the sentence it shows: a notebook's
outcome is the tuple of every status that applies (worst first), a student's
adds what intake found. `Stop` says why the grader stopped a notebook's
process. An `Incident` is the sentence a person reads, carrying its kind (a
`Status`, or None for a remark that changes no status) as data.
"""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    """An outcome of a notebook or a student; its value is the word the status column shows."""

    # What made a notebook impossible to grade as itself.
    INVALID_NOTEBOOK = "invalid notebook"
    UNKNOWN_EXERCISE = "unknown exercise"
    EXERCISE_MISMATCH = "exercise mismatch"
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
    # A student's submission, as intake and the deadline see it.
    NO_NOTEBOOKS = "no notebooks"
    NO_SUBMISSION = "no submission"
    NOT_ON_ROSTER = "not on the roster"
    DUPLICATES = "duplicates"
    LATE = "late"
    IGNORED_FILES = "ignored files"


ATTEMPTS = (Status.TAMPERED, Status.USED_COURSE_CODE, Status.READ_COURSE_FILES, Status.READ_OUTSIDE, Status.SIGNAL,
            Status.NETWORK, Status.WROTE_OUTSIDE, Status.DETACHED_PROCESS, Status.TOO_MANY_PROCESSES)
"""Statuses of a notebook that tried something beyond running its own code: the instructor should look."""

WORST_FIRST = (Status.INVALID_NOTEBOOK, Status.UNKNOWN_EXERCISE, Status.EXERCISE_MISMATCH, *ATTEMPTS, Status.CRASHED,
               Status.TIMEOUT, Status.OUT_OF_MEMORY, Status.SYS_EXIT, Status.OUTPUT_FLOOD, Status.WROTE_FILES,
               Status.MISSING_FUNCTIONS, Status.CELL_ERRORS, Status.GRADER_ERROR)
"""What can go wrong with a notebook, worst first: its status lists every one that applies, in this order."""

CLEAN = (Status.OK, Status.NOT_ATTEMPTED)
"""A notebook that ran without incident (whatever its answers)."""

ROW_STATUSES = (Status.NO_SUBMISSION, Status.NOT_ON_ROSTER, Status.DUPLICATES, Status.LATE)
"""What a student's row adds to their notebooks' statuses."""


def notebook_text(statuses: tuple[Status, ...]) -> str:
    """The status column of one notebook: its statuses, worst first, joined by commas ("timeout, cell errors")."""
    return ", ".join(s for s in WORST_FIRST if s in statuses) or ", ".join(statuses)


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

    @property
    def status(self) -> Status:
        """What a cell or a call stopped this way gives the notebook's status."""
        return {Stop.TIME: Status.TIMEOUT, Stop.MEMORY: Status.OUT_OF_MEMORY,
                Stop.CHANNEL: Status.TAMPERED}.get(self, Status.CRASHED)


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

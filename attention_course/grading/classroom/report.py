"""The gradebook report as typed records: what scoring makes (`score.build_report`) and every file is written from.

A `Report` holds the assignment, what each exercise and check is worth
(`ExerciseInfo`, `CheckWorth`), the instructor's decisions (`Decisions`: the
`Adjustment`s and `Approval`s), what intake found (`IntakeFound`) and one `Row`
per student: what grading found (the points each exercise's checks gave, days
late, statuses, the feedback on each check, every notebook as a
`NotebookRecord` with its checks' `CheckResult`s and its `Incident`s), then,
settled under the decisions (`score.settle`), the exercise columns, penalty,
total, statuses, status and feedback cell.

The records are frozen; a change is a new record (`dataclasses.replace`).
JSON is only at the file's edge: `Report.to_json` and `Report.from_json` (used
by `write/gradebook.py`'s `write_report` and `read_report`) keep the layout of
the JSON report as it has always been written, so a report written by an
earlier version reads and writes again unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from ..checks.engine import results
from ..run.judge import NotebookGrade
from ..run.status import Incident, Status


class ReportFormatError(ValueError):
    """JSON that is not a gradebook report this version of attention-course reads."""


@dataclass(frozen=True)
class CheckWorth:
    """What one check of an exercise is worth under the report's assignment."""

    points: float
    """Its points (all of them for every input passed)."""
    inputs: int
    """The inputs it tries."""
    hidden_inputs: int
    """How many of them only the grader tries."""


@dataclass(frozen=True)
class ExerciseInfo:
    """One exercise of the report's assignment: a column of the gradebook."""

    title: str
    """The exercise's title."""
    chapter: str
    """The chapter it belongs to (`book/<chapter>.ipynb`)."""
    points: float
    """What the exercise is worth."""
    max_score: int
    """The inputs its checks try, together."""
    checks: Mapping[str, CheckWorth]
    """Check name -> what it is worth, in the assignment's order."""


@dataclass(frozen=True)
class NotebookRecord:
    """One notebook of a row, as graded: its status (words and data), incidents, every check and input."""

    path: str
    """The notebook's path."""
    file: str
    """Its file name."""
    exercise: str | None
    """The exercise it was recognised as, or None."""
    status: str
    """Its status column's words (`status.notebook_text`)."""
    handout: str
    """The student id its handout was made for, when that is another student's; else ""."""
    statuses: tuple[Status, ...]
    """Every outcome that applies, worst first."""
    score: int
    """Inputs passed, over all checks."""
    max_score: int
    """Inputs tried, over all checks (the exercise's maximum)."""
    seconds: float
    """Wall-clock time to run and judge it (ms kept)."""
    incidents: tuple[Incident, ...]
    """What went wrong while it ran, each with its kind."""
    output: str
    """The start of what it printed."""
    checks: tuple[results.CheckResult, ...]
    """One result per check, every input's (the arguments of a smaller failing input are not kept)."""

    @classmethod
    def of(cls, nb: NotebookGrade) -> NotebookRecord:
        """The record of a notebook's grade."""
        return cls(nb.path, Path(nb.path).name, nb.exercise, nb.status, nb.handout, tuple(nb.statuses), nb.score,
                   nb.max_score, round(nb.seconds, 3), tuple(Incident(i, getattr(i, "kind", None)) for i in nb.incidents),
                   nb.output, tuple(_as_kept(c) for c in nb.checks))

    def grade(self) -> NotebookGrade:
        """The notebook's grade again (a regrade keeps the exercises it was not given)."""
        return NotebookGrade(self.path, self.exercise, list(self.checks), self.statuses, list(self.incidents),
                             self.output, self.seconds, self.handout)

    def to_json(self) -> dict:
        return {"path": self.path, "file": self.file, "exercise": self.exercise, "status": self.status,
                "handout": self.handout, "statuses": list(self.statuses), "score": self.score,
                "max_score": self.max_score, "seconds": self.seconds,
                "incidents": [i.to_json() for i in self.incidents], "output": self.output,
                "checks": [dataclasses.asdict(c) for c in self.checks]}

    @classmethod
    def from_json(cls, data: dict) -> NotebookRecord:
        return cls(data["path"], data.get("file", Path(data["path"]).name), data["exercise"], data.get("status", ""),
                   data.get("handout", ""), tuple(Status(s) for s in data["statuses"]), data.get("score", 0),
                   data.get("max_score", 0), data.get("seconds", 0.0),
                   tuple(Incident.from_json(i) for i in data["incidents"]), data.get("output", ""),
                   tuple(check_from_json(c) for c in data["checks"]))


def _as_kept(check: results.CheckResult) -> results.CheckResult:
    """A check's result as the report keeps it: without the arguments of its smaller failing input, each input a
    record of its own (as read back from the file, so that what is written from a report just made and from one read
    again is the same)."""
    return check_from_json(dataclasses.asdict(dataclasses.replace(check, smallest_input=None)))


def check_from_json(data: dict) -> results.CheckResult:
    """A check's result as the report keeps it (`dataclasses.asdict`, without `smallest_input`)."""
    def case(fields: dict) -> results.CaseResult:
        names = {f.name for f in dataclasses.fields(results.CaseResult)}
        kept = {k: v for k, v in fields.items() if k in names}
        kept["matches"] = tuple(kept.get("matches", ()))
        kept.pop("unpredicted", None)  # what judging weighed, done with once the check was judged
        kept["status"] = results.CheckStatus(kept["status"])
        return results.CaseResult(**kept)

    names = {f.name for f in dataclasses.fields(results.CheckResult)}
    fields = {k: v for k, v in data.items() if k in names}
    fields["status"] = results.CheckStatus(fields["status"])
    fields["cases"] = tuple(case(c) for c in data.get("cases", ()))
    if isinstance(fields.get("smallest"), dict):
        fields["smallest"] = case(fields["smallest"])
    fields.pop("smallest_input", None)  # its arguments are not kept in a report
    return results.CheckResult(**fields)


@dataclass(frozen=True)
class Adjustment:
    """Points an instructor adds to (or takes from) one student's exercise, with the reason the student is shown."""

    student: str
    """The row's key (as the adjustments file gave it, until `adjustments.resolve_adjustments` finds the student)."""
    exercise: str
    """The exercise's id."""
    points: float
    """Added, or taken when negative (kept within 0 and the exercise's points, before the late rule)."""
    reason: str
    """Shown to the student."""
    given: str | None = None
    """How the adjustments file named the student (None before it was resolved)."""

    def to_json(self) -> dict:
        out = {"student": self.student, "exercise": self.exercise, "points": self.points, "reason": self.reason}
        return out if self.given is None else {**out, "given": self.given}

    @classmethod
    def from_json(cls, data: dict) -> Adjustment:
        return cls(data["student"], data["exercise"], data["points"], data["reason"], data.get("given"))


@dataclass(frozen=True)
class Approval:
    """The decision that approves a student's marks held for review: they count."""

    student: str
    """The row's key."""
    statuses: tuple[str, ...]
    """The statuses that were looked at."""
    note: str
    """What the instructor found."""
    when: str
    """When (ISO 8601)."""

    def to_json(self) -> dict:
        return {"student": self.student, "statuses": list(self.statuses), "note": self.note, "when": self.when}

    @classmethod
    def from_json(cls, data: dict) -> Approval:
        return cls(data["student"], tuple(data["statuses"]), data["note"], data["when"])


@dataclass(frozen=True)
class Decisions:
    """The instructor's decisions, kept by the report so that they survive a regrade, shards and merges."""

    adjustments: tuple[Adjustment, ...] = ()
    """At most one per student and exercise."""
    approvals: tuple[Approval, ...] = ()
    """At most one per student."""

    def to_json(self) -> dict:
        return {"adjustments": [a.to_json() for a in self.adjustments], "approvals": [a.to_json() for a in self.approvals]}

    @classmethod
    def from_json(cls, data: dict) -> Decisions:
        return cls(tuple(Adjustment.from_json(a) for a in data.get("adjustments", [])),
                   tuple(Approval.from_json(a) for a in data.get("approvals", data.get("releases", []))))


@dataclass(frozen=True)
class Row:
    """One student: what grading found (`score.row`), then, once settled under the decisions (`score.settle`), the
    gradebook's columns."""

    key: str
    """The row's key: the student id, else the submission's name."""
    name: str
    """The student's name."""
    order: int = 0
    """Its place in the class's gradebook."""
    student_id: str = ""
    """The roster's student id, or ""."""
    email: str = ""
    """The roster's e-mail, or ""."""
    path: str = ""
    """The submission's path ("" for nothing submitted)."""
    checked: Mapping[str, float] = field(default_factory=dict)
    """Exercise -> the points its checks gave (the notebook that counted), before adjustments and the late rule."""
    days_late: int = 0
    """Started days past the student's deadline."""
    submitted: str | None = None
    """When it was submitted (ISO 8601), if known."""
    marked_late: bool = False
    """Whether the LMS marked it late."""
    timing: str = "nothing"
    """Where its time came from (`intake.Timing`)."""
    found: tuple[Status, ...] = ()
    """What grading found: the notebooks' statuses and what intake, the assignment and the deadline add."""
    notebook_status: str = ""
    """The notebooks' part of the status column."""
    missing: tuple[str, ...] = ()
    """The exercises with no notebook."""
    ignored: tuple[str, ...] = ()
    """The files intake ignored."""
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Exercise -> the feedback cell's words on the notebook that counted."""
    elsewhere: tuple[str, ...] = ()
    """The incidents of the notebooks that did not count, each with its file's name."""
    issues: tuple[Incident, ...] = ()
    """What intake and scoring found of the submission (duplicates, ignored files, not on the roster)."""
    student: Mapping[str, str] = field(default_factory=dict)
    """The roster's line (its ids, section, ...)."""
    lms: Mapping[str, str] = field(default_factory=dict)
    """What the LMS download said of the submission (its ids, the names it gave the files)."""
    counted: Mapping[str, str] = field(default_factory=dict)
    """Exercise -> the path of the notebook that counted."""
    notebooks: tuple[NotebookRecord, ...] = ()
    """Every notebook, as graded."""
    points: Mapping[str, float] = field(default_factory=dict)
    """Exercise -> its column: the points with the adjustments, before the late rule (settled)."""
    late: str = ""
    """The late column ("2 days")."""
    penalty: float = 0
    """The points the late rule took."""
    total: float = 0
    """The total column."""
    max_total: float = 0
    """The assignment's points."""
    statuses: tuple[Status, ...] = ()
    """Held or approved, what grading found, adjusted (settled)."""
    held: tuple[Status, ...] = ()
    """The statuses that hold the marks for review, worst first."""
    approval: Approval | None = None
    """The decision that approved them, if any."""
    adjustments: tuple[Adjustment, ...] = ()
    """The adjustments applied to this row."""
    status: str = ""
    """The status column."""
    feedback: str = ""
    """The feedback cell."""

    def counted_notebooks(self) -> dict[str, NotebookRecord]:
        """Exercise -> the notebook that counted for it."""
        by_path = {nb.path: nb for nb in self.notebooks}
        return {ex: by_path[path] for ex, path in self.counted.items() if path in by_path}

    def to_json(self) -> dict:
        return {
            "key": self.key, "order": self.order, "student_id": self.student_id, "name": self.name,
            "email": self.email, "path": self.path, "checked": dict(self.checked), "days_late": self.days_late,
            "submitted": self.submitted, "marked_late": self.marked_late, "timing": self.timing,
            "found": list(self.found), "notebook_status": self.notebook_status, "missing": list(self.missing),
            "ignored": list(self.ignored), "notes": {ex: list(n) for ex, n in self.notes.items()},
            "elsewhere": list(self.elsewhere), "issues": [i.to_json() for i in self.issues],
            "student": dict(self.student), "lms": dict(self.lms), "counted": dict(self.counted),
            "notebooks": [nb.to_json() for nb in self.notebooks], **self.points,
            "late": self.late, "penalty": self.penalty, "total": self.total, "max_total": self.max_total,
            "statuses": [str(s) for s in self.statuses], "held": [str(s) for s in self.held],
            "approval": self.approval.to_json() if self.approval is not None else None,
            "adjustments": [a.to_json() for a in self.adjustments], "status": self.status, "feedback": self.feedback,
        }

    @classmethod
    def from_json(cls, data: dict, exercises: tuple[str, ...]) -> Row:
        """A row as `to_json` wrote it; `exercises`: the report's, whose columns it carries."""
        approval = data.get("approval", data.get("release"))  # "release": a gradebook written before
        return cls(
            key=data["key"], name=data["name"], order=data["order"], student_id=data.get("student_id", ""),
            email=data.get("email", ""), path=data.get("path", ""), checked=dict(data["checked"]),
            days_late=data["days_late"], submitted=data.get("submitted"), marked_late=bool(data.get("marked_late")),
            timing=data.get("timing", "nothing"), found=tuple(Status(s) for s in data["found"]),
            notebook_status=data.get("notebook_status", ""), missing=tuple(data.get("missing", ())),
            ignored=tuple(data.get("ignored", ())), notes={ex: tuple(n) for ex, n in data.get("notes", {}).items()},
            elsewhere=tuple(data.get("elsewhere", ())), issues=tuple(Incident.from_json(i) for i in data.get("issues", ())),
            student=dict(data.get("student", {})), lms=dict(data.get("lms", {})), counted=dict(data.get("counted", {})),
            notebooks=tuple(NotebookRecord.from_json(nb) for nb in data.get("notebooks", ())),
            points={ex: data[ex] for ex in exercises if ex in data}, late=data.get("late", ""),
            penalty=data.get("penalty", 0), total=data.get("total", 0), max_total=data.get("max_total", 0),
            statuses=tuple(Status(s) for s in data.get("statuses", ())), held=tuple(Status(s) for s in data.get("held", ())),
            approval=Approval.from_json(approval) if approval else None,
            adjustments=tuple(Adjustment.from_json(a) for a in data.get("adjustments", ())),
            status=data.get("status", ""), feedback=data.get("feedback", ""),
        )


@dataclass(frozen=True)
class IntakeFound:
    """What intake found and left to the instructor: the report's lists, read from its rows (`score.report`)."""

    roster: str = ""
    """Where the class came from (the roster's words)."""
    lateness: str = ""
    """Where lateness came from."""
    left_out: tuple[str, ...] = ()
    """What intake left out of the download."""
    notes: tuple[str, ...] = ()
    """What the download held that was refused or belongs to no student."""
    no_submission: tuple[str, ...] = ()
    """The students with nothing submitted."""
    not_on_roster: tuple[str, ...] = ()
    """The submissions of no one on the roster."""
    exercise_missing: tuple[str, ...] = ()
    """"<name>: <exercises>" for each student missing exercises."""
    duplicates: tuple[str, ...] = ()
    """"<name>: <what>" for each exercise handed in twice."""
    ignored_files: tuple[str, ...] = ()
    """"<name>: <what>" for each submission with files that are no notebook."""
    held: tuple[str, ...] = ()
    """"<name>: <statuses>" for each student whose marks are held for review."""
    adjustments_unused: tuple[str, ...] = ()
    """"<student>, <exercise>" for each adjustment of no one in the report."""

    def to_json(self) -> dict:
        return {name: value if isinstance(value, str) else list(value)
                for name, value in ((f.name, getattr(self, f.name)) for f in dataclasses.fields(self))}

    @classmethod
    def from_json(cls, data: dict) -> IntakeFound:
        return cls(**{f.name: (data.get(f.name, "") if f.type == "str" else tuple(data.get(f.name, ())))
                      for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Report:
    """A gradebook report: the assignment, the decisions, what intake found, and one row per student."""

    generated: str
    """When it was made (ISO 8601)."""
    version: str
    """The attention-course that made it."""
    settings: Mapping
    """How it was graded (limits, workers, the sandbox; `{"merged": [...]}` for a merge of several)."""
    assignment: Mapping
    """The assignment (`Assignment.to_dict`: its secret seed left out)."""
    assignment_fingerprint: str
    """Changes whenever anything that affects the marks changes (reports merge only if equal)."""
    exercises: Mapping[str, ExerciseInfo]
    """Exercise id -> what it is worth, in the assignment's order: the gradebook's columns."""
    decisions: Decisions
    """The instructor's adjustments and approvals."""
    intake: IntakeFound
    """What intake found."""
    rows: tuple[Row, ...]
    """One per student, in the class's order, settled."""
    exports: str | None = None
    """Where the files written from it last went, relative to the gradebook's folder (None: never)."""

    @property
    def title(self) -> str:
        """The assignment's title."""
        return self.assignment["title"]

    @property
    def hidden(self) -> bool:
        """Whether the hidden inputs were tried."""
        return bool(self.assignment["hidden"])

    @property
    def max_total(self) -> float:
        """The assignment's points."""
        return self.assignment["max_total"]

    @property
    def canvas_assignment_id(self) -> str | None:
        """The assignment's id in Canvas, if the assignment file gives it."""
        return self.assignment.get("canvas_assignment_id")

    def to_json(self) -> dict:
        """The report as its JSON file holds it."""
        return {
            "generated": self.generated, "attention_course": self.version, "settings": self.settings,
            "assignment": self.assignment, "assignment_fingerprint": self.assignment_fingerprint,
            "exercises": {ex: {"title": e.title, "chapter": e.chapter, "points": e.points, "max_score": e.max_score,
                               "checks": {name: dataclasses.asdict(c) for name, c in e.checks.items()}}
                          for ex, e in self.exercises.items()},
            "decisions": self.decisions.to_json(), "intake": self.intake.to_json(),
            "submissions": [r.to_json() for r in self.rows], "exports": self.exports,
        }

    @classmethod
    def from_json(cls, data: object) -> Report:
        """A report from its JSON file's content; ReportFormatError if it is none of this version's."""
        if not isinstance(data, dict) or "submissions" not in data or "assignment_fingerprint" not in data:
            raise ReportFormatError("not a gradebook report of this version of attention-course (no submissions or "
                                    "assignment)")
        if any("found" not in row or "checked" not in row for row in data["submissions"]):
            raise ReportFormatError("a report written by an older attention-course (its rows do not keep what "
                                    "grading found apart from the decisions); grade the class again")
        exercises = {ex: ExerciseInfo(e["title"], e["chapter"], e["points"], e["max_score"],
                                      {name: CheckWorth(**c) for name, c in e["checks"].items()})
                     for ex, e in data["exercises"].items()}
        ids = tuple(exercises)
        return cls(data.get("generated", ""), data.get("attention_course", ""), data.get("settings", {}),
                   data["assignment"], data["assignment_fingerprint"], exercises,
                   Decisions.from_json(data.get("decisions", {})), IntakeFound.from_json(data.get("intake", {})),
                   tuple(Row.from_json(r, ids) for r in data["submissions"]), data.get("exports"))

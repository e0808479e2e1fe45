"""Scoring: from graded notebooks to a gradebook report, under the assignment's rules and the instructor's decisions.

Everything that turns inputs passed into marks is here, and nowhere else:
a check's points (`check_mark`: its points times the share of inputs
passed), a notebook's, the best attempt at each exercise (`best_notebooks`:
a student who handed in two notebooks for one exercise gets the better),
the late rule with each student's own deadline (`days_late`, `late_factor`),
what a regrade keeps of the earlier grading (`carry_over`: the exercises it
was given no notebook for), the manual adjustments (read by `adjustments`) and
the review of held marks.

A student's row is made in two steps. `row` records what grading found:
the points each exercise's checks gave, the days late, every status (the
notebooks', what intake found, the exercises missing), the feedback on each
check. `settle` then applies the instructor's decisions, which may come
later than the grading (`gradebook adjust`, `gradebook approve`) and survive
a regrade, shards and merges because the report keeps them: the adjustments
(points added to or taken from an exercise, kept within 0 and its points,
before the late rule), and whether marks held for review (`status.HOLD`: a
notebook tried something beyond running its own code) were approved. It
writes the exercise columns, the penalty, the total, the status and the
feedback cell. `report` puts the rows, the assignment and the decisions
together into the report (`report.Report`, saved as JSON at the file's edge)
that every file is written from (`write/`).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ... import __version__
from ..checks.engine import results
from .batch import SubmissionGrade
from .intake import OWN_TIME, Timing
from ..run.judge import NotebookGrade
from .people import Found, Matcher
from .report import Adjustment, Decisions, ExerciseInfo, IntakeFound, NotebookRecord, Approval, Report, Row
from ..run.status import HOLD, WORST_FIRST, Incident, Status

def round_marks(x: float) -> float | int:
    """Marks to two decimals; whole numbers as ints, so the default gradebook reads as it always has."""
    x = round(float(x), 2)
    return int(x) if x == int(x) else x


@dataclass(frozen=True)
class LateRule:
    """What a late submission costs (`late_factor` applies it)."""

    grace_minutes: float = 0.0
    """Submissions at most this late count as on time."""
    penalty_per_day: float = 0.0
    """Fraction of the marks taken per started day late (0.1: 10 % a day)."""
    max_days: float = 0.0
    """Submissions later than this many days score 0 (0: no limit)."""


@dataclass(frozen=True)
class Marking:
    """Everything scoring needs of an assignment, resolved once before scoring (`Assignment.marking`, after
    `names.resolve_names`): its exercises with their points and each check's, the late rule, the deadlines, the
    policies, and the description and fingerprint the report keeps."""

    exercises: Mapping[str, ExerciseInfo]
    """Exercise id -> its title, points and checks' worth, in the assignment's order."""
    late: LateRule
    """The late rule."""
    deadline: dt.datetime | None
    """When submissions are due (timezone-aware), or None."""
    extensions: Mapping[str, dt.datetime]
    """Row key -> that student's own deadline."""
    names_missing: bool
    """Whether a student with no notebook for an exercise is told it is missing (an instructor's assignment file)."""
    handout_mismatch: str
    """The policy for exercise 0 worked on another student's handout ("hold", "grade" or "zero")."""
    description: Mapping
    """The assignment as the report keeps it (`Assignment.to_dict`)."""
    fingerprint: str
    """Changes whenever anything that affects the marks changes (`Assignment.fingerprint`)."""

    @property
    def ids(self) -> tuple[str, ...]:
        """The exercise ids, in order."""
        return tuple(self.exercises)

    def deadline_for(self, key: str) -> dt.datetime | None:
        """The deadline of one student (their row key): their extension if they have one, else the assignment's."""
        return self.extensions.get(key, self.deadline) if key else self.deadline


def check_mark(points: float, passed: int, tried: int) -> float | int:
    """What a check worth `points` earns when `passed` of the `tried` inputs pass."""
    return round_marks(points * passed / tried) if tried else 0


def check_points(marking: Marking, exercise_id: str, check_name: str, passed: int, tried: int) -> float | int:
    """The points a check of the assignment earns when `passed` of the `tried` inputs pass."""
    return check_mark(marking.exercises[exercise_id].checks[check_name].points, passed, tried)


def notebook_points(marking: Marking, nb: NotebookGrade) -> float:
    """What one notebook earns under the assignment (0 for an exercise it does not grade)."""
    if nb.exercise is None or nb.exercise not in marking.exercises:
        return 0
    return sum(check_points(marking, nb.exercise, c.check, c.score, c.max_score) for c in nb.checks)


def best_notebooks(grade: SubmissionGrade, marking: Marking) -> dict[str, NotebookGrade]:
    """The best-scoring notebook of each exercise of the assignment (the first of equals): the attempt that counts."""
    best: dict[str, NotebookGrade] = {}
    for nb in grade.notebooks:
        if nb.exercise not in marking.exercises:
            continue
        if nb.exercise not in best or notebook_points(marking, nb) > notebook_points(marking, best[nb.exercise]):
            best[nb.exercise] = nb
    return best


def days_late(marking: Marking, submitted: dt.datetime | None, marked_late: bool = False,
              student_id: str = "") -> int:
    """Started days past the student's deadline (their extension, else the assignment's) and its grace; 0 when on
    time. An LMS's late mark counts 1 day when no time is known, unless the student has an extension: the LMS
    judged lateness against its own deadline. `student_id`: the row's key, which the extensions name once
    `names.resolve_names` has found each student."""
    deadline = marking.deadline_for(student_id)
    days = 0
    if deadline is not None and submitted is not None:
        late_by = submitted - deadline - dt.timedelta(minutes=marking.late.grace_minutes)
        if late_by > dt.timedelta(0):
            days = math.ceil(late_by / dt.timedelta(days=1))
    extended = student_id in marking.extensions
    return max(days, 1 if marked_late and submitted is None and not extended else 0)


def late_factor(rule: LateRule, days: int) -> float:
    """What a submission `days` started days late keeps of its marks (1.0 when on time)."""
    if days <= 0:
        return 1.0
    if rule.max_days and days > rule.max_days:
        return 0.0
    return max(0.0, 1.0 - rule.penalty_per_day * days)


# ---------------------------------------------------------------------------------------------- grading -> row


def _distinct_names(paths: list[str]) -> dict[str, str]:
    """Path -> its file name, or, where two share one (`05_causal_mask.ipynb` in two folders of one submission), its
    path below the folder they share."""
    names = {p: Path(p).name for p in paths}
    if len(set(names.values())) == len(names):
        return names
    common = os.path.commonpath([str(Path(p).parent) for p in paths])
    return {p: Path(os.path.relpath(p, common)).as_posix() for p in paths}


def row(grade: SubmissionGrade, marking: Marking) -> Row:
    """What grading found of one student (the report's row before `settle`): points from the checks, days late,
    statuses, the feedback on each check, the notebooks."""
    sub = grade.submission
    best = best_notebooks(grade, marking)
    issues = list(sub.issues)
    for ex in marking.ids:
        copies = [nb for nb in grade.notebooks if nb.exercise == ex]
        if len(copies) > 1:
            name = _distinct_names([nb.path for nb in copies])
            listed = ", ".join(f"{name[nb.path]} ({round_marks(notebook_points(marking, nb))})" for nb in copies)
            issues.append(Incident(f"{len(copies)} notebooks for {ex}: {listed}; {name[best[ex].path]} counts "
                                   "(the best attempt counts)", Status.DUPLICATES))
    nothing = bool(sub.student) and not sub.path
    missing = [] if nothing or not marking.names_missing else [ex for ex in marking.ids if ex not in best]
    days = days_late(marking, dt.datetime.fromisoformat(sub.submitted) if sub.submitted else None,
                     sub.marked_late, sub.key)
    statuses = _row_statuses(grade, issues, days, missing, nothing)
    return Row(
        key=sub.key, order=sub.order, student_id=sub.student.get("student_id", ""), name=sub.name,
        email=sub.student.get("email", ""), path=sub.path,
        checked={ex: _counted_points(marking, best[ex]) if ex in best else 0 for ex in marking.ids},
        days_late=days, submitted=sub.submitted, marked_late=sub.marked_late, timing=str(sub.timing),
        found=statuses, notebook_status="" if nothing else notebooks_text(grade.notebooks),
        missing=tuple(missing), ignored=tuple(sub.ignored),
        notes={ex: tuple(_check_feedback(nb)) for ex, nb in best.items()},
        elsewhere=tuple(f"{Path(nb.path).name}: {i}" for nb in grade.notebooks
                        if nb.exercise is None or nb is not best.get(nb.exercise) for i in nb.incidents),
        issues=tuple(Incident(i, i.kind) for i in issues), student=dict(sub.student), lms=dict(sub.lms),
        counted={ex: nb.path for ex, nb in best.items()},
        notebooks=tuple(NotebookRecord.of(nb) for nb in grade.notebooks),
    )


def _counted_points(marking: Marking, nb: NotebookGrade) -> float | int:
    """What the notebook that counts for an exercise earns: its points, or 0 for exercise 0 worked on another
    student's handout when the assignment's policy says "zero"."""
    if Status.HANDOUT_MISMATCH in nb.statuses and marking.handout_mismatch == "zero":
        return 0
    return round_marks(notebook_points(marking, nb))


def holding(assignment: Mapping) -> tuple[Status, ...]:
    """The statuses that hold a student's marks for review under an assignment (its `to_dict`): every one of `HOLD`,
    but a handout mismatch only under the policy "hold"."""
    policy = assignment.get("integrity", {}).get("handout_mismatch", "hold")
    return tuple(s for s in HOLD if s != Status.HANDOUT_MISMATCH or policy == "hold")


def _row_statuses(grade: SubmissionGrade, issues: list[Incident], days: int, missing: list[str],
                  nothing: bool) -> tuple[Status, ...]:
    """What grading found of a student: nothing submitted; or their notebooks' statuses and what intake, the
    assignment and the deadline add."""
    if nothing:
        return (Status.NO_SUBMISSION,)
    kinds = {i.kind for i in issues}
    found = {s for s in (Status.NOT_ON_ROSTER, Status.DUPLICATES, Status.IGNORED_FILES) if s in kinds}
    found |= {s for nb in grade.notebooks for s in nb.statuses}
    found |= {Status.NO_NOTEBOOKS} if not grade.notebooks else set()
    found |= {Status.EXERCISE_MISSING} if missing else set()
    found |= {Status.LATE} if days else set()
    return tuple(sorted(found, key=list(Status).index))


def notebooks_text(notebooks: list[NotebookGrade]) -> str:
    """The notebooks' part of a status column: their status when they share one, else each one that is not ok,
    by its file name (and the exercise it is, when the name does not say)."""
    if len({nb.status for nb in notebooks}) <= 1:
        return notebooks[0].status if notebooks else ""

    def named(nb: NotebookGrade) -> str:
        stem = Path(nb.path).stem
        return stem if not nb.exercise or stem.startswith(nb.exercise) else f"{stem} ({nb.exercise})"

    return "; ".join(f"{named(nb)}: {nb.status}" for nb in notebooks if nb.statuses != (Status.OK,))


def _check_feedback(nb: NotebookGrade) -> list[str]:
    """The feedback cell's words on the notebook that counted for an exercise: each check that did not pass, and
    what happened while it ran."""
    parts = []
    for check in nb.checks:
        if check.status == results.CheckStatus.PASSED:
            continue
        if check.status == results.CheckStatus.NOT_ATTEMPTED:
            parts.append(f"{check.function}: not attempted")
            continue
        said = student_message(check)
        if check.smallest is not None and not check.smallest.hidden:  # it shows no input: it names the one it means
            said = f"on the input \"{check.smallest.label}\": {said}"
        text = f"{check.function} {check.score}/{check.max_score}: {said}"
        text += f" Hint: {check.hint}" if check.hint else ""
        others = [c.label for c in check.cases if not c.passed and c.status != results.CheckStatus.SKIPPED
                  and c is not check.first_failure]
        if check.every_failure and others:  # each a question of its own: every one named
            text += f" Also wrong: {'; '.join(others)}."
        parts.append(text)
    return parts + [str(i) for i in nb.incidents]


def student_message(check: results.CheckResult) -> str:
    """A check's message as a student may read it: when its first failure is a hidden input, only its label."""
    first = check.first_failure
    if first is not None and first.hidden and check.status == results.CheckStatus.FAILED:
        return f"wrong on an input only the grader tries: {first.label}."
    return check.message


def carry_over(grade: SubmissionGrade, old: Row | None, marking: Marking) -> SubmissionGrade:
    """A regrade of one student: the notebooks given now, and from their earlier row the notebooks of each exercise
    the regrade was given none for (a resubmitted notebook replaces only its own exercise), and when they submitted
    unless the new submission says so itself (`intake.OWN_TIME`: a times file, Moodle's worksheet, Canvas's late
    mark; never the modification times of files copied about)."""
    if old is None:
        return grade
    given = {nb.exercise for nb in grade.notebooks if nb.exercise in marking.exercises}
    kept = [nb.grade() for nb in old.notebooks
            if nb.exercise in marking.exercises and nb.exercise not in given and nb.path in old.counted.values()]
    sub = grade.submission
    if sub.timing not in OWN_TIME:
        sub = dataclasses.replace(sub, submitted=old.submitted, marked_late=old.marked_late,
                                  timing=Timing(old.timing or Timing.NONE))
    return dataclasses.replace(grade, submission=sub, notebooks=[*grade.notebooks, *kept])


# ---------------------------------------------------------------------------------------------- decisions


def approval(key: str, held: list[str], note: str, when: str | None = None) -> Approval:
    """The decision that approves a student's held marks (they count): which statuses were looked at, why, when."""
    return Approval(key, tuple(str(s) for s in held), note, when or time.strftime("%Y-%m-%dT%H:%M:%S%z"))


def merge_decisions(*decisions: Decisions) -> Decisions:
    """Decisions of several reports as one: a later report's adjustment (for one student and exercise) and approval
    (for one student) replace an earlier one's."""
    adjustments: dict[tuple[str, str], Adjustment] = {}
    approvals: dict[str, Approval] = {}
    for d in decisions:
        for a in d.adjustments:
            adjustments[(a.student, a.exercise)] = a
        for a in d.approvals:
            approvals[a.student] = a
    return Decisions(tuple(adjustments.values()), tuple(approvals.values()))


def settle(row: Row, exercises: Mapping[str, ExerciseInfo], late: LateRule, decisions: Decisions,
           hold: tuple[Status, ...] = HOLD) -> Row:
    """A row with the decisions applied: the exercise columns, penalty, total, statuses, status and feedback cell;
    `hold`: the statuses that hold marks for review (`holding`)."""
    adjustments = tuple(a for a in decisions.adjustments if a.student == row.key)
    points = {}
    for ex, info in exercises.items():
        change = sum(a.points for a in adjustments if a.exercise == ex)
        points[ex] = round_marks(min(max(row.checked.get(ex, 0) + change, 0), info.points))
    raw = sum(points.values())
    total = round_marks(raw * late_factor(late, row.days_late))
    held = tuple(s for s in WORST_FIRST if s in hold and s in row.found)
    decided = next((a for a in decisions.approvals if a.student == row.key), None)
    approved = bool(held) and decided is not None and set(held) <= set(decided.statuses)
    review = (Status.APPROVED if approved else Status.HELD,) if held else ()
    days = row.days_late
    out = dataclasses.replace(row, points=points, late=f"{days} day{'s' if days > 1 else ''}" if days else "",
                              penalty=round_marks(raw - total), total=total,
                              max_total=round_marks(sum(info.points for info in exercises.values())),
                              statuses=(*review, *row.found, *((Status.ADJUSTED,) if adjustments else ())),
                              held=held, approval=decided if approved else None, adjustments=adjustments)
    return dataclasses.replace(out, status=status_text(out), feedback=feedback_cell(out, exercises, late))


def status_text(row: Row) -> str:
    """The status column: held or approved, then what grading found, "; " between (the notebooks' own statuses as
    `notebook_text` words them); "ok" only when nothing else is to be said."""
    statuses = set(row.statuses)
    if Status.NO_SUBMISSION in statuses:
        return Status.NO_SUBMISSION
    head = []
    if Status.HELD in statuses:
        head.append(f"{Status.HELD} ({', '.join(row.held)})")
    elif Status.APPROVED in statuses:
        head.append(f"{Status.APPROVED} ({', '.join(row.held)})")
    if Status.NOT_ON_ROSTER in statuses:
        head.append(Status.NOT_ON_ROSTER)
    tail = []
    if row.missing:
        tail.append(f"{Status.EXERCISE_MISSING}: {', '.join(row.missing)}")
    if row.ignored:
        tail.append(f"{Status.IGNORED_FILES}: {', '.join(row.ignored)}")
    tail += [s for s in (Status.DUPLICATES, Status.LATE, Status.ADJUSTED) if s in statuses]
    notebooks = row.notebook_status or Status.NO_NOTEBOOKS
    return "; ".join([*head, *([] if notebooks == Status.OK and (head or tail) else [notebooks]), *tail])


def feedback_cell(row: Row, exercises: Mapping[str, ExerciseInfo], late: LateRule) -> str:
    """The feedback cell: held marks, what failed and why, what went wrong while running, the late penalty, the
    adjustments, what intake found."""
    if Status.NO_SUBMISSION in row.statuses:
        return "no submission received"
    parts: list[str] = []
    if Status.HELD in row.statuses:
        parts.append(f"held for review ({', '.join(row.held)}): these marks are not final until your instructor "
                     "has looked at the notebook")
    for ex in exercises:
        parts += row.notes[ex] if ex in row.notes else [f"{ex}: no notebook for this exercise"]
    parts += row.elsewhere
    if not row.notebooks:
        parts.append("the submission holds no notebooks")
    days = row.days_late
    if days:
        parts.append(f"late by {days} day{'s' if days > 1 else ''}: "
                     f"{round(100 * (1 - late_factor(late, days)))} % of the marks taken")
    parts += [f"{a.exercise}: {a.points:+g} points ({a.reason})" for a in row.adjustments]
    parts += [str(i) for i in row.issues]
    return " | ".join(parts) if parts else "all checks passed"


# ---------------------------------------------------------------------------------------------- the report


def build_report(grades: list[SubmissionGrade], marking: Marking, *, settings: dict | None = None,
                 notes: list[str] = (), decisions: Decisions | None = None, intake: Mapping | None = None) -> Report:
    """The report: the assignment (its `marking`), every row with its notebooks, checks and inputs, the instructor's
    decisions and what intake found (`intake`: its `roster`, `lateness` and `left_out`)."""
    rows = [row(g, marking) for g in grades]
    intake = intake or {}
    return report(marking.description, marking.fingerprint, marking.exercises, rows, [settings or {}],
                  list(notes), decisions, roster=intake.get("roster", ""), lateness=intake.get("lateness", ""),
                  left_out=intake.get("left_out", ()))


def report(assignment: Mapping, fingerprint: str, exercises: Mapping[str, ExerciseInfo], rows: list[Row],
           settings: list[Mapping], notes: list[str], decisions: Decisions | None = None, *, roster: str = "",
           lateness: str = "", left_out: tuple[str, ...] = ()) -> Report:
    """A report from its parts: every row settled under the decisions, in the class's order, and the lists of what
    intake found, read from the rows."""
    decisions = merge_decisions(decisions or Decisions())
    hold = holding(assignment)
    late = LateRule(**assignment["late"])
    rows = [settle(r, exercises, late, decisions, hold) for r in sorted(rows, key=lambda r: r.order)]
    keys = {r.key for r in rows}

    def issues(kind: Status) -> tuple[str, ...]:
        return tuple(f"{r.name}: {i}" for r in rows for i in r.issues if i.kind == kind)

    found = IntakeFound(
        roster=roster, lateness=lateness, left_out=tuple(left_out), notes=tuple(notes),
        no_submission=tuple(r.name for r in rows if Status.NO_SUBMISSION in r.statuses),
        not_on_roster=tuple(r.path for r in rows if Status.NOT_ON_ROSTER in r.statuses),
        exercise_missing=tuple(f"{r.name}: {', '.join(r.missing)}" for r in rows if r.missing),
        duplicates=issues(Status.DUPLICATES), ignored_files=issues(Status.IGNORED_FILES),
        held=tuple(f"{r.name}: {', '.join(r.held)}" for r in rows if Status.HELD in r.statuses),
        adjustments_unused=tuple(f"{a.student}, {a.exercise}" for a in decisions.adjustments if a.student not in keys),
    )
    return Report(time.strftime("%Y-%m-%dT%H:%M:%S%z"), __version__,
                  settings[0] if len(settings) == 1 else {"merged": list(settings)}, assignment, fingerprint,
                  dict(exercises), decisions, found, tuple(rows))

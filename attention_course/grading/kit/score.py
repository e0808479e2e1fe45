"""Scoring: from graded notebooks to a gradebook report, under the assignment's rules.

Everything that turns inputs passed into marks is here, and nowhere else:
a check's points (`check_mark`: its points times the share of inputs
passed), a notebook's, the best attempt at each exercise (`best_notebooks`:
a student who handed in two notebooks for one exercise gets the better),
the late rule (`days_late`, `late_factor`) and a student's row (`row`: the
points per exercise, the penalty, the total, the status, the feedback
cell). `build_report` puts the rows together with the assignment into the
report (a dict, saved as JSON) that every file is written from
(`write/`); `report` assembles one from rows, for a merge as well.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import time
from pathlib import Path

from ... import __version__
from ..checks.engine import results
from ..checks.exercises import BY_ID
from .assignment import Assignment, LateRule, round_marks
from .batch import SubmissionGrade
from .judge import NotebookGrade
from .status import Incident, Status


def check_mark(points: float, passed: int, tried: int) -> float | int:
    """What a check worth `points` earns when `passed` of the `tried` inputs pass."""
    return round_marks(points * passed / tried) if tried else 0


def check_points(assignment: Assignment, exercise_id: str, check_name: str, passed: int, tried: int) -> float | int:
    """The points a check of the assignment earns when `passed` of the `tried` inputs pass."""
    rule = next(c for c in assignment.rule(exercise_id).checks if c.check == check_name)
    return check_mark(rule.points, passed, tried)


def notebook_points(assignment: Assignment, nb: NotebookGrade) -> float:
    """What one notebook earns under the assignment (0 for an exercise it does not grade)."""
    if nb.exercise is None or assignment.rule(nb.exercise) is None:
        return 0
    return sum(check_points(assignment, nb.exercise, c.check, c.score, c.max_score) for c in nb.checks)


def best_notebooks(grade: SubmissionGrade, assignment: Assignment) -> dict[str, NotebookGrade]:
    """The best-scoring notebook of each exercise of the assignment (the first of equals): the attempt that counts."""
    best: dict[str, NotebookGrade] = {}
    for nb in grade.notebooks:
        if nb.exercise not in assignment.ids:
            continue
        if nb.exercise not in best or notebook_points(assignment, nb) > notebook_points(assignment, best[nb.exercise]):
            best[nb.exercise] = nb
    return best


def days_late(assignment: Assignment, submitted: dt.datetime | None, marked_late: bool = False) -> int:
    """Started days past the deadline and its grace (0 when on time); at least 1 if the LMS marked it late."""
    days = 0
    if assignment.deadline is not None and submitted is not None:
        late_by = submitted - assignment.deadline - dt.timedelta(minutes=assignment.late.grace_minutes)
        if late_by > dt.timedelta(0):
            days = math.ceil(late_by / dt.timedelta(days=1))
    return max(days, 1 if marked_late else 0)


def late_factor(rule: LateRule, days: int) -> float:
    """What a submission `days` started days late keeps of its marks (1.0 when on time)."""
    if days <= 0:
        return 1.0
    if rule.max_days and days > rule.max_days:
        return 0.0
    return max(0.0, 1.0 - rule.penalty_per_day * days)


def row(grade: SubmissionGrade, assignment: Assignment) -> dict[str, object]:
    """One gradebook row (the JSON report's, with its notebooks): every exercise of the assignment counts."""
    sub = grade.submission
    best = best_notebooks(grade, assignment)
    issues = list(sub.issues)
    for ex in assignment.ids:
        copies = [nb for nb in grade.notebooks if nb.exercise == ex]
        if len(copies) > 1:
            listed = ", ".join(f"{Path(nb.path).name} ({round_marks(notebook_points(assignment, nb))})" for nb in copies)
            issues.append(Incident(f"{len(copies)} notebooks for {ex}: {listed}; {Path(best[ex].path).name} counts",
                                   Status.DUPLICATES))
    scores = {ex: round_marks(notebook_points(assignment, best[ex])) if ex in best else 0 for ex in assignment.ids}
    raw = sum(scores.values())
    days = days_late(assignment, dt.datetime.fromisoformat(sub.submitted) if sub.submitted else None, sub.marked_late)
    total = round_marks(raw * late_factor(assignment.late, days))
    statuses = _row_statuses(grade, issues, days)
    out: dict[str, object] = {
        "key": sub.key, "order": sub.order, "student_id": sub.student.get("student_id", ""), "name": sub.name,
        "email": sub.student.get("email", ""), "path": sub.path, "status": _row_text(grade, statuses),
        "late": f"{days} day{'s' if days > 1 else ''}" if days else "",
    }
    out.update(scores)
    out.update({"penalty": round_marks(raw - total), "total": total, "max_total": assignment.max_total,
                "feedback": feedback(grade, assignment, best, issues, days)})
    out.update({"statuses": list(statuses), "days_late": days, "submitted": sub.submitted,
                "marked_late": sub.marked_late, "issues": [i.to_json() for i in issues],
                "student": dict(sub.student), "counted": {ex: nb.path for ex, nb in best.items()}})
    return out


def _row_statuses(grade: SubmissionGrade, issues: list[Incident], days: int) -> tuple[Status, ...]:
    """A student's statuses: nothing submitted; or their notebooks', with not on the roster, duplicates, late."""
    if grade.submission.student and not grade.submission.path:
        return (Status.NO_SUBMISSION,)
    kinds = {i.kind for i in issues}
    found = [Status.NOT_ON_ROSTER] if Status.NOT_ON_ROSTER in kinds else []
    found += sorted(grade.statuses, key=list(Status).index)
    found += [Status.DUPLICATES] if Status.DUPLICATES in kinds else []
    return tuple(found + ([Status.LATE] if days else []))


def _row_text(grade: SubmissionGrade, statuses: tuple[Status, ...]) -> str:
    """The status column of a row: its notebooks' status with what intake and the deadline add, "; " between."""
    if statuses == (Status.NO_SUBMISSION,):
        return Status.NO_SUBMISSION
    before = [Status.NOT_ON_ROSTER] if Status.NOT_ON_ROSTER in statuses else []
    after = [s for s in (Status.DUPLICATES, Status.LATE) if s in statuses]
    return "; ".join([*before, grade.status, *after])


def feedback(grade: SubmissionGrade, assignment: Assignment, best: dict[str, NotebookGrade] | None = None,
             issues: list[Incident] = (), days: int = 0) -> str:
    """The feedback cell: what failed and why, what went wrong while running, what intake found."""
    best = best_notebooks(grade, assignment) if best is None else best
    parts: list[str] = []
    if grade.submission.student and not grade.submission.path:
        return "no submission received"
    for ex in assignment.ids:
        nb = best.get(ex)
        if nb is None:
            parts.append(f"{ex}: no notebook for this exercise")
            continue
        parts += _check_feedback(nb)
    for nb in grade.notebooks:
        if nb.exercise is None or nb is not best.get(nb.exercise):
            parts += [f"{Path(nb.path).name}: {i}" for i in nb.incidents]
    if not grade.notebooks:
        parts.append("the submission holds no notebooks")
    if days:
        parts.append(f"late by {days} day{'s' if days > 1 else ''}: "
                     f"{round(100 * (1 - late_factor(assignment.late, days)))} % of the marks taken")
    parts += issues
    return " | ".join(parts) if parts else "all checks passed"


def student_message(check: results.CheckResult) -> str:
    """A check's message as a student may read it: when its first failure is a hidden input, only its label."""
    first = check.first_failure
    if first is not None and first.hidden and check.status == results.FAILED:
        return f"wrong on an input only the grader tries: {first.label}."
    return check.message


def _check_feedback(nb: NotebookGrade) -> list[str]:
    parts = []
    for check in nb.checks:
        if check.status == results.PASSED:
            continue
        if check.status == results.NOT_ATTEMPTED:
            parts.append(f"{check.function}: not attempted")
            continue
        text = f"{check.function} {check.score}/{check.max_score}: {student_message(check)}"
        parts.append(text + (f" Hint: {check.hint}" if check.hint else ""))
    parts += nb.incidents
    return parts


def build_report(grades: list[SubmissionGrade], assignment: Assignment | None = None, *,
                 settings: dict | None = None, notes: list[str] = ()) -> dict:
    """The JSON report: the assignment, every row with its notebooks, checks and inputs, and intake's notes."""
    assignment = assignment or Assignment.default()
    rows = [{**row(g, assignment), "notebooks": [notebook_json(nb) for nb in g.notebooks]} for g in grades]
    return report(assignment.to_dict(), assignment.fingerprint(), _exercises(assignment), rows, [settings or {}],
                  list(notes))


def _exercises(assignment: Assignment) -> dict:
    out = {}
    for rule in assignment.exercises:
        ex = BY_ID[rule.id]
        checks = {c.name: c for c in assignment.checks(rule.id)}
        out[rule.id] = {
            "title": ex.title, "chapter": ex.chapter, "points": round_marks(rule.points), "max_score": ex.max_score,
            "checks": {r.check: {"points": r.points, "inputs": len(checks[r.check].cases),
                                 "hidden_inputs": sum(c.hidden for c in checks[r.check].cases)} for r in rule.checks},
        }
    return out


def report(assignment: dict, fingerprint: str, exercises: dict, rows: list[dict], settings: list[dict],
           notes: list[str]) -> dict:
    """A report from its parts: rows in the class's order, and the lists of what intake found, read from the rows."""
    rows = sorted(rows, key=lambda r: r["order"])  # stable: rows of equal order keep the order given

    def issues(kind: Status) -> list[str]:
        return [f"{r['name']}: {i['text']}" for r in rows for i in r["issues"] if i["kind"] == kind]

    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "attention_course": __version__,
        "settings": settings[0] if len(settings) == 1 else {"merged": settings},
        "assignment": assignment,
        "assignment_fingerprint": fingerprint,
        "exercises": exercises,
        "intake": {
            "notes": notes,
            "no_submission": [r["name"] for r in rows if Status.NO_SUBMISSION in r["statuses"]],
            "not_on_roster": [r["path"] for r in rows if Status.NOT_ON_ROSTER in r["statuses"]],
            "duplicates": issues(Status.DUPLICATES),
            "ignored_files": issues(Status.IGNORED_FILES),
        },
        "submissions": rows,
    }


def notebook_json(nb: NotebookGrade) -> dict:
    """One notebook of a row: its status (words and data), incidents with their kinds, every check and input."""
    return {
        "path": nb.path, "exercise": nb.exercise, "status": nb.status, "statuses": list(nb.statuses),
        "score": nb.score, "max_score": nb.max_score, "seconds": round(nb.seconds, 3),
        "incidents": [Incident(i, getattr(i, "kind", None)).to_json() for i in nb.incidents],
        "output": nb.output, "checks": [dataclasses.asdict(c) for c in nb.checks],
    }


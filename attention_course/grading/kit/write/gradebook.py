"""Presenting grades: the gradebook (CSV and JSON), merging gradebooks, and the student's table.

Grades become a report (a dict, saved as JSON): the assignment, and one row
per student with the points per exercise under the assignment, the late
penalty, the total out of the assignment's `max_total`, a status, the
feedback, what intake found, and every notebook with every check and input.
Everything else is rendered from a report: the CSV gradebook (one row per
student, one column per exercise of the assignment), the LMS files
(`lms.py`), the feedback files (`feedback.py`) and the class summary
(`summary.py`); so reports of shards or of a regrade merge (`merge_reports`)
into the report one run would have given. An existing gradebook is never
overwritten unless the caller says so (`force=True`), and a merge into one
keeps a backup of it.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import json
import os
import re
import tempfile
import time
from pathlib import Path

from .... import __version__
from ..assignment import Assignment, round_marks
from ..batch import NotebookGrade, Submission, SubmissionGrade
from ...checks.engine import results
from ...checks.exercises import BY_ID

FIXED_COLUMNS = ("student_id", "name", "email", "path", "status", "late")
TAIL_COLUMNS = ("penalty", "total", "max_total", "feedback")
NO_SUBMISSION = "no submission"
NOT_ON_ROSTER = "not on the roster"
DUPLICATE_SUBMISSIONS = "duplicate submissions"
ROW_STATUSES = (NO_SUBMISSION, NOT_ON_ROSTER, "duplicates", "late")
"""What a row's status adds to its notebooks' statuses."""


class GradebookExists(FileExistsError):
    """The gradebook (or its JSON report) is already there and force was not given."""


class MergeError(ValueError):
    """Reports that cannot be merged: graded under different assignments, or not reports at all."""


def report_path(csv_path: Path | str) -> Path:
    """The JSON report that goes with a gradebook: same name, .json."""
    return Path(csv_path).with_suffix(".json")


def ensure_writable(csv_path: Path | str, force: bool = False) -> None:
    """Raise GradebookExists if writing would replace an existing file without `force`."""
    if force:
        return
    for path in (Path(csv_path), report_path(csv_path)):
        if path.exists():
            raise GradebookExists(f"{path} already exists; pass --force to replace it, or choose another --out")


def _points(assignment: Assignment, nb: NotebookGrade) -> float:
    """What one notebook earns under the assignment."""
    if nb.exercise is None or assignment.rule(nb.exercise) is None:
        return 0
    return sum(assignment.check_points(nb.exercise, c.check, c.score, c.max_score) for c in nb.checks)


def _best(grade: SubmissionGrade, assignment: Assignment) -> dict[str, NotebookGrade]:
    """The best-scoring notebook of each exercise of the assignment (the first of equals)."""
    best: dict[str, NotebookGrade] = {}
    for nb in grade.notebooks:
        if nb.exercise not in assignment.ids:
            continue
        if nb.exercise not in best or _points(assignment, nb) > _points(assignment, best[nb.exercise]):
            best[nb.exercise] = nb
    return best


def row(grade: SubmissionGrade, assignment: Assignment) -> dict[str, object]:
    """One gradebook row (the JSON report's, with its notebooks): every exercise of the assignment counts."""
    sub = grade.submission
    best = _best(grade, assignment)
    issues = list(sub.issues)
    for ex in assignment.ids:
        copies = [nb for nb in grade.notebooks if nb.exercise == ex]
        if len(copies) > 1:
            listed = ", ".join(f"{Path(nb.path).name} ({round_marks(_points(assignment, nb))})" for nb in copies)
            issues.append(f"{len(copies)} notebooks for {ex}: {listed}; {Path(best[ex].path).name} counts")
    scores = {ex: round_marks(_points(assignment, best[ex])) if ex in best else 0 for ex in assignment.ids}
    raw = sum(scores.values())
    days = assignment.days_late(dt.datetime.fromisoformat(sub.submitted) if sub.submitted else None, sub.marked_late)
    total = round_marks(raw * assignment.late.factor(days))
    out: dict[str, object] = {
        "key": sub.key, "order": sub.order, "student_id": sub.student.get("student_id", ""), "name": sub.name,
        "email": sub.student.get("email", ""), "path": sub.path, "status": _row_status(grade, sub, issues, days),
        "late": f"{days} day{'s' if days > 1 else ''}" if days else "",
    }
    out.update(scores)
    out.update({"penalty": round_marks(raw - total), "total": total, "max_total": assignment.max_total,
                "feedback": feedback(grade, assignment, best, issues, days)})
    out.update({"days_late": days, "submitted": sub.submitted, "marked_late": sub.marked_late, "issues": issues,
                "student": dict(sub.student), "counted": {ex: nb.path for ex, nb in best.items()}})
    return out


def _row_status(grade: SubmissionGrade, sub: Submission, issues: list[str], days: int) -> str:
    """The notebooks' status, with what the instructor must look at: not on the roster, duplicates, late."""
    if sub.student and not sub.path:
        return NO_SUBMISSION
    parts = [grade.status]
    if any(i.startswith(NOT_ON_ROSTER) for i in issues):
        parts.insert(0, NOT_ON_ROSTER)
    if any(_is_duplicate(i) for i in issues):
        parts.append("duplicates")
    if days:
        parts.append("late")
    return "; ".join(parts)


def _is_duplicate(issue: str) -> bool:
    """Issues that say a student handed in more than one of something."""
    return issue.startswith(DUPLICATE_SUBMISSIONS) or bool(re.match(r"\d+ notebooks for ", issue))


def feedback(grade: SubmissionGrade, assignment: Assignment, best: dict[str, NotebookGrade] | None = None,
             issues: list[str] = (), days_late: int = 0) -> str:
    """The feedback cell: what failed and why, what went wrong while running, what intake found."""
    best = _best(grade, assignment) if best is None else best
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
    if days_late:
        parts.append(f"late by {days_late} day{'s' if days_late > 1 else ''}: "
                     f"{round(100 * (1 - assignment.late.factor(days_late)))} % of the marks taken")
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
    rows = [{**row(g, assignment), "notebooks": [_notebook_json(nb) for nb in g.notebooks]} for g in grades]
    return _report(assignment.to_dict(), assignment.fingerprint(), _exercises(assignment), rows,
                   [settings or {}], list(notes))


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


def _report(assignment: dict, fingerprint: str, exercises: dict, rows: list[dict], settings: list[dict],
            notes: list[str]) -> dict:
    rows = sorted(rows, key=lambda r: r["order"])  # stable: rows of equal order keep the order given
    return {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "attention_course": __version__,
        "settings": settings[0] if len(settings) == 1 else {"merged": settings},
        "assignment": assignment,
        "assignment_fingerprint": fingerprint,
        "exercises": exercises,
        "intake": {
            "notes": notes,
            "no_submission": [r["name"] for r in rows if r["status"] == NO_SUBMISSION],
            "not_on_roster": [r["path"] for r in rows if r["status"].startswith(NOT_ON_ROSTER)],
            "duplicates": [f"{r['name']}: {i}" for r in rows for i in r["issues"] if _is_duplicate(i)],
            "ignored_files": [f"{r['name']}: {i}" for r in rows for i in r["issues"] if i.startswith("ignored ")],
        },
        "submissions": rows,
    }


def merge_reports(reports: list[dict]) -> dict:
    """One report from several of the same assignment: a later report's row replaces an earlier one's (same key).

    Shards of one class merge into the report of one run; a regrade of a few
    students merged into the class's report updates their rows only.
    MergeError if the reports were graded under different assignments.
    """
    if not reports:
        raise MergeError("no reports to merge")
    for r in reports:
        if not isinstance(r, dict) or "submissions" not in r or "assignment_fingerprint" not in r:
            raise MergeError("not a gradebook report of this version of attention-course (no submissions or assignment)")
    first = reports[0]
    for r in reports[1:]:
        if r["assignment_fingerprint"] != first["assignment_fingerprint"]:
            raise MergeError(f"the reports were graded under different assignments ({first['assignment']['title']!r} "
                             f"and {r['assignment']['title']!r}, or the same one with other points, inputs or "
                             "deadline): grade them again under one assignment file")
    rows: dict[str, dict] = {}
    for r in reports:
        for sub in r["submissions"]:
            if sub["key"] in rows and sub["status"] == NO_SUBMISSION and rows[sub["key"]]["status"] != NO_SUBMISSION:
                continue  # a regrade of other students says nothing about this one
            if sub["key"] in rows:
                sub = {**sub, "order": rows[sub["key"]]["order"]}  # a regraded student keeps their place
            rows[sub["key"]] = sub
    notes = list(dict.fromkeys(n for r in reports for n in r["intake"]["notes"]))
    settings = [s for r in reports for s in (r["settings"]["merged"] if "merged" in r["settings"] else [r["settings"]])]
    return _report(first["assignment"], first["assignment_fingerprint"], first["exercises"], list(rows.values()),
                   settings, notes)


def read_report(path: Path | str) -> dict:
    """A report from its JSON file, or from the CSV gradebook beside it."""
    path = Path(path)
    json_path = path if path.suffix == ".json" else report_path(path)
    try:
        return json.loads(json_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"no report {json_path} (the JSON file written beside each gradebook)") from None
    except json.JSONDecodeError as err:
        raise MergeError(f"{json_path} is not a JSON report: {err}") from None


def csv_text(report: dict) -> str:
    """The CSV gradebook of a report: one row per student, one column per exercise of the assignment."""
    columns = [*FIXED_COLUMNS, *report["exercises"], *TAIL_COLUMNS]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(report["submissions"])
    return buf.getvalue()


def write_report(report: dict, csv_path: Path | str, *, force: bool = False, backup: bool = False) -> tuple[Path, Path]:
    """Write a report's CSV gradebook and JSON; `backup` first keeps a copy of each existing one (`.bak-<time>`)."""
    csv_path = Path(csv_path)
    ensure_writable(csv_path, force or backup)
    json_path = report_path(csv_path)
    if backup:
        from ...release import _backup

        for path in (csv_path, json_path):
            if path.exists():
                _backup(path)
    _write_atomically(csv_path, csv_text(report))
    _write_atomically(json_path, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return csv_path, json_path


def write_gradebook(grades: list[SubmissionGrade], csv_path: Path | str, *, force: bool = False,
                    settings: dict | None = None, assignment: Assignment | None = None,
                    notes: list[str] = ()) -> tuple[Path, Path]:
    """Write the CSV gradebook and its JSON report; returns both paths."""
    ensure_writable(csv_path, force)
    return write_report(build_report(grades, assignment, settings=settings, notes=notes), csv_path, force=force)


def _notebook_json(nb: NotebookGrade) -> dict:
    return {
        "path": nb.path, "exercise": nb.exercise, "status": nb.status, "score": nb.score,
        "max_score": nb.max_score, "seconds": round(nb.seconds, 3), "incidents": nb.incidents,
        "output": nb.output, "checks": [dataclasses.asdict(c) for c in nb.checks],
    }


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def free_path(csv_path: Path | str) -> Path:
    """The first of gradebook-2.csv, gradebook-3.csv, ... that is free (with its report)."""
    csv_path = Path(csv_path)
    for n in range(2, 10_000):
        candidate = csv_path.with_name(f"{csv_path.stem}-{n}{csv_path.suffix}")
        if not candidate.exists() and not report_path(candidate).exists():
            return candidate
    raise GradebookExists(f"no free name next to {csv_path}")


def format_report(grades: list[NotebookGrade]) -> str:
    """The table `attention-course check` prints: per exercise and check, then the details."""
    lines = []
    total = maximum = 0
    for nb in grades:
        title = f"{nb.exercise}" if nb.exercise else "(not an exercise)"
        ran = "the notebook ran: ok" if nb.status == "ok" else f"the notebook: {nb.status}"
        lines.append(f"{Path(nb.path).name} — {title}: {nb.score}/{nb.max_score} inputs passed; {ran}")
        for c in nb.checks:
            lines.append(f"  {c.headline()}")
        for incident in nb.incidents:
            lines.append(f"  ! {incident}")
        total += nb.score
        maximum += nb.max_score
        lines.append("")
    details = [(nb, c) for nb in grades for c in nb.checks if c.status not in (results.PASSED, results.NOT_ATTEMPTED)]
    if details:
        lines.append("What went wrong")
        lines.append("---------------")
        for nb, c in details:
            lines.append(str(c))
            lines.append("")
    if len(grades) > 1:
        lines.append(f"Total: {total}/{maximum}")
    return "\n".join(lines).rstrip() + "\n"

"""A feedback file per student: an offline HTML page and its plain-text twin for e-mail.

Rendered from a report row (`score.build_report`): the points per exercise
and per check, the same per-check tables `attention-course check` shows, what
went wrong while running the notebooks (said of what the student's code did,
never of the grader's own workings), the notebooks that did not count and
why, the late penalty, the manual adjustments with their reasons, whether the
marks are held for review, and what intake found (duplicates, ignored files,
exercises missing). An input only the grader tries is described by its label
and never shown: its values, the expected result and what came back are left
out, so the feedback cannot be used to learn them. The HTML page
(`templates/feedback.html`) has no script and loads nothing.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ...checks.engine import results
from ..report import ExerciseInfo, NotebookRecord, Report, Row
from ..score import check_mark, student_message
from ...run.status import ATTEMPTS, Status
from .html import Markup, render

HIDDEN_TEXT = "(not shown: an input only the grader tries)"
NOTHING_RECEIVED = ("Nothing of yours was in the submissions downloaded for this assignment. If you did hand "
                    "something in, tell your instructor where and when.")
HELD = ("Held for review: your notebook tried something beyond running its own code ({what}), so your instructor "
        "looks at it before these marks count. Nothing is lost: the marks below are what your functions earned.")
HELD_INTEGRITY = ("Held for review: your notebook may not be your own work ({what}), so your instructor looks at it "
                  "before these marks count. Nothing is lost: the marks below are what your answers earned.")
APPROVED = "Reviewed by your instructor ({what}): your marks count as shown."


def _hide(case: results.CaseResult) -> results.CaseResult:
    if not case.hidden:
        return case
    message = "" if case.passed else "wrong on this input (its values are not shown)"
    return dataclasses.replace(case, inputs=HIDDEN_TEXT, expected="(not shown)", got="(not shown)", message=message)


def check_result(result: results.CheckResult) -> results.CheckResult:
    """A check's result from the report, its hidden inputs' values removed."""
    smallest = _hide(result.smallest) if result.smallest is not None else None
    result = dataclasses.replace(result, cases=tuple(_hide(c) for c in result.cases), smallest=smallest)
    return dataclasses.replace(result, message=student_message(result))  # the message may quote hidden values


def file_stem(row: Row) -> str:
    """The feedback file's name (without extension): the student id, else the row's key, made safe for any file
    system."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(row.student_id or row.key)).strip("._")
    return stem or "student"


def _available(info: ExerciseInfo, check: results.CheckResult) -> float:
    """What a check is worth under the report's assignment (0 for one it does not grade)."""
    worth = info.checks.get(check.check)
    return worth.points if worth is not None else 0


def _points(report: Report, ex: str, check: results.CheckResult) -> float:
    return check_mark(_available(report.exercises[ex], check), check.score, check.max_score)


def _notebook_points(report: Report, nb: NotebookRecord) -> float:
    ex = nb.exercise
    return sum(_points(report, ex, c) for c in nb.checks) if ex in report.exercises else 0


def _hidden_note(report: Report, ex: str) -> str:
    hidden = sum(c.hidden_inputs for c in report.exercises[ex].checks.values())
    if not report.hidden or not hidden:
        return ""
    return (f"{hidden} of the inputs are tried only by the grader: each is named by what it tests, "
            "its values are not shown.")


def _why_not_counted(report: Report, nb: NotebookRecord, best: dict[str, NotebookRecord]) -> str:
    """Why a notebook of the student's did not count."""
    ex = nb.exercise
    if ex in best:
        counted = best[ex]
        return (f"not counted: the best attempt at {ex} counts, and {counted.file} scored "
                f"{_round(_notebook_points(report, counted))} points, this one {_round(_notebook_points(report, nb))}")
    if ex is not None and ex not in report.exercises:
        return f"not counted: {ex} is not part of this assignment"
    return f"not counted: {nb.status}"


def _not_counted(row: Row, best: dict[str, NotebookRecord]) -> list[NotebookRecord]:
    """The notebooks of the row that did not count for an exercise."""
    counted = {id(nb) for nb in best.values()}
    return [nb for nb in row.notebooks if id(nb) not in counted]


def _round(x: float) -> str:
    return f"{round(x, 2):g}"


def _review(row: Row) -> str:
    what = ", ".join(row.held)
    if Status.HELD in row.statuses:
        attempts = [s for s in row.held if s in ATTEMPTS]
        return HELD.format(what=what) if attempts else HELD_INTEGRITY.format(what=what)
    if Status.APPROVED in row.statuses:
        return APPROVED.format(what=what)
    return ""


def _adjustments(row: Row) -> list[str]:
    return [f"{a.exercise}: {a.points:+g} points, by your instructor: {a.reason}" for a in row.adjustments]


def text(report: Report, row: Row) -> str:
    """The plain-text feedback for one student."""
    lines = [f"{report.title}: feedback for {row.name}" + (f" ({row.student_id})" if row.student_id else ""),
             "", f"Total: {row.total}/{row.max_total}    status: {row.status}"]
    review = _review(row)
    if review:
        lines.append(review)
    if row.late:
        lines.append(f"Late by {row.late}: {row.penalty} points taken under the late rule.")
    if Status.NO_SUBMISSION in row.statuses:
        return "\n".join(lines + ["", NOTHING_RECEIVED]) + "\n"
    lines.append("")
    best = row.counted_notebooks()
    details = []
    for ex, info in report.exercises.items():
        nb = best.get(ex)
        lines.append(f"{ex} ({info.title}): {row.points.get(ex, 0)}/{info.points}"
                     + (f"  [{nb.file}, {nb.status}]" if nb else "  no notebook received"))
        if nb is None:
            continue
        checks = [check_result(c) for c in nb.checks]
        width = max((len(c.function) for c in checks), default=0)
        for c in checks:
            mark = {results.CheckStatus.PASSED: "✓", results.CheckStatus.NOT_ATTEMPTED: "…"}.get(c.status, "✗")
            lines.append(f"  {mark} {c.function:<{width}}  {_points(report, ex, c):>5}/{_available(info, c):<5} "
                         f"{c.score}/{c.max_score} inputs, {c.status}")
            if c.status not in (results.CheckStatus.PASSED, results.CheckStatus.NOT_ATTEMPTED):
                details.append(str(c))
        lines += [f"  ! {i}" for i in nb.incidents]
        note = _hidden_note(report, ex)
        if note:
            lines.append(f"  ({note})")
    for nb in _not_counted(row, best):
        lines.append(f"{nb.file}: {_why_not_counted(report, nb, best)}"
                     + "".join(f"\n  ! {i}" for i in nb.incidents))
    adjustments = _adjustments(row)
    if adjustments:
        lines += ["", "Adjustments"] + [f"- {line}" for line in adjustments]
    if details:
        lines += ["", "What went wrong", "---------------"]
        for d in details:
            lines += [d, ""]
    if row.issues:
        lines += ["", "About your submission"] + [f"- {i}" for i in row.issues]
    return "\n".join(lines).rstrip() + "\n"


def page(report: Report, row: Row) -> str:
    """The offline HTML feedback page for one student (`templates/feedback.html`)."""
    who = row.name + (f" ({row.student_id})" if row.student_id else "")
    nothing = NOTHING_RECEIVED if Status.NO_SUBMISSION in row.statuses else ""
    best = row.counted_notebooks()
    exercises = []
    for ex, info in report.exercises.items():
        nb = best.get(ex)
        entry = {"id": ex, "title": info.title, "points": row.points.get(ex, 0), "available": info.points,
                 "notebook": f"{nb.file}, {nb.status}" if nb else "", "checks": None}
        if nb is not None:
            verdicts = [check_result(c) for c in nb.checks]
            entry.update(checks=[{"function": r.function, "points": _points(report, ex, r),
                                  "available": _available(info, r), "html": Markup(r._repr_html_())}
                                 for r in verdicts],
                         incidents=[str(i) for i in nb.incidents], note=_hidden_note(report, ex))
        exercises.append(entry)
    others = [{"name": nb.file, "why": _why_not_counted(report, nb, best), "incidents": [str(i) for i in nb.incidents]}
              for nb in _not_counted(row, best)]
    return render("feedback.html", title=report.title, who=who, row=row, nothing=nothing, exercises=exercises,
                  others=others, review=_review(row), adjustments=_adjustments(row),
                  issues=[str(i) for i in row.issues])


def write_all(report: Report, folder: Path | str) -> dict[str, Path]:
    """Write `<student>.html` and `<student>.txt` for every row (a student with nothing submitted is told so);
    returns row key -> its page."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, used = {}, set()
    for row in report.rows:
        stem = base = file_stem(row)
        n = 1
        while stem in used:
            n += 1
            stem = f"{base}-{n}"
        used.add(stem)
        (folder / f"{stem}.html").write_text(page(report, row), encoding="utf-8")
        (folder / f"{stem}.txt").write_text(text(report, row), encoding="utf-8")
        written[row.key] = folder / f"{stem}.html"
    return written

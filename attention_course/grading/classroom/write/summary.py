"""The class summary: one offline HTML page of what the class got right and wrong.

Rendered from a report (`score.build_report`) with `templates/summary.html`:
how many students the roster lists and how many submitted (submissions from
people not on the roster counted apart), where lateness came from, the
students whose marks are held for review, the distribution of each
exercise's points over the submissions (an inline SVG bar chart, no script,
nothing loaded), the recognised mistakes ranked by how many students made
them, each with its hint and a link to the section of the rendered book to
read again (`attention_course.book.chapter_page`: a hosted book, the
checkout's build or the wheel's copy), apart from them what the checks
observed without naming a cause (`symptom_counts`), the manual
adjustments, and the notebooks whose run had incidents. What to explain
again on day two.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections import Counter
from typing import Iterator

from ....book import chapter_page
from ...checks.engine import mistakes as engine_mistakes
from ...checks.engine.results import CaseResult, CheckResult
from ...checks.exercises import BY_ID, sections
from ...run.status import Status
from ..report import Report
from .html import render

BINS = 10
"""Bars per exercise's chart (fewer when the exercise has fewer points)."""


def mistake_counts(report: Report) -> list[tuple[str, str, str, int]]:
    """(exercise, check, mistake id, students) for every recognised mistake, most frequent first.

    A student counts once per mistake: in the notebook that counted for the exercise. A mistake is recognised
    where the checks recognised it (`recognised`): a prediction that equals what came back, a mistake whose hint is
    the registry's own, or the closer look's verified finding (`helper_at_fault`: the student's own helper is what
    fails). A symptom named without a cause (weights that do not sum to 1, say) is counted apart
    (`symptom_counts`), never under a recognised mistake's hint.
    """
    counts: Counter = Counter()
    for exercise, check, case in _counted(report):
        for mistake in _findings(check, case, exercise):
            counts[(exercise, check.check, mistake)] += 1
    return [(*key, n) for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def symptom_counts(report: Report) -> list[tuple[str, str, str, int, str]]:
    """(exercise, check, symptom id, students, one student's hint) for what the checks observed without naming a
    cause (a diagnosis no prediction confirmed), most frequent first; a student counts once per symptom."""
    counts: Counter = Counter()
    said: dict[tuple[str, str, str], str] = {}
    for exercise, check, case in _counted(report):
        if case is None or not case.mistake or recognised(exercise, check.check, case):
            continue
        key = (exercise, check.check, case.mistake)
        counts[key] += 1
        said.setdefault(key, case.hint)
    return [(*key, n, said[key]) for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _counted(report: Report) -> Iterator[tuple[str, CheckResult, CaseResult | None]]:
    """(exercise, check, case) for each failing case of each check of the notebooks that counted (each student's
    once per (exercise, check, mistake): the first case with it), and (exercise, check, None) for each check."""
    for row in report.rows:
        counted = set(row.counted.values())
        for nb in row.notebooks:
            if nb.path not in counted:
                continue
            for check in nb.checks:
                seen = set()
                yield nb.exercise, check, None
                for case in check.cases:
                    if case.mistake and case.mistake not in seen:
                        seen.add(case.mistake)
                        yield nb.exercise, check, case


def recognised(exercise: str, check: str, case: CaseResult) -> bool:
    """Whether a case's mistake is one the checks recognised, not a symptom: a prediction of it equals what came
    back (`matches`), or its hint is the statement the exercise's registry, or the engine itself, gives that mistake
    (its leads may follow: `mistakes.compose`), never a sentence written for this input."""
    if case.mistake in case.matches:
        return True
    ex = BY_ID.get(exercise)
    hints = {m.hint for c in (ex.checks if ex else ()) if c.name == check for m in c.mistakes if m.id == case.mistake}
    hints |= {m.hint for m in vars(engine_mistakes).values()
              if isinstance(m, engine_mistakes.Mistake) and m.id == case.mistake}
    said = case.hint
    return any(said == hint or said.startswith(hint + " ") for hint in hints if hint)


def _findings(check: CheckResult, case: CaseResult | None, exercise: str) -> set[str]:
    """The recognised mistake a case names, or (for `case` None) the check's own (the closer look's finding)."""
    if case is None:
        return {check.mistake} if check.mistake and _check_level(check) else set()
    return {case.mistake} if recognised(exercise, check.check, case) else set()


def _check_level(check: CheckResult) -> bool:
    """Whether a check's mistake is the closer look's own finding (no input of it names that mistake)."""
    return not any(c.mistake == check.mistake for c in check.cases)


def _hints(report: Report) -> dict[tuple[str, str, str], str]:
    """(exercise, check, mistake) -> the hint the students were given for it (for a mistake the engine itself
    recognises, which no exercise lists)."""
    found: dict[tuple[str, str, str], str] = {}
    for row in report.rows:
        for nb in row.notebooks:
            for check in nb.checks:
                for case in (*check.cases, check):  # the check's own finding has its own hint
                    if case.mistake and case.hint:
                        found.setdefault((nb.exercise, check.check, case.mistake), case.hint)
    return found


def anchor(heading: str) -> str:
    """The id Sphinx gives a section of the rendered book: its words in lower case, joined by hyphens, without the
    leading numbers (docutils' `make_id` of the heading's text)."""
    text = unicodedata.normalize("NFKD", heading.replace("$", "").lower()).encode("ascii", "ignore").decode()
    return re.sub(r"^[-0-9]+|-+$", "", re.sub(r"[^a-z0-9]+", "-", " ".join(text.split())))


def read_again(exercise: str, check: str, mistake: str) -> dict:
    """The hint of a mistake, and where to read again: the chapter's title and section, and the rendered page's
    address (with the section's anchor) if the book is found here, else how to open it."""
    ex = BY_ID.get(exercise)
    if ex is None:
        return {"hint": "", "chapter": "", "section": "", "url": None, "command": ""}
    hint = next((m.hint for c in ex.checks if c.name == check for m in c.mistakes if m.id == mistake), "")
    heading = sections.section(ex.chapter, check, mistake)
    page = chapter_page(ex.chapter)
    url = page.url + (f"#{anchor(heading)}" if heading else "") if page.url else None
    return {"hint": hint, "chapter": page.title, "section": sections.plain(heading) if heading else "", "url": url,
            "command": f"attention-course book {ex.chapter}"}


def _histogram(values: list[float], maximum: float) -> dict:
    """The bars of a chart of points from 0 to `maximum` (drawn as inline SVG by the template)."""
    bins = max(1, min(BINS, int(maximum) if maximum >= 1 else 1))
    counts = [0] * bins
    for v in values:
        i = min(bins - 1, int(bins * v / maximum)) if maximum else 0
        counts[i] += 1
    width, height, bar = 320, 120, 320 / bins
    top = max(counts) or 1
    bars = []
    for i, n in enumerate(counts):
        h = (height - 32) * n / top  # room above the tallest bar for its count
        bars.append({"x": f"{i * bar + 1:.1f}", "y": f"{height - 15 - h:.1f}", "width": f"{bar - 2:.1f}",
                     "height": f"{h:.1f}", "low": f"{maximum * i / bins:g}", "high": f"{maximum * (i + 1) / bins:g}",
                     "count": n, "label_x": f"{i * bar + bar / 2:.1f}", "label_y": f"{height - 18 - h:.1f}"})
    return {"width": width, "height": height, "maximum": f"{maximum:g}", "bars": bars}


def class_line(report: Report) -> str:
    """Who the class is: students on the roster and how many submitted, and submissions of no one on it."""
    rows = report.rows
    stray = [r for r in rows if Status.NOT_ON_ROSTER in r.statuses]
    listed = [r for r in rows if Status.NOT_ON_ROSTER not in r.statuses]
    if not report.intake.roster and not any(r.student for r in rows):
        return f"{len(rows)} submission{'s' if len(rows) != 1 else ''} (graded without a roster)"
    submitted = sum(Status.NO_SUBMISSION not in r.statuses for r in listed)
    line = f"{len(listed)} student{'s' if len(listed) != 1 else ''} on the roster, {submitted} with a submission"
    if stray:
        line += f"; {len(stray)} submission{'s' if len(stray) != 1 else ''} from no one on the roster"
    return line


def page(report: Report) -> str:
    """The class summary page (`templates/summary.html`)."""
    rows = report.rows
    submitted = [r for r in rows if r.notebooks]
    totals = [r.total for r in submitted]
    exercises = []
    for ex, info in report.exercises.items():
        values = [r.points.get(ex, 0) for r in submitted]
        exercises.append({"id": ex, "title": info.title, "points": info.points, "students": len(values),
                          "mean": sum(values) / len(values) if values else 0,
                          "full": sum(v == info.points for v in values), "chart": _histogram(values, info.points)})
    said = _hints(report)
    mistakes = []
    for ex, check, mistake, n in mistake_counts(report):
        where = read_again(ex, check, mistake)
        where["hint"] = where["hint"] or said.get((ex, check, mistake), "")
        mistakes.append({"students": n, "exercise": ex, "check": check, "mistake": mistake, **where})
    symptoms = [{"students": n, "exercise": ex, "check": check, "symptom": symptom, "example": example}
                for ex, check, symptom, n, example in symptom_counts(report)]
    incidents = [{"student": r.name, "notebook": nb.file, "status": nb.status, "what": [str(i) for i in nb.incidents]}
                 for r in rows for nb in r.notebooks if nb.incidents]
    held = [{"student": r.name, "key": r.key, "what": [str(s) for s in r.held], "total": r.total,
             "approved": Status.APPROVED in r.statuses, "note": r.approval.note if r.approval else ""}
            for r in rows if r.held]
    adjustments = [dataclasses.replace(a, student=r.name) for r in rows for a in r.adjustments]
    found = report.intake
    listed = [("No submission", found.no_submission), ("Not on the roster", found.not_on_roster),
              ("Exercises missing", found.exercise_missing), ("Duplicates", found.duplicates),
              ("Ignored files", found.ignored_files),
              ("Adjustments for no one in this gradebook", found.adjustments_unused),
              ("In the download: refused or belonging to no student", found.notes)]
    return render("summary.html", title=report.title, class_line=class_line(report),
                  mean=(sum(totals) / len(totals)) if totals else 0, max_total=report.max_total,
                  lateness=found.lateness, held=held, exercises=exercises, mistakes=mistakes,
                  symptoms=symptoms,
                  adjustments=adjustments, incidents=incidents,
                  intake=[(title, items) for title, items in listed if items])

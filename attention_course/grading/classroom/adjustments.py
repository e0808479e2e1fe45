"""The instructor's adjustments file: points added to or taken from a student's exercise, with the reason shown
to the student.

`read_adjustments` reads the CSV and refuses, naming the file and the line, anything that cannot be applied; the
student each line names (any key of the roster) is found with `people.Matcher` by `resolve_adjustments`. Scoring
(`score.settle`) applies them; the report keeps them (`report.Adjustment`), so that they survive a regrade.
"""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path

from .people import Found, Matcher
from .report import Adjustment
from .score import round_marks


class AdjustmentError(ValueError):
    """An adjustments file that cannot be used; the message names the file, the line and what was wrong."""


def read_adjustments(path: Path | str, exercises: tuple[str, ...]) -> list[Adjustment]:
    """The manual adjustments file: a CSV of `student` (any key of the roster: student id, LMS id, SIS id or login,
    e-mail, "Last, First" or "First Last"; `resolve_adjustments` finds them), `exercise`, `points` (added, or taken
    when negative) and `reason` (shown to the student); one line per student and exercise of `exercises` (the
    assignment's)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise AdjustmentError(f"no adjustments file {path}") from None
    except UnicodeDecodeError:
        raise AdjustmentError(f"the adjustments {path} are not UTF-8 text; save them as CSV UTF-8") from None
    reader = csv.DictReader(text.splitlines())
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    reader.fieldnames = columns
    if set(columns) != {"student", "exercise", "points", "reason"}:
        raise AdjustmentError(f"the adjustments {path} need the columns student, exercise, points, reason; got "
                              f"{', '.join(columns) or 'nothing'}")
    out, seen = [], {}
    for line, raw in enumerate(reader, start=2):
        entry = {k: (raw.get(k) or "").strip() for k in columns}
        if not any(entry.values()):
            continue
        where = f"the adjustments {path}, line {line}"
        if entry["exercise"] not in exercises:
            raise AdjustmentError(f"{where}: exercise {entry['exercise']!r} is not one of the assignment's "
                                  f"({', '.join(exercises)})")
        try:
            points = float(entry["points"])
        except ValueError:
            raise AdjustmentError(f"{where}: points must be a number (negative to take points), got "
                                  f"{entry['points']!r}") from None
        if not entry["student"] or not entry["reason"]:
            raise AdjustmentError(f"{where}: student and reason must not be empty (the reason is shown to the student)")
        key = (entry["student"], entry["exercise"])
        if key in seen:
            raise AdjustmentError(f"{where}: {entry['student']} and {entry['exercise']} are already on line {seen[key]}")
        seen[key] = line
        out.append(Adjustment(entry["student"], entry["exercise"], round_marks(points), entry["reason"]))
    return out


def resolve_adjustments(adjustments: list[Adjustment], matcher: Matcher) -> tuple[list[Adjustment], list[Found]]:
    """The adjustments with each `student` made the row key of the person it names (by any of their keys: see
    `people`), what the file said kept as `given`; and the answers for the lines that name no one, or several.
    AdjustmentError if two lines name one student and exercise."""
    found, refused = matcher.find_all(a.student for a in adjustments)
    out, seen = [], {}
    for a in adjustments:
        person = found.get(a.student)
        if person is None:
            continue
        key = (person.key, a.exercise)
        if key in seen:
            raise AdjustmentError(f"the adjustments name {person.shown} twice for {a.exercise} "
                                  f"({seen[key]!r} and {a.student!r})")
        seen[key] = a.student
        out.append(dataclasses.replace(a, student=person.key, given=a.student if a.given is None else a.given))
    return out, refused

"""Every name the instructor's `grade` was given, found with one matcher (`people`), before anything is graded: a
regrade's submissions among its gradebook's rows, the assignment's extensions, the manual adjustments' students.

A name that finds no one, or several, is refused; all of them are named at once (`NamesRefused`), and nothing is
graded or written.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from .adjustments import resolve_adjustments
from .assignment import Assignment
from .people import Matcher, Outcome, Person, from_rows
from .report import Decisions
from ..run.status import Status

if TYPE_CHECKING:
    from .intake import Intake, Submission
    from .report import Report


class NamesRefused(ValueError):
    """Names the command was given that find no one, or several; or a regrade under another assignment."""


def resolve_names(assignment: Assignment, old: Report | None, taken: Intake, submissions: list[Submission],
                  decisions: Decisions, *, adjustments: Path | None = None,
                  update: Path | None = None) -> tuple[Assignment, Decisions]:
    """(the assignment with its extensions keyed by row, the decisions with the adjustments keyed by row), every
    name found with one `Matcher` over intake's submissions (`taken`) and a regrade's rows (`old`, the gradebook at
    `update`); `adjustments`: the adjustments file, named in messages. NamesRefused listing every name that finds
    no one, or several; `adjustments.AdjustmentError` as `resolve_adjustments` raises it."""
    refused = []
    if old is not None:
        refused += _adopt_rows(submissions, old)
    people = [Person.of(s.key, s.name, s.student, s.lms) for s in taken.submissions]
    if old is not None:
        people += from_rows(old.rows).people
    matcher = Matcher(people)
    found, unknown = matcher.find_all(key for key, _ in assignment.extensions)  # each extension keyed by its row
    assignment = dataclasses.replace(assignment, extensions=tuple(sorted(
        (found[key].key, when) for key, when in assignment.extensions if key in found)))
    refused += [f"extension {f.why}" for f in unknown]
    if adjustments:
        resolved, unknown = resolve_adjustments(list(decisions.adjustments), matcher)
        refused += [f"{adjustments.name}: {f.why}" for f in unknown]
        decisions = dataclasses.replace(decisions, adjustments=tuple(resolved))
    if refused:
        raise NamesRefused(f"{len(refused)} name(s) find no one, or several; nothing was graded or written:\n  "
                           + "\n  ".join(refused))
    if old is not None and old.assignment_fingerprint != assignment.fingerprint():
        raise NamesRefused(f"{update} was graded under another assignment (or other points, inputs, deadline or "
                           "extensions); pass the same --assignment")
    return assignment, decisions


def _adopt_rows(submissions: list[Submission], old: Report) -> list[str]:
    """A regrade's submissions that the roster did not name, found among the gradebook's rows by any of their keys
    (a folder named by the student's id, name or e-mail, the grader's own unpacked folder): each takes its row's
    student, name and place. What names no one in the gradebook, or several, is returned to be refused: a regrade
    never turns a student into a row of its own."""
    rows = {r.key: r for r in old.rows}
    matcher = from_rows(old.rows)
    refused = []
    for sub in submissions:
        if sub.student or sub.key in rows:
            continue
        found = matcher.find(sub.label or sub.name)
        if found.outcome != Outcome.FOUND:
            refused.append(f"{sub.path}: {found.why}")
            continue
        row = rows[found.person.key]
        sub.student, sub.name, sub.order = dict(row.student), row.name, row.order
        sub.lms = {**row.lms, **sub.lms}
        sub.issues = [i for i in sub.issues if i.kind != Status.NOT_ON_ROSTER]
    return refused

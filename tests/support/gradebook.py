"""The gradebook written in one call, as the tests write it from a list of grades (the instructor's `grade` builds
its report with the instructor's decisions first, then writes it with `write_report`)."""

from __future__ import annotations

from pathlib import Path

from attention_course.grading.classroom import score
from attention_course.grading.classroom.assignment import Assignment
from attention_course.grading.classroom.batch import SubmissionGrade
from attention_course.grading.classroom.write.gradebook import ensure_writable, write_report


def write_gradebook(grades: list[SubmissionGrade], csv_path: Path | str, *, force: bool = False,
                    settings: dict | None = None, assignment: Assignment | None = None,
                    notes: list[str] = ()) -> tuple[Path, Path]:
    """Write the CSV gradebook and its JSON report; returns both paths."""
    ensure_writable(csv_path, force)
    return write_report(score.build_report(grades, (assignment or Assignment.default()).marking(), settings=settings, notes=notes), csv_path, force=force)

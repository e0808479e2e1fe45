"""Presenting grades: the gradebook (CSV and JSON) and the student's table.

The CSV has one row per submission: its name and path, a status, one column
per exercise (inputs passed), the total, the maximum and the feedback. A JSON
report beside it keeps everything: every check, every input, the hints, what
each notebook printed. An existing gradebook is never overwritten unless the
caller says so (`force=True`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import tempfile
import time
from pathlib import Path

from .. import __version__
from .engine import results
from .batch import NotebookGrade, SubmissionGrade
from .exercises import BY_ID, EXERCISES

FIXED_COLUMNS = ("name", "path", "status")
TAIL_COLUMNS = ("total", "max_total", "feedback")


class GradebookExists(FileExistsError):
    """The gradebook (or its JSON report) is already there and force was not given."""


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


def exercise_columns(grades: list[SubmissionGrade]) -> list[str]:
    """The exercises that appear in the batch, in course order."""
    seen = {nb.exercise for g in grades for nb in g.notebooks if nb.exercise}
    return [e.id for e in EXERCISES if e.id in seen]


def _expected(grade: SubmissionGrade, columns: list[str]) -> list[str]:
    """The exercises a submission is graded on: all of the batch's for a folder, its own for a notebook."""
    if grade.submission.is_folder:
        return columns
    return [e for e in columns if e in grade.by_exercise()]


def row(grade: SubmissionGrade, columns: list[str]) -> dict[str, object]:
    """One gradebook row."""
    best = grade.by_exercise()
    expected = _expected(grade, columns)
    out: dict[str, object] = {"name": grade.submission.name, "path": grade.submission.path, "status": grade.status}
    for ex in columns:
        out[ex] = best[ex].score if ex in best else (0 if ex in expected else "")
    out["total"] = sum(best[ex].score for ex in expected if ex in best)
    out["max_total"] = sum(BY_ID[ex].max_score for ex in expected)
    out["feedback"] = feedback(grade, expected)
    return out


def feedback(grade: SubmissionGrade, expected: list[str]) -> str:
    """The feedback cell: what failed and why, what went wrong while running."""
    best = grade.by_exercise()
    parts: list[str] = []
    for ex in expected:
        nb = best.get(ex)
        if nb is None:
            parts.append(f"{ex}: no notebook for this exercise")
            continue
        parts += _check_feedback(nb)
    for nb in grade.notebooks:
        if nb.exercise is None or nb is not best.get(nb.exercise):
            parts += [f"{Path(nb.path).name}: {i}" for i in nb.incidents]
    if not grade.notebooks:
        parts.append("the folder holds no notebooks")
    return " | ".join(parts) if parts else "all checks passed"


def _check_feedback(nb: NotebookGrade) -> list[str]:
    parts = []
    for check in nb.checks:
        if check.status == results.PASSED:
            continue
        if check.status == results.NOT_ATTEMPTED:
            parts.append(f"{check.function}: not attempted")
            continue
        text = f"{check.function} {check.score}/{check.max_score}: {check.message}"
        parts.append(text + (f" Hint: {check.hint}" if check.hint else ""))
    parts += nb.incidents
    return parts


def write_gradebook(grades: list[SubmissionGrade], csv_path: Path | str, *, force: bool = False,
                    settings: dict | None = None) -> tuple[Path, Path]:
    """Write the CSV gradebook and its JSON report; returns both paths."""
    csv_path = Path(csv_path)
    ensure_writable(csv_path, force)
    columns = exercise_columns(grades)
    rows = [row(g, columns) for g in grades]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=[*FIXED_COLUMNS, *columns, *TAIL_COLUMNS], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    report = {
        "generated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "attention_course": __version__,
        "settings": settings or {},
        "exercises": {ex: {"title": BY_ID[ex].title, "max_score": BY_ID[ex].max_score,
                           "checks": {c.name: len(c.cases) for c in BY_ID[ex].checks}} for ex in columns},
        "submissions": [
            {**r, "notebooks": [_notebook_json(nb) for nb in g.notebooks]} for g, r in zip(grades, rows)
        ],
    }
    json_path = report_path(csv_path)
    _write_atomically(csv_path, buf.getvalue())
    _write_atomically(json_path, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return csv_path, json_path


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

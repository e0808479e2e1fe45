"""The gradebook: the CSV and its JSON report, read back and merged.

A report (`score.build_report`, a `report.Report`: the assignment, the
instructor's decisions, and one row per student with the points per
exercise, the late penalty, the total, the status, the feedback, what intake
found, and every notebook with every check and input) is saved as JSON beside
the CSV gradebook (one row per student, one column per exercise of the
assignment): `write_report` and `read_report` are where it meets JSON
(`Report.to_json`, `Report.from_json`). Everything else is
rendered from a report: the LMS files (`lms.py`), the feedback files
(`feedback.py`) and the class summary (`summary.py`); so reports of shards or
of a regrade merge (`merge_reports`) into the report one run would have
given, their decisions (adjustments, approvals) together. An existing
gradebook is never overwritten unless the caller says so (`force=True`), and
a merge into one keeps a backup of it. The report also says where the files
rendered from it were last written (`exports`, relative to the gradebook's
folder, so that a gradebook copied with its folder refers to the copy), so
that a regrade, an adjustment or an approval refreshes them.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import tempfile
from pathlib import Path

from ...._backup import backup as keep_backup
from .. import score
from ..report import Adjustment, Approval, Report, ReportFormatError, Row
from ...run.status import Status
from .lms import spreadsheet_text

FIXED_COLUMNS = ("student_id", "name", "email", "path", "status", "late")
TAIL_COLUMNS = ("penalty", "total", "max_total", "feedback")


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


def merge_reports(reports: list[Report]) -> Report:
    """One report from several of the same assignment: a later report's row replaces an earlier one's (same key).

    Shards of one class merge into the report of one run; a regrade of a few
    students merged into the class's report updates their rows only.
    MergeError if the reports were graded under different assignments.
    """
    if not reports:
        raise MergeError("no reports to merge")
    if not all(isinstance(r, Report) for r in reports):
        raise MergeError("not a gradebook report of this version of attention-course (read it with `read_report`)")
    first = reports[0]
    for r in reports[1:]:
        if r.assignment_fingerprint != first.assignment_fingerprint:
            raise MergeError(f"the reports were graded under different assignments ({first.title!r} "
                             f"and {r.title!r}, or the same one with other points, inputs or "
                             "deadline): grade them again under one assignment file")
    rows: dict[str, Row] = {}
    for r in reports:
        for sub in r.rows:
            nothing = Status.NO_SUBMISSION in sub.statuses
            if sub.key in rows and nothing and Status.NO_SUBMISSION not in rows[sub.key].statuses:
                continue  # a regrade of other students says nothing about this one
            if sub.key in rows:  # a regraded student keeps their place, and the LMS ids a folder cannot give
                earlier = rows[sub.key]
                sub = dataclasses.replace(sub, order=earlier.order, lms={**earlier.lms, **sub.lms})
            rows[sub.key] = sub
    notes = list(dict.fromkeys(n for r in reports for n in r.intake.notes))
    settings = [s for r in reports for s in (r.settings["merged"] if "merged" in r.settings else [r.settings])]
    decisions = score.merge_decisions(*(r.decisions for r in reports))
    roster = "; ".join(dict.fromkeys(r.intake.roster for r in reports if r.intake.roster))
    # a regrade from folders says where its own lateness came from
    lateness = "; ".join(dict.fromkeys(r.intake.lateness for r in reports if r.intake.lateness))
    left_out = tuple(dict.fromkeys(n for r in reports for n in r.intake.left_out))
    merged = score.report(first.assignment, first.assignment_fingerprint, first.exercises, list(rows.values()),
                          settings, notes, decisions, roster=roster, lateness=lateness, left_out=left_out)
    return merged  # where its files go is the caller's to say (`exports_entry`): each report's is relative to its own


def exports_entry(folder: Path | str, csv_path: Path | str) -> str:
    """What a report written to `csv_path` keeps of the folder its LMS files, feedback and summary went to."""
    return os.path.relpath(Path(folder).resolve(), Path(csv_path).resolve().parent)


def exports_folder(report: Report, csv_path: Path | str) -> Path | None:
    """The folder the files rendered from the report at `csv_path` were last written to, or None if never."""
    return (Path(csv_path).resolve().parent / report.exports).resolve() if report.exports else None


def with_decisions(report: Report, *, adjustments: list[Adjustment] | None = None,
                   approvals: list[Approval] = ()) -> Report:
    """The report again, its rows settled under new decisions: `adjustments` replace the report's (all of them: the
    adjustments file is the whole list), `approvals` are added to its own."""
    decisions = report.decisions
    new = dataclasses.replace(decisions, approvals=(*decisions.approvals, *approvals))
    if adjustments is not None:
        new = dataclasses.replace(new, adjustments=tuple(adjustments))
    found = report.intake
    out = score.report(report.assignment, report.assignment_fingerprint, report.exercises, list(report.rows),
                       [report.settings], list(found.notes), new, roster=found.roster, lateness=found.lateness,
                       left_out=found.left_out)
    return dataclasses.replace(out, exports=report.exports)


def read_report(path: Path | str) -> Report:
    """A report from its JSON file, or from the CSV gradebook beside it; MergeError if it is none of this version's."""
    path = Path(path)
    json_path = path if path.suffix == ".json" else report_path(path)
    try:
        data = json.loads(json_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(f"no report {json_path} (the JSON file written beside each gradebook)") from None
    except json.JSONDecodeError as err:
        raise MergeError(f"{json_path} is not a JSON report: {err}") from None
    try:
        return Report.from_json(data)
    except ReportFormatError as err:
        raise MergeError(f"{json_path}: {err}") from None


def csv_text(report: Report) -> str:
    """The CSV gradebook of a report: one row per student, one column per exercise of the assignment."""
    columns = [*FIXED_COLUMNS, *report.exercises, *TAIL_COLUMNS]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in report.rows:
        cells = [row.student_id, row.name, row.email, row.path, row.status, row.late,
                 *(row.points.get(ex) for ex in report.exercises), row.penalty, row.total, row.max_total, row.feedback]
        writer.writerow(map(spreadsheet_text, cells))
    return buf.getvalue()


def write_report(report: Report, csv_path: Path | str, *, force: bool = False,
                 backup: bool = False) -> tuple[Path, Path]:
    """Write a report's CSV gradebook and JSON; `backup` first keeps a copy of each existing one (`.bak-<time>`)."""
    csv_path = Path(csv_path)
    ensure_writable(csv_path, force or backup)
    json_path = report_path(csv_path)
    if backup:
        for path in (csv_path, json_path):
            if path.exists():
                keep_backup(path)
    _write_atomically(csv_path, csv_text(report))
    _write_atomically(json_path, json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n")
    return csv_path, json_path


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



"""Tests for attention_course/grading/classroom/report.py: the gradebook report's records, and the JSON file they are
read from and written to (`write/gradebook.py`'s `read_report` and `write_report`)."""

import dataclasses
from pathlib import Path

import pytest

from attention_course.grading.checks.engine import results
from attention_course.grading.classroom.report import (
    Adjustment,
    Approval,
    NotebookRecord,
    Report,
    ReportFormatError,
    Row,
)
from attention_course.grading.classroom.write import feedback, summary
from attention_course.grading.classroom.write.gradebook import MergeError, read_report, with_decisions, write_report
from attention_course.grading.run.status import Incident, Status

EARLIER = Path(__file__).parent / "fixtures" / "gradebook"
"""A gradebook and its report as the code before the typed records wrote them (report.json, report.csv): five
students with a duplicate, a late submission, an adjustment, an approval of held marks (stored under the former
words "releases" and "released after review"), a notebook of no exercise, nothing submitted,
no one on the roster, hidden inputs and a smaller failing input."""


def _without_unpredicted(value):
    """A report's JSON without each input's `unpredicted`: what judging weighed, which a report read back drops (the
    earlier code wrote it as a list of five, this one as null)."""
    if isinstance(value, dict):
        return {k: _without_unpredicted(v) for k, v in value.items() if k != "unpredicted"}
    if isinstance(value, list):
        return [_without_unpredicted(v) for v in value]
    return value


def _in_today_s_words(value):
    """A report's JSON with the words renamed since the earlier code wrote it: an approval of held marks was a
    "release" ("releases", "release", "released after review")."""
    if isinstance(value, dict):
        renamed = {"releases": "approvals", "release": "approval"}
        return {renamed.get(k, k): _in_today_s_words(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_in_today_s_words(v) for v in value]
    return "approved after review" if value == "released after review" else value


def test_a_report_written_by_the_earlier_code_reads_and_writes_again_the_same(tmp_path):
    import json

    report = read_report(EARLIER / "report.json")
    csv_path, json_path = write_report(report, tmp_path / "gradebook.csv")
    assert csv_path.read_bytes() == (EARLIER / "report.csv").read_bytes()  # the status column as it was written
    earlier = json.loads((EARLIER / "report.json").read_text())
    again = json.loads(json_path.read_text())
    assert _without_unpredicted(again) == _in_today_s_words(_without_unpredicted(earlier))
    assert "released after review" in json.dumps(earlier) and "releases" in earlier["decisions"]
    assert any(isinstance(c.get("unpredicted"), list) for nb in earlier["submissions"][0]["notebooks"]
               for check in nb["checks"] for c in check["cases"])  # the earlier layout is the one read
    written = write_report(read_report(json_path), tmp_path / "again.csv")[1]
    assert written.read_bytes() == json_path.read_bytes()  # this code's layout: byte for byte


def test_a_report_read_is_typed_all_the_way_down():
    report = read_report(EARLIER / "report.json")
    assert isinstance(report, Report) and all(isinstance(r, Row) for r in report.rows)
    alice, bob = report.rows[:2]
    assert alice.points == {"01_dot_scores": 0, "03_softmax": 9.5} and alice.total == 8.55 and alice.late == "1 day"
    assert alice.adjustments == (Adjustment("S1", "03_softmax", 1.5, "good plot", "S1"),)
    assert all(isinstance(s, Status) for r in report.rows for s in (*r.statuses, *r.found, *r.held))
    assert bob.held == (Status.NETWORK,) and Status.APPROVED in bob.statuses and isinstance(bob.approval, Approval)
    nb = alice.counted_notebooks()["03_softmax"]
    assert isinstance(nb, NotebookRecord) and nb.path == "sub/alice/old/03_softmax.ipynb"
    first = alice.notebooks[0]
    assert all(isinstance(c, results.CheckResult) for c in first.checks)
    assert isinstance(first.checks[0].smallest, results.CaseResult) and first.checks[0].every_failure
    assert all(isinstance(i, Incident) for i in first.incidents) and first.incidents[0].kind == Status.CELL_ERRORS
    assert report.intake.held == () and report.intake.no_submission == ("Dan Doe",)
    assert report.exercises["03_softmax"].checks["softmax"].points == 10
    with pytest.raises(dataclasses.FrozenInstanceError):
        alice.total = 20


def test_the_files_written_from_a_report_are_the_same_after_it_is_saved_and_read(tmp_path):
    report = read_report(EARLIER / "report.json")
    again = with_decisions(report, adjustments=[])  # settled anew, as a just-made report is
    _, json_path = write_report(again, tmp_path / "gradebook.csv")
    read = read_report(json_path)
    assert [r.feedback for r in read.rows] == [r.feedback for r in again.rows]
    assert summary.page(read) == summary.page(again)
    assert [feedback.text(read, r) for r in read.rows] == [feedback.text(again, r) for r in again.rows]
    assert [feedback.page(read, r) for r in read.rows] == [feedback.page(again, r) for r in again.rows]
    assert again.rows[0].adjustments == () and again.rows[0].total < report.rows[0].total


def test_json_that_is_no_report_is_refused(tmp_path):
    with pytest.raises(ReportFormatError, match="not a gradebook report"):
        Report.from_json({"rows": []})
    (tmp_path / "old.json").write_text('{"submissions": [{"key": "S1"}], "assignment_fingerprint": "x"}')
    with pytest.raises(MergeError, match="older attention-course"):
        read_report(tmp_path / "old.json")

"""Tests for attention_course/grading/gradebook.py: the CSV, the JSON report, the student's table."""

import csv
import json
from pathlib import Path

import pytest

from attention_course.grading.engine import results
from attention_course.grading.batch import NotebookGrade, Submission, SubmissionGrade
from attention_course.grading.exercises import BY_ID
from attention_course.grading.gradebook import (
    GradebookExists, ensure_writable, format_report, free_path, report_path, write_gradebook,
)


def check_result(name, score, maximum, status=results.PASSED, message="", hint=""):
    case = results.CaseResult("in", "x = 1", "1", "1", status if score < maximum else results.PASSED, message, hint)
    return results.CheckResult(name, name, score == maximum, score, maximum,
                               results.PASSED if score == maximum else status, message, hint, None, (case,))


def softmax_grade(score, status="ok"):
    maximum = BY_ID["03_softmax"].max_score
    check = check_result("softmax", score, maximum, results.FAILED, "got nan", "subtract the max")
    return NotebookGrade("x/03_softmax.ipynb", "03_softmax", [check], status)


def grades():
    alice = SubmissionGrade(Submission("alice", "sub/alice.ipynb", [Path("sub/alice.ipynb")]), [softmax_grade(8)])
    bob = SubmissionGrade(Submission("bob", "sub/bob.ipynb", [Path("sub/bob.ipynb")]),
                          [softmax_grade(BY_ID["03_softmax"].max_score)])
    broken = SubmissionGrade(Submission("eve", "sub/eve.ipynb", [Path("sub/eve.ipynb")]),
                             [NotebookGrade("sub/eve.ipynb", None, status="invalid notebook",
                                            incidents=["the file is not a valid notebook"])])
    carol_nb = NotebookGrade("sub/carol/01_dot_scores.ipynb", "01_dot_scores",
                             [check_result("dot_scores", 6, 6)], "ok")
    carol = SubmissionGrade(Submission("carol", "sub/carol", [Path(carol_nb.path)], is_folder=True), [carol_nb])
    return [alice, bob, broken, carol]


def test_csv_has_a_row_per_submission_and_a_column_per_exercise(tmp_path):
    csv_path, json_path = write_gradebook(grades(), tmp_path / "gradebook.csv")
    assert json_path == tmp_path / "gradebook.json"
    rows = list(csv.DictReader(csv_path.open()))
    assert list(rows[0]) == ["name", "path", "status", "01_dot_scores", "03_softmax", "total", "max_total", "feedback"]
    by_name = {r["name"]: r for r in rows}
    softmax_max = BY_ID["03_softmax"].max_score
    assert by_name["alice"]["03_softmax"] == "8" and by_name["alice"]["01_dot_scores"] == ""
    assert by_name["alice"]["max_total"] == str(softmax_max)
    assert "softmax 8/" in by_name["alice"]["feedback"] and "subtract the max" in by_name["alice"]["feedback"]
    assert by_name["bob"]["feedback"] == "all checks passed"
    assert by_name["eve"]["status"] == "invalid notebook" and by_name["eve"]["total"] == "0"
    assert "not a valid notebook" in by_name["eve"]["feedback"]
    # a student's folder is graded on every exercise of the batch: the missing one counts 0
    assert by_name["carol"]["03_softmax"] == "0" and by_name["carol"]["total"] == "6"
    assert by_name["carol"]["max_total"] == str(6 + softmax_max)
    assert "03_softmax: no notebook" in by_name["carol"]["feedback"]


def test_json_report_keeps_every_case(tmp_path):
    _, json_path = write_gradebook(grades(), tmp_path / "gb.csv", settings={"jobs": 2})
    report = json.loads(json_path.read_text())
    assert report["settings"] == {"jobs": 2} and report["exercises"]["03_softmax"]["max_score"] > 0
    alice = report["submissions"][0]
    assert alice["name"] == "alice" and alice["notebooks"][0]["checks"][0]["cases"][0]["inputs"] == "x = 1"


def test_an_existing_gradebook_is_never_overwritten_silently(tmp_path):
    out = tmp_path / "gradebook.csv"
    out.write_text("precious")
    with pytest.raises(GradebookExists, match="--force"):
        write_gradebook(grades(), out)
    assert out.read_text() == "precious"
    report_only = tmp_path / "other.csv"
    report_path(report_only).write_text("{}")
    with pytest.raises(GradebookExists):
        ensure_writable(report_only)
    write_gradebook(grades(), out, force=True)
    assert out.read_text().startswith("name,path,status")
    assert free_path(out) == tmp_path / "gradebook-2.csv"


def test_student_table_names_checks_and_details():
    text = format_report([softmax_grade(8), NotebookGrade("y.ipynb", None, status="unknown exercise",
                                                          incidents=["not one of the exercises"])])
    assert "03_softmax.ipynb — 03_softmax: 8/" in text
    assert "✗ softmax" in text and "What went wrong" in text and "subtract the max" in text
    assert "y.ipynb — (not an exercise): 0/0 inputs passed; the notebook: unknown exercise" in text
    full = BY_ID["03_softmax"].max_score
    assert f"03_softmax: 8/{full} inputs passed; the notebook ran: ok" in text and f"✗ softmax failed; 8/{full} inputs passed" in text
    assert "! not one of the exercises" in text
    assert "Total: 8/" in text

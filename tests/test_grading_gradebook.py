"""Tests for the gradebook (classroom/score.py's report, classroom/write/gradebook.py's CSV and JSON, merging) and the student's table."""

import csv
import dataclasses
import datetime as dt
import json
from pathlib import Path

import pytest

from attention_course.grading.checks.engine import results
from attention_course.grading.checks.exercises import BY_ID, EXERCISES
from attention_course.cli import main
from attention_course.grading.classroom.assignment import Assignment, AssignmentError, from_dict
from attention_course.grading.classroom.batch import SubmissionGrade
from attention_course.grading.classroom.intake import Submission
from attention_course.grading.classroom.report import Adjustment
from attention_course.grading.run.judge import NotebookGrade
from attention_course.grading.classroom.adjustments import AdjustmentError, read_adjustments
from attention_course.grading.classroom.score import build_report, days_late
from attention_course.grading.run.status import Incident, Status
from attention_course.grading.classroom.write.gradebook import (
    FIXED_COLUMNS,
    TAIL_COLUMNS,
    GradebookExists,
    MergeError,
    csv_text,
    ensure_writable,
    free_path,
    merge_reports,
    read_report,
    report_path,
    write_report,
)
from attention_course.grading.run.table import format_report
from support.gradebook import write_gradebook

DEFAULT = Assignment.default().marking()
"""What scoring needs of the default assignment (every exercise, one point per input)."""


def check_result(name, score, maximum, status=results.CheckStatus.PASSED, message="", hint=""):
    case = results.CaseResult("in", "x = 1", "1", "1", status if score < maximum else results.CheckStatus.PASSED, message, hint)
    return results.CheckResult(name, name, score == maximum, score, maximum,
                               results.CheckStatus.PASSED if score == maximum else status, message, hint, None, (case,))


def softmax_grade(score, status=Status.OK):
    maximum = BY_ID["03_softmax"].max_score
    check = check_result("softmax", score, maximum, results.CheckStatus.FAILED, "got nan", "subtract the max")
    return NotebookGrade("x/03_softmax.ipynb", "03_softmax", [check], (status,))


def grades():
    alice = SubmissionGrade(Submission("alice", "sub/alice.ipynb", [Path("sub/alice.ipynb")]), [softmax_grade(8)])
    bob = SubmissionGrade(Submission("bob", "sub/bob.ipynb", [Path("sub/bob.ipynb")]),
                          [softmax_grade(BY_ID["03_softmax"].max_score)])
    broken = SubmissionGrade(Submission("eve", "sub/eve.ipynb", [Path("sub/eve.ipynb")]),
                             [NotebookGrade("sub/eve.ipynb", None, statuses=(Status.INVALID_NOTEBOOK,),
                                            incidents=[Incident("the file is not a valid notebook",
                                                                Status.INVALID_NOTEBOOK)])])
    carol_nb = NotebookGrade("sub/carol/01_dot_scores.ipynb", "01_dot_scores",
                             [check_result("dot_scores", 6, 6)], (Status.OK,))
    carol = SubmissionGrade(Submission("carol", "sub/carol", [Path(carol_nb.path)], is_folder=True), [carol_nb])
    return [alice, bob, broken, carol]


def test_csv_has_a_row_per_submission_and_a_column_per_exercise_of_the_assignment(tmp_path):
    csv_path, json_path = write_gradebook(grades(), tmp_path / "gradebook.csv")
    assert json_path == tmp_path / "gradebook.json"
    rows = list(csv.DictReader(csv_path.open()))
    assert list(rows[0]) == [*FIXED_COLUMNS, *(e.id for e in EXERCISES), *TAIL_COLUMNS]
    by_name = {r["name"]: r for r in rows}
    softmax_max = BY_ID["03_softmax"].max_score
    assert by_name["alice"]["03_softmax"] == "8" and by_name["alice"]["01_dot_scores"] == "0"
    # the maximum is the assignment's (by default every exercise), whatever the submission or the batch holds
    full = str(sum(e.max_score for e in EXERCISES))
    assert {r["max_total"] for r in rows} == {full}
    assert "softmax 8/" in by_name["alice"]["feedback"] and "subtract the max" in by_name["alice"]["feedback"]
    assert "01_dot_scores: no notebook" in by_name["alice"]["feedback"]
    assert by_name["eve"]["status"] == "invalid notebook" and by_name["eve"]["total"] == "0"
    assert "not a valid notebook" in by_name["eve"]["feedback"]
    dot_max = str(BY_ID["01_dot_scores"].max_score)  # carol's 6/6 is worth the exercise's full points
    assert by_name["carol"]["01_dot_scores"] == dot_max and by_name["carol"]["total"] == dot_max
    assert by_name["bob"]["total"] == str(softmax_max)


def test_a_name_that_starts_like_a_formula_is_text_in_every_csv(tmp_path):
    # a name a student chose (Moodle's download folders carry the full name) must not run when the CSV is opened
    from attention_course.grading.classroom.write.lms import canvas_csv, moodle_csv

    named = [(SubmissionGrade(Submission(name, f"sub/{i}.ipynb", [Path(f"sub/{i}.ipynb")],
                                         lms={"canvas_id": str(10 + i), "moodle_id": str(20 + i)}), [softmax_grade(8)]))
             for i, name in enumerate(['=HYPERLINK("http://x.example","click")', "@SUM(1+1)", "+1-555", "-2-3", "-5"])]
    csv_path, _ = write_gradebook(named, tmp_path / "gradebook.csv")
    report = read_report(csv_path)
    want = ["'=HYPERLINK(\"http://x.example\",\"click\")", "'@SUM(1+1)", "'+1-555", "'-2-3", "-5"]
    assert [r["name"] for r in csv.DictReader(csv_path.open())] == want
    assert [r.name for r in report.rows] == [g.submission.name for g in named]  # the report keeps them
    canvas = list(csv.reader(canvas_csv(report)[0].splitlines()))[1:]
    moodle = list(csv.DictReader(moodle_csv(report)[0].splitlines()))
    assert [r[0] for r in canvas] == want and [r["Full name"] for r in moodle] == want
    assert {r["Last modified (submission)"] for r in moodle} == {"-"}  # Moodle's "no date" stays itself


def test_points_come_from_the_assignment(tmp_path):
    assignment = from_dict({"exercises": ["03_softmax"], "points": 20})
    csv_path, _ = write_gradebook(grades(), tmp_path / "gradebook.csv", assignment=assignment)
    rows = {r["name"]: r for r in csv.DictReader(csv_path.open())}
    maximum = BY_ID["03_softmax"].max_score
    assert list(next(iter(rows.values()))) == [*FIXED_COLUMNS, "03_softmax", *TAIL_COLUMNS]
    assert float(rows["alice"]["03_softmax"]) == pytest.approx(20 * 8 / maximum, abs=0.005) and rows["alice"]["max_total"] == "20"
    assert rows["bob"]["total"] == "20" and rows["carol"]["total"] == "0"  # carol's 01_dot_scores is not in it
    assert "not in the assignment" not in rows["carol"]["status"]  # graded before: the batch decides nothing here


def test_json_report_keeps_every_case(tmp_path):
    _, json_path = write_gradebook(grades(), tmp_path / "gb.csv", settings={"jobs": 2})
    report = json.loads(json_path.read_text())
    assert report["settings"] == {"jobs": 2} and report["exercises"]["03_softmax"]["max_score"] > 0
    alice = report["submissions"][0]
    assert alice["name"] == "alice" and alice["notebooks"][0]["checks"][0]["cases"][0]["inputs"] == "x = 1"


def test_merge_replaces_rows_by_student_and_keeps_the_class_order():
    everyone = build_report(grades(), DEFAULT)
    regraded = grades()[0]
    regraded.notebooks[0] = softmax_grade(BY_ID["03_softmax"].max_score)
    merged = merge_reports([everyone, build_report([regraded], DEFAULT)])
    assert [r.name for r in merged.rows] == ["alice", "bob", "eve", "carol"]
    assert merged.rows[0].points["03_softmax"] == BY_ID["03_softmax"].max_score
    bob_again = grades()[1]
    bob_again.notebooks[0] = softmax_grade(0)
    bob_again.submission.order = 0  # graded on its own, without the class: its place comes from the gradebook
    everyone_orders = tuple(dataclasses.replace(r, order=i) for i, r in enumerate(everyone.rows))
    merged = merge_reports([dataclasses.replace(everyone, rows=everyone_orders), build_report([bob_again], DEFAULT)])
    assert [r.name for r in merged.rows] == ["alice", "bob", "eve", "carol"]
    assert merged.rows[1].points["03_softmax"] == 0
    assert csv_text(merge_reports([everyone])) == csv_text(everyone)
    other = build_report(grades(), from_dict({"exercises": ["03_softmax"]}).marking())
    with pytest.raises(MergeError, match="different assignments"):
        merge_reports([everyone, other])


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
    assert out.read_text().startswith(",".join(FIXED_COLUMNS))
    assert free_path(out) == tmp_path / "gradebook-2.csv"


def test_student_table_names_checks_and_details():
    text = format_report([softmax_grade(8), NotebookGrade("y.ipynb", None, statuses=(Status.UNKNOWN_EXERCISE,),
                                                          incidents=["not one of the exercises"])])
    assert "03_softmax.ipynb — 03_softmax: 8/" in text
    assert "✗ softmax" in text and "What went wrong" in text and "subtract the max" in text
    assert "y.ipynb — (not an exercise): 0/0 inputs passed; the notebook: unknown exercise" in text
    full = BY_ID["03_softmax"].max_score
    assert f"03_softmax: 8/{full} inputs passed; the notebook ran: ok" in text and f"✗ softmax failed; 8/{full} inputs passed" in text
    assert "! not one of the exercises" in text
    assert "Total: 8/" in text


def test_the_feedback_cell_never_quotes_a_hidden_input(tmp_path):
    hidden = results.CaseResult("float32 scores", "x = [0.5, 0.25]", "[0.56, 0.44]", "[nan, nan]", results.CheckStatus.FAILED,
                                "got nan at index 0 where 0.5622 was expected", "subtract the max", hidden=True)
    check = results.CheckResult.from_cases("softmax", "softmax", [hidden])
    grade = SubmissionGrade(Submission("dan", "sub/dan.ipynb", [Path("sub/dan.ipynb")]),
                            [NotebookGrade("sub/dan/03_softmax.ipynb", "03_softmax", [check], (Status.OK,))])
    csv_path, _ = write_gradebook([grade], tmp_path / "gradebook.csv")
    cell = next(csv.DictReader(csv_path.open()))["feedback"]
    assert "only the grader tries: float32 scores" in cell and "0.5622" not in cell and "subtract the max" in cell


def _adjustments(path: Path, *lines: str) -> Path:
    path.write_text("student,exercise,points,reason\n" + "".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_adjustments_are_checked_line_by_line(tmp_path):
    exercises = ("03_softmax",)
    good = read_adjustments(_adjustments(tmp_path / "a.csv", "alice,03_softmax,4.5,asked in class"), exercises)
    assert good == [Adjustment("alice", "03_softmax", 4.5, "asked in class")]
    for line, words in (("alice,04_attention,1,x", "line 2: exercise '04_attention' is not one of"),
                        ("alice,03_softmax,four,x", "line 2: points must be a number"),
                        ("alice,03_softmax,1,", "line 2: student and reason must not be empty")):
        with pytest.raises(AdjustmentError, match=words):
            read_adjustments(_adjustments(tmp_path / "a.csv", line), exercises)
    with pytest.raises(AdjustmentError, match="line 3: alice and 03_softmax are already on line 2"):
        read_adjustments(_adjustments(tmp_path / "a.csv", "alice,03_softmax,1,x", "alice,03_softmax,2,y"), exercises)
    (tmp_path / "b.csv").write_text("who,points\n")
    with pytest.raises(AdjustmentError, match="need the columns student, exercise, points, reason"):
        read_adjustments(tmp_path / "b.csv", exercises)


def test_an_adjustment_stays_within_the_exercise_s_points_and_comes_before_the_late_rule(tmp_path, capsys):
    assignment = from_dict({"exercises": ["03_softmax"], "points": 20, "deadline": dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc),
                            "late": {"penalty_per_day": 0.5}})
    alice, bob = grades()[:2]
    alice.submission.marked_late = True  # late by one day: half the marks
    report = build_report([alice, bob], assignment.marking())
    csv_path, _ = write_report(report, tmp_path / "gradebook.csv")
    before = {r["name"]: r for r in csv.DictReader(csv_path.open())}
    adjustments = _adjustments(tmp_path / "adj.csv", "alice,03_softmax,100,found by hand", "bob,03_softmax,-3,copied")
    assert main(["gradebook", "adjust", str(csv_path), str(adjustments)]) == 0
    assert "no LMS files were written from this gradebook yet" in capsys.readouterr().out
    rows = {r["name"]: r for r in csv.DictReader(csv_path.open())}
    assert (rows["alice"]["03_softmax"], rows["alice"]["penalty"], rows["alice"]["total"]) == ("20", "10", "10")
    assert (rows["bob"]["03_softmax"], rows["bob"]["total"]) == ("17", "17")
    assert rows["bob"]["status"] == "adjusted" and "03_softmax: -3 points (copied)" in rows["bob"]["feedback"]
    assert before["bob"]["total"] == "20" and len(list(tmp_path.glob("gradebook.csv.bak-*"))) == 1
    assert main(["gradebook", "adjust", str(csv_path), str(_adjustments(tmp_path / "none.csv"))]) == 0
    assert {r["name"]: r["total"] for r in csv.DictReader(csv_path.open())} == {"alice": before["alice"]["total"], "bob": "20"}


def test_an_extension_moves_one_student_s_deadline():
    assignment = from_dict({"exercises": ["03_softmax"], "deadline": dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc),
                            "extensions": {"S2": dt.datetime(2026, 3, 5, tzinfo=dt.timezone.utc)}})
    two_days_late = dt.datetime(2026, 3, 2, 12, tzinfo=dt.timezone.utc)
    assert days_late(assignment.marking(), two_days_late, student_id="S1") == 2
    assert days_late(assignment.marking(), two_days_late, student_id="S2") == 0
    assert days_late(assignment.marking(), None, marked_late=True, student_id="S1") == 1  # the LMS's mark, no time
    assert days_late(assignment.marking(), None, marked_late=True, student_id="S2") == 0  # judged against the LMS's deadline
    with pytest.raises(AssignmentError, match="extensions.S3 .* needs a time zone"):
        from_dict({"extensions": {"S3": dt.datetime(2026, 3, 5)}})


@pytest.mark.parametrize("policy, held, points", [("hold", True, 8), ("grade", False, 8), ("zero", False, 0)])
def test_exercise_0_on_another_student_s_handout_follows_the_assignment_s_policy(policy, held, points):
    maximum = BY_ID["00_worked_example"].max_score
    check = check_result("worked_example", maximum, maximum)
    notebook = NotebookGrade("sub/s4/00_worked_example.ipynb", "00_worked_example", [check],
                             (Status.HANDOUT_MISMATCH,), handout="s1")
    grade = SubmissionGrade(Submission("Dev Patel", "sub/s4", [Path(notebook.path)], is_folder=True,
                                       student={"student_id": "s4", "name": "Dev Patel"}), [notebook])
    table = {"exercises": ["00_worked_example"], "exercise": {"00_worked_example": {"points": 8}}}
    if policy != "hold":
        table["integrity"] = {"handout_mismatch": policy}
    row = build_report([grade], from_dict(table).marking()).rows[0]
    mismatch = "exercise 0 from another student's handout: s1"
    assert (Status.HELD in row.statuses, row.total) == (held, points)
    assert row.status == (f"held for review (exercise 0 from another student's handout); {mismatch}" if held
                             else mismatch)
    with pytest.raises(AssignmentError, match="handout_mismatch must be one of"):
        from_dict({**table, "integrity": {"handout_mismatch": "ignore"}})



def test_a_submission_s_status_is_its_worst_notebook_s_and_the_row_words_each_notebook():
    from attention_course.grading.classroom.score import notebooks_text

    notebooks = [NotebookGrade("sub/dan/01.ipynb", "01_dot_scores", statuses=(Status.OK,)),
                 NotebookGrade("sub/dan/03.ipynb", "03_softmax", statuses=(Status.TIMEOUT, Status.CELL_ERRORS))]
    folder = SubmissionGrade(Submission("dan", "sub/dan", [Path(nb.path) for nb in notebooks], is_folder=True), notebooks)
    assert folder.status is Status.TIMEOUT
    assert notebooks_text(folder.notebooks) == "03 (03_softmax): timeout, cell errors"
    assert SubmissionGrade(Submission("eve", "", []), []).status is Status.NO_NOTEBOOKS
    assert grades()[1].status is Status.OK

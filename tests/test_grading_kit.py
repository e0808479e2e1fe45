"""The instructor's kit end to end, through the real CLI, on a generated class (tests/grading_class.py).

One command, typed as the README gives it (relative paths), takes a Canvas
download and a roster to the Canvas and Moodle import files, a feedback file
per student, the LMS feedback zips and the class summary, for a class with
every kind of work once: right, wrong, untouched, missing, late, extended,
adjusted, resubmitted, zipped, renamed, wrong exercise, corrupt, `.py`,
hostile (held for review until approved) and someone not on the roster.
Shards merged, a regrade merged and a Dask run give what one local run gives.
"""

import csv
import datetime as dt
import io
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from attention_course.cli import main
from attention_course.grading.classroom.write.lms import MOODLE_COLUMNS

import grading_class as gc

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--no-progress"]
CLASS_SIZE = 19
"""Every kind of work of grading_class.KINDS once."""
HELD = {"hostile:signal_parent": "signal", "hostile:network": "network", "hostile:read_outside": "read outside",
        "hostile:fork_bomb": "too many processes"}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """The class's folder, the working folder of every command (so their paths are relative, as typed): the Canvas
    zip (with someone not on the roster, an entry that points outside and a stray file), roster, assignment (with
    an extension) and adjustments."""
    root = tmp_path_factory.mktemp("class")
    people = gc.students(CLASS_SIZE)
    assert {p.kind for p in people} == set(gc.KINDS)
    stray = {f"{people[1].slug}_{people[1].canvas_id}_1_notes.txt": b"my notes", "../../outside.txt": b"x"}
    before = Path.cwd()
    os.chdir(root)
    try:
        canvas = gc.canvas_zip(Path("canvas.zip"), [*people, gc.off_roster()], extra=stray)
        people[1].attachments.append("1")  # the notes.txt beside their notebooks
        yield {
            "root": root, "people": people, "stray": gc.off_roster(), "canvas": canvas,
            "roster": gc.write_roster(Path("roster.csv"), people),
            "assignment": _write(Path("assignment.toml"), gc.assignment_text(people)),
            "adjustments": gc.write_adjustments(Path("adjustments.csv"), people),
        }
    finally:
        os.chdir(before)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _grade(klass, *extra, submissions=None) -> int:
    os.chdir(klass["root"])
    args = ["grade", *(submissions or [str(klass["canvas"])]), "--roster", str(klass["roster"]),
            "--assignment", str(klass["assignment"]), "--adjustments", str(klass["adjustments"]), *extra, *FAST]
    return main(args)


@pytest.fixture(scope="module")
def one_run(klass):
    assert _grade(klass, "--out-dir", "week1/") == 0  # relative, as the README writes it
    return klass["root"] / "week1"


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def _kind(klass, kind: str) -> gc.Student:
    return next(p for p in klass["people"] if p.kind == kind)


def test_one_command_grades_every_kind_of_work(klass, one_run):
    people = klass["people"]
    gradebook = {r["student_id"] or r["name"]: r for r in _rows(one_run / "gradebook.csv")}
    assert list(gradebook) == [p.student_id for p in people] + ["strayquentin"]
    row = {p.kind: gradebook[p.student_id] for p in people}
    assert {r["max_total"] for r in gradebook.values()} == {"30"}
    for kind in ("full", "zipped", "renamed"):
        assert (row[kind]["total"], row[kind]["status"]) == ("30", "ok"), kind
    assert (row["stub"]["total"], row["stub"]["status"]) == ("0", "not attempted")
    assert (row["none"]["total"], row["none"]["status"]) == ("0", "no submission")
    assert 0 < float(row["wrong"]["03_softmax"]) < 20 and "Hint" in row["wrong"]["feedback"]
    # every exercise missing, every file ignored and every incident is named: no "ok" that is not
    assert (row["one"]["total"], row["one"]["status"]) == ("10", "exercise missing: 03_softmax")
    assert (row["py"]["total"], row["py"]["status"]) == ("10", "exercise missing: 03_softmax; ignored files: 03_softmax.py")
    assert row["wrong exercise"]["status"] == "03_softmax (04_attention): not in the assignment; exercise missing: 03_softmax"
    assert (row["corrupt"]["total"], row["corrupt"]["status"]) == ("10", "03_softmax: invalid notebook")
    assert (row["error"]["total"], row["error"]["status"]) == ("30", "cell errors")  # functions defined before it
    assert (row["late"]["late"], row["late"]["total"], row["late"]["status"]) == ("1 day", "27", "late")
    assert (row["extended"]["late"], row["extended"]["total"]) == ("", "30")  # Canvas's late mark, but an extension
    assert (row["resubmitted"]["total"], row["resubmitted"]["status"]) == ("30", "duplicates")  # the best attempt
    adjusted = float(row["wrong"]["03_softmax"]) + 4
    assert float(row["adjusted"]["03_softmax"]) == pytest.approx(adjusted) and row["adjusted"]["status"] == "adjusted"
    for kind, what in HELD.items():
        assert row[kind]["status"] == f"held for review ({what}); 03_softmax: {what}", kind
        assert row[kind]["total"] == "30", kind  # marks kept, shown: what the functions earned
    stray = gradebook["strayquentin"]
    assert stray["status"] == "not on the roster" and stray["total"] == "30"
    assert not (klass["root"] / "outside.txt").exists() and not (klass["root"].parent / "outside.txt").exists()


def test_the_lms_files_leave_out_held_marks_and_strangers(klass, one_run):
    people = klass["people"]
    gradebook = {r["student_id"]: r for r in _rows(one_run / "gradebook.csv")}
    counted = [p for p in people if p.kind not in HELD]
    canvas = _rows(one_run / "canvas.csv")
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention, week 1 (4711)"]
    assert [(r["ID"], r["SIS User ID"], r["Attention, week 1 (4711)"]) for r in canvas] == [
        (p.canvas_id, p.sis_user_id, gradebook[p.student_id]["total"]) for p in counted]  # the download's id too
    moodle = _rows(one_run / "moodle.csv")
    assert tuple(moodle[0]) == MOODLE_COLUMNS
    assert [(r["Identifier"], r["Grade"], r["Maximum Grade"]) for r in moodle] == [
        (f"Participant {p.moodle_id}", gradebook[p.student_id]["total"], "30") for p in counted if p.in_roster_moodle]
    assert all(r["Last modified (grade)"] for r in moodle)  # Moodle's import refuses a worksheet without it
    # Canvas's Re-Upload Submissions reads the first two numbers of each name: the user and one of their files
    names = zipfile.ZipFile(one_run / "feedback-canvas.zip").namelist()
    found = {}
    for name in names:
        user, attachment = [part for part in name.split("_") if part.isdigit()][:2]
        found[user] = attachment
    sent = [p for p in counted if gc.files_of(p)]
    assert found == {p.canvas_id: found[p.canvas_id] for p in sent}
    assert all(found[p.canvas_id] in p.attachments for p in sent)


def test_the_feedback_and_the_summary_say_what_happened(klass, one_run):
    people = klass["people"]
    report = json.loads((one_run / "gradebook.json").read_text())
    pages = sorted((one_run / "feedback").glob("*.html"))
    assert len(pages) == len(people) + 1 and len(list((one_run / "feedback").glob("*.txt"))) == len(people) + 1

    def feedback(kind: str) -> str:
        return (one_run / "feedback" / f"{_kind(klass, kind).student_id}.txt").read_text()

    assert "Nothing of yours was in the submissions" in feedback("none")
    assert "✗ softmax" in feedback("wrong") and "exp of a large score overflows" in feedback("wrong")
    assert "Late by 1 day" in feedback("late") and "RuntimeError: a cell that fails" in feedback("error")
    assert "notes.txt: not a notebook" in (one_run / "feedback" / f"{people[1].student_id}.txt").read_text()
    assert "unpacked my work.zip, which they handed in" in feedback("zipped")
    assert "03_softmax.ipynb: not counted: the best attempt at 03_softmax counts" in feedback("resubmitted")
    assert "+4 points, by your instructor: the softmax works on the examples asked for in class" in feedback("adjusted")
    for kind, what in HELD.items():
        text = feedback(kind)
        assert f"Held for review: your notebook tried something beyond running its own code ({what})" in text
        assert "python -s" not in text and "worker import" not in text, kind  # what their code did, not the grader
    assert "started processes (`os.fork()`)" in feedback("hostile:fork_bomb")
    hidden_inputs = {c["inputs"] for row in report["submissions"] for nb in row["notebooks"] for check in nb["checks"]
                     for c in check["cases"] if c["hidden"] and len(c["inputs"]) > 12}
    assert hidden_inputs
    for page in pages:
        html_text, text = page.read_text(), page.with_suffix(".txt").read_text()
        assert "<script" not in html_text and not re.search(r"(src|href)=['\"]?https?:", html_text)
        for secret in hidden_inputs:  # described, never revealed
            assert secret not in html_text and secret not in text, (page.name, secret)

    summary = (one_run / "summary.html").read_text()
    assert "<svg" in summary and "<script" not in summary
    assert f"{CLASS_SIZE} students on the roster, {CLASS_SIZE - 1} with a submission; 1 submission from no one" in summary
    assert "late or not, as Canvas marked each submission" in summary
    held = summary[summary.index("Held for review"):summary.index("Points per exercise")]
    assert all(_kind(klass, kind).name in held for kind in HELD)
    assert "the softmax works on the examples asked for in class" in summary
    # where to read again: the rendered page's section where the book was built here, else the command opening it
    assert ".ipynb, section" not in summary
    assert "stable_softmax.html#" in summary or "attention-course book stable_softmax" in summary
    assert "outside.txt" in summary and _kind(klass, "none").name in summary  # refused entry, no submission
    incidents = summary[summary.index("Notebooks with incidents"):]
    assert _kind(klass, "error").name in incidents and "RuntimeError" in incidents


def test_an_approval_recorded_in_the_gradebook_puts_held_marks_in_the_lms_files(klass, one_run, capsys):
    shutil.copytree(one_run, klass["root"] / "reviewed")
    signal, network = _kind(klass, "hostile:signal_parent"), _kind(klass, "hostile:network")
    assert main(["gradebook", "approve", "reviewed/gradebook.csv", signal.student_id, network.name,
                 "--note", "looked at it: copied from a forum, no harm done"]) == 0
    assert f"approved {signal.name} ({signal.student_id}): signal" in capsys.readouterr().out
    rows = {r["student_id"]: r for r in _rows(klass["root"] / "reviewed" / "gradebook.csv")}
    assert rows[signal.student_id]["status"] == "approved after review (signal); 03_softmax: signal"
    report = json.loads((klass["root"] / "reviewed" / "gradebook.json").read_text())
    assert [(r["student"], r["note"]) for r in report["decisions"]["approvals"]] == [
        (signal.student_id, "looked at it: copied from a forum, no harm done"),
        (network.student_id, "looked at it: copied from a forum, no harm done")]
    canvas = {r["SIS User ID"]: r for r in _rows(klass["root"] / "reviewed" / "canvas.csv")}  # its own copy refreshed
    assert canvas[signal.sis_user_id]["Attention, week 1 (4711)"] == "30"
    assert _kind(klass, "hostile:fork_bomb").sis_user_id not in canvas
    assert signal.sis_user_id not in {r["SIS User ID"] for r in _rows(one_run / "canvas.csv")}  # the original kept
    # `release`, the command's former name, still runs it, and says so
    assert main(["gradebook", "release", "reviewed/gradebook.csv", _kind(klass, "full").student_id,
                 "--note", "x"]) == 2
    err = capsys.readouterr().err
    assert "now called `gradebook approve`" in err and "nothing of theirs is held for review" in err


def _same_files(here: Path, there: Path) -> None:
    """Every file written from a gradebook is the same in both folders (Moodle's `Last modified (grade)` aside:
    when the grades were made)."""
    for name in ("gradebook.csv", "canvas.csv", "summary.html", "feedback-canvas.zip", "feedback-moodle.zip"):
        assert (here / name).read_bytes() == (there / name).read_bytes(), name
    stamp = MOODLE_COLUMNS.index("Last modified (grade)")
    mine, theirs = (list(csv.reader((d / "moodle.csv").open(encoding="utf-8"))) for d in (here, there))
    assert [r[:stamp] + r[stamp + 1:] for r in mine] == [r[:stamp] + r[stamp + 1:] for r in theirs]
    for page in (there / "feedback").iterdir():
        assert (here / "feedback" / page.name).read_text() == page.read_text(), page.name


def test_shards_merged_equal_one_run(klass, one_run, capsys):
    for k in (1, 2):  # relative --out, as typed; a student's zip is unpacked beside each
        assert _grade(klass, "--shard", f"{k}/2", "--out", f"shard{k}.csv") == 0
    assert len(_rows(klass["root"] / "shard1.csv")) == (CLASS_SIZE + 2) // 2
    assert main(["gradebook", "merge", "shard1.json", "shard2.json", "--out", "merged/gradebook.csv",
                 "--out-dir", "merged"]) == 0
    _same_files(klass["root"] / "merged", one_run)


def test_a_regrade_replaces_only_the_exercises_given_and_refreshes_every_file(klass, one_run, tmp_path, capsys):
    shutil.copytree(one_run, tmp_path / "week1")
    gradebook = tmp_path / "week1" / "gradebook.csv"
    wrong, one = _kind(klass, "wrong"), _kind(klass, "one")
    on_time = dt.datetime(2026, 3, 1, 12, tzinfo=dt.timezone.utc).timestamp()  # a folder's time is its files'
    for student in (wrong, one):  # each hands in a right softmax, and nothing else
        folder = tmp_path / "regrade" / student.name
        folder.mkdir(parents=True)
        (folder / "03_softmax.ipynb").write_text(gc.notebook_text("03_softmax", "full"))
        os.utime(folder / "03_softmax.ipynb", (on_time, on_time))
    assert _grade(klass, "--update", str(gradebook), submissions=[str(tmp_path / "regrade")]) == 0
    before = {r["student_id"]: r for r in _rows(one_run / "gradebook.csv")}
    after = {r["student_id"]: r for r in _rows(gradebook)}
    assert list(after) == list(before)
    for key, old in before.items():
        if key in (wrong.student_id, one.student_id):
            new = after[key]
            assert new["01_dot_scores"] == old["01_dot_scores"] == "10"  # kept from the first grading
            assert (new["03_softmax"], new["total"], new["status"]) == ("20", "30", "ok"), key
        else:
            assert after[key] == old
    canvas = {r["SIS User ID"]: r["Attention, week 1 (4711)"] for r in _rows(tmp_path / "week1" / "canvas.csv")}
    assert canvas[wrong.sis_user_id] == canvas[one.sis_user_id] == "30"  # the files beside it, written again
    assert "Total: 30/30" in (tmp_path / "week1" / "feedback" / f"{wrong.student_id}.txt").read_text()
    assert wrong.canvas_id in "".join(zipfile.ZipFile(tmp_path / "week1" / "feedback-canvas.zip").namelist())
    report = json.loads(gradebook.with_suffix(".json").read_text())
    assert [a["student"] for a in report["decisions"]["adjustments"]] == [_kind(klass, "adjusted").student_id]
    assert len(list(gradebook.parent.glob("gradebook.csv.bak-*"))) == 1
    assert "late or not, as Canvas marked each submission" in report["intake"]["lateness"]
    other = _write(tmp_path / "other.toml", gc.ASSIGNMENT.replace("points = 20", "points = 25"))
    assert main(["grade", str(tmp_path / "regrade"), "--roster", str(klass["roster"]), "--assignment", str(other),
                 "--update", str(gradebook), *FAST]) == 2
    assert "another assignment" in capsys.readouterr().err


def test_a_moodle_download_with_its_worksheet_as_the_roster(klass, one_run, capsys):
    people = klass["people"]
    gc.moodle_zip(Path("moodle.zip"), [*people, klass["stray"]])
    gc.write_moodle_worksheet(Path("moodle-worksheet.csv"), people)
    with Path("adjustments-moodle.csv").open("w", newline="") as f:  # the worksheet names students by e-mail
        csv.writer(f).writerows([["student", "exercise", "points", "reason"],
                                 *([p.email, *p.adjustment] for p in people if p.adjustment)])
    extended = _kind(klass, "extended")  # the worksheet has no student ids: the extension names an e-mail
    _write(Path("assignment-moodle.toml"), gc.assignment_text(people).replace(extended.student_id, f'"{extended.email}"'))
    assert main(["grade", "moodle.zip", "--roster", "moodle-worksheet.csv", "--assignment", "assignment-moodle.toml",
                 "--adjustments", "adjustments-moodle.csv", "--out-dir", "moodle-week1", *FAST]) == 0
    out = klass["root"] / "moodle-week1"
    canvas_rows = {r["name"]: r for r in _rows(one_run / "gradebook.csv")}
    rows = _rows(out / "gradebook.csv")
    assert [r["name"] for r in rows] == [p.name for p in people] + [gc.OFF_ROSTER]
    for row in rows:  # Moodle's download says nothing about lateness; everything else is the same
        theirs = canvas_rows.get(row["name"]) or canvas_rows["strayquentin"]
        assert [row[k] for k in gc.EXERCISES] == [theirs[k] for k in gc.EXERCISES], row["name"]
    moodle = _rows(out / "moodle.csv")
    assert tuple(moodle[0]) == MOODLE_COLUMNS
    counted = [p for p in people if p.kind not in HELD]
    assert [(r["Identifier"], r["Email address"]) for r in moodle] == [
        (f"Participant {p.moodle_id}", p.email) for p in counted]
    names = zipfile.ZipFile(out / "feedback-moodle.zip").namelist()
    assert names == [f"{p.moodle_name}_{p.moodle_id}_assignsubmission_file_/feedback.html" for p in counted]
    # when each submitted: the worksheet's Last modified (submission), read in the deadline's time zone
    assert "Lateness: from Moodle&#39;s grading worksheet (Last modified (submission))" in (out / "summary.html").read_text()
    report = json.loads((out / "gradebook.json").read_text())
    assert {r["submitted"] for r in report["submissions"] if r["name"] in {p.name for p in people if p.kind != "none"}
            } == {"2026-03-01T22:00:00+00:00"}


def test_a_dask_run_equals_the_local_run(klass, one_run, capsys):
    distributed = pytest.importorskip("distributed", reason="the [cluster] extra is not installed")
    # one worker in a process of its own, as on another machine: the notebooks and the results cross a process boundary
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        assert _grade(klass, "--dask", cluster.scheduler_address, "--out-dir", "dask") == 0
    assert "on the Dask cluster at" in capsys.readouterr().out
    _same_files(klass["root"] / "dask", one_run)
    local = json.loads((one_run / "gradebook.json").read_text())["submissions"]
    remote = json.loads((klass["root"] / "dask" / "gradebook.json").read_text())["submissions"]
    for mine, theirs in zip(remote, local):
        assert [nb["checks"] for nb in mine["notebooks"]] == [nb["checks"] for nb in theirs["notebooks"]]


def test_export_from_a_report_rewrites_the_same_files(one_run, tmp_path, capsys):
    assert main(["gradebook", "export", str(one_run / "gradebook.json"), "--out-dir", str(tmp_path)]) == 0
    for name in ("canvas.csv", "moodle.csv", "summary.html", "feedback-canvas.zip"):
        assert (tmp_path / name).read_bytes() == (one_run / name).read_bytes(), name
    assert main(["gradebook", "export", str(tmp_path / "none.json"), "--out-dir", str(tmp_path)]) == 2
    assert "no report" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_clear_error():
    pytest.importorskip("distributed", reason="the [cluster] extra is not installed")
    from attention_course.grading.classroom.cluster import ClusterUnavailable, connect

    with pytest.raises(ClusterUnavailable, match="could not reach the Dask scheduler at tcp://127.0.0.1:9"):
        connect("tcp://127.0.0.1:9", timeout=1)

"""The instructor's kit end to end, through the real CLI, on a generated class (tests/grading_class.py).

One command takes a Canvas download and a roster to the Canvas and Moodle
import files, a feedback file per student and the class summary; shards
merged, a regrade merged and a Dask run give what one local run gives.
"""

import csv
import datetime as dt
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from attention_course.cli import main
from attention_course.grading.checks.exercises import BY_ID

import grading_class as gc

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--no-progress"]
CLASS_SIZE = 8


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """The class, its Canvas zip (with an entry that points outside and a stray file), roster and assignment."""
    root = tmp_path_factory.mktemp("class")
    people = gc.students(CLASS_SIZE)
    stray = {f"{people[1].slug}_{people[1].canvas_id}_1_notes.txt": b"my notes", "../../outside.txt": b"x"}
    return {
        "root": root, "people": people, "roster": gc.write_roster(root / "roster.csv", people),
        "canvas": gc.canvas_zip(root / "canvas.zip", people, extra=stray),
        "assignment": _write(root / "assignment.toml", gc.ASSIGNMENT),
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _grade(klass, *extra, submissions=None) -> int:
    args = ["grade", *(submissions or [str(klass["canvas"])]), "--roster", str(klass["roster"]),
            "--assignment", str(klass["assignment"]), *extra, *FAST]
    return main(args)


@pytest.fixture(scope="module")
def one_run(klass):
    out = klass["root"] / "one"
    assert _grade(klass, "--out-dir", str(out)) == 0
    return out


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_one_command_writes_the_lms_files_the_feedback_and_the_summary(klass, one_run):
    people = klass["people"]
    gradebook = {r["student_id"]: r for r in _rows(one_run / "gradebook.csv")}
    assert list(gradebook) == [p.student_id for p in people]
    report = json.loads((one_run / "gradebook.json").read_text())
    assert report["assignment"]["max_total"] == 30 and {r["max_total"] for r in gradebook.values()} == {"30"}

    by_kind = {p.kind: gradebook[p.student_id] for p in people if not p.late}
    assert by_kind["full"]["total"] == "30" and by_kind["stub"]["total"] == "0" and by_kind["one"]["total"] == "10"
    assert by_kind["none"]["status"] == "no submission"
    wrong_softmax = float(by_kind["wrong"]["03_softmax"])
    assert 0 < wrong_softmax < 20 and "Hint" in by_kind["wrong"]["feedback"]
    late = next(p for p in people if p.late)
    assert gradebook[late.student_id]["late"] == "1 day" and gradebook[late.student_id]["total"] == "27"
    assert "; late" in gradebook[late.student_id]["status"]

    canvas = _rows(one_run / "canvas.csv")
    assert list(canvas[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention, week 1 (4711)"]
    assert [(r["ID"], r["Attention, week 1 (4711)"]) for r in canvas] == [
        (p.canvas_id, gradebook[p.student_id]["total"]) for p in people]
    moodle = _rows(one_run / "moodle.csv")
    assert [(r["Identifier"], r["Email address"], r["Grade"], r["Maximum Grade"]) for r in moodle] == [
        (f"Participant {p.moodle_id}", p.email, gradebook[p.student_id]["total"], "30") for p in people]
    assert {r["Status"] for r in moodle} >= {"ok", "no submission"}

    pages = sorted((one_run / "feedback").glob("*.html"))
    assert [p.stem for p in pages] == sorted(p.student_id for p in people)  # one per student, as the LMS has them
    assert len(list((one_run / "feedback").glob("*.txt"))) == len(people)
    nobody = next(p for p in people if p.kind == "none")
    assert "Nothing of yours was in the submissions" in (one_run / "feedback" / f"{nobody.student_id}.txt").read_text()
    hidden_inputs = {c["inputs"] for row in report["submissions"] for nb in row["notebooks"] for check in nb["checks"]
                     for c in check["cases"] if c["hidden"] and len(c["inputs"]) > 12}
    assert hidden_inputs
    for page in pages:
        html_text, text = page.read_text(), page.with_suffix(".txt").read_text()
        assert "<script" not in html_text and not re.search(r"(src|href)=['\"]?https?:", html_text)
        for secret in hidden_inputs:  # described, never revealed
            assert secret not in html_text and secret not in text, (page.name, secret)
    wrong = next(p for p in people if p.kind == "wrong")
    text = (one_run / "feedback" / f"{wrong.student_id}.txt").read_text()
    assert "✗ softmax" in text and "exp of a large score overflows" in text and "only by the grader" in text
    assert "Late by 1 day" in (one_run / "feedback" / f"{late.student_id}.txt").read_text()
    assert "notes.txt: not a notebook" in (one_run / "feedback" / f"{people[1].student_id}.txt").read_text()

    summary = (one_run / "summary.html").read_text()
    assert "<svg" in summary and "<script" not in summary
    wrong_count = sum(p.kind == "wrong" for p in people)
    assert re.search(rf"<tr><td>{wrong_count}</td><td>03_softmax</td><td>softmax</td><td><code>no_max_subtraction</code>",
                     summary)
    assert f"book/{BY_ID['03_softmax'].chapter}.ipynb" in summary
    assert "outside.txt" in summary and "Femi Adeyemi" in summary  # refused entry, no submission
    failing = next(p for p in people if p.kind == "error")
    row = gradebook[failing.student_id]
    assert row["status"] == "cell errors" and row["total"] == "30"  # the functions were defined before the cell failed
    assert "RuntimeError" in (one_run / "feedback" / f"{failing.student_id}.txt").read_text()
    incidents = summary[summary.index("Notebooks with incidents"):]
    assert failing.name in incidents and "RuntimeError" in incidents
    assert not (klass["root"] / "outside.txt").exists()


def test_shards_merged_equal_one_run(klass, one_run, capsys):
    parts = []
    for k in (1, 2):
        out = klass["root"] / f"shard{k}.csv"
        assert _grade(klass, "--shard", f"{k}/2", "--out", str(out)) == 0
        parts.append(out.with_suffix(".json"))
    assert len(_rows(klass["root"] / "shard1.csv")) == CLASS_SIZE // 2
    merged = klass["root"] / "merged"
    assert main(["gradebook", "merge", *map(str, parts), "--out", str(merged / "gradebook.csv"),
                 "--out-dir", str(merged)]) == 0
    for name in ("gradebook.csv", "canvas.csv", "moodle.csv", "summary.html"):
        assert (merged / name).read_text() == (one_run / name).read_text(), name
    for page in (one_run / "feedback").iterdir():
        assert (merged / "feedback" / page.name).read_text() == page.read_text(), page.name


def test_a_regrade_updates_one_row_and_keeps_a_backup(klass, one_run, tmp_path, capsys):
    gradebook = tmp_path / "gradebook.csv"
    shutil.copy(one_run / "gradebook.csv", gradebook)
    shutil.copy(one_run / "gradebook.json", gradebook.with_suffix(".json"))
    wrong = next(p for p in klass["people"] if p.kind == "wrong")
    fixed = tmp_path / "regrade" / wrong.name
    fixed.mkdir(parents=True)
    on_time = dt.datetime(2026, 3, 1, 12, tzinfo=dt.timezone.utc).timestamp()  # a folder's time is its files'
    for ex in gc.EXERCISES:
        (fixed / f"{ex}.ipynb").write_text(gc.notebook_text(ex, "full"))
        os.utime(fixed / f"{ex}.ipynb", (on_time, on_time))
    assert _grade(klass, "--update", str(gradebook), submissions=[str(fixed.parent)]) == 0
    before, after = _rows(one_run / "gradebook.csv"), _rows(gradebook)
    assert [r["student_id"] for r in after] == [r["student_id"] for r in before]
    for old, new in zip(before, after):
        if old["student_id"] == wrong.student_id:
            assert old["total"] != "30" and new["total"] == "30" and new["status"] == "ok"
        else:
            assert new == old
    backups = sorted(tmp_path.glob("gradebook.csv.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == (one_run / "gradebook.csv").read_text()
    assert len(list(tmp_path.glob("gradebook.json.bak-*"))) == 1
    other = _write(tmp_path / "other.toml", gc.ASSIGNMENT.replace("points = 20", "points = 25"))
    assert main(["grade", str(fixed.parent), "--roster", str(klass["roster"]), "--assignment", str(other),
                 "--update", str(gradebook), *FAST]) == 2
    assert "another assignment" in capsys.readouterr().err


def test_moodle_download_gives_the_same_marks(klass, one_run, tmp_path):
    archive = gc.moodle_zip(tmp_path / "moodle.zip", klass["people"])
    out = tmp_path / "gradebook.csv"
    assert _grade(klass, "--out", str(out), submissions=[str(archive)]) == 0
    canvas_rows = {r["student_id"]: r for r in _rows(one_run / "gradebook.csv")}
    for row in _rows(out):
        theirs = canvas_rows[row["student_id"]]
        # Moodle's download says nothing about lateness; everything else is the same
        assert [row[k] for k in gc.EXERCISES] == [theirs[k] for k in gc.EXERCISES], row["name"]


def test_a_dask_run_equals_the_local_run(klass, one_run, tmp_path, capsys):
    distributed = pytest.importorskip("distributed", reason="the [cluster] extra is not installed")
    # one worker in a process of its own, as on another machine: the notebooks and the results cross a process boundary
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cluster:
        out = tmp_path / "dask"
        assert _grade(klass, "--dask", cluster.scheduler_address, "--out-dir", str(out)) == 0
    assert "on the Dask cluster at" in capsys.readouterr().out
    for name in ("gradebook.csv", "canvas.csv", "moodle.csv", "summary.html"):
        assert (out / name).read_text() == (one_run / name).read_text(), name
    local = json.loads((one_run / "gradebook.json").read_text())["submissions"]
    remote = json.loads((out / "gradebook.json").read_text())["submissions"]
    for mine, theirs in zip(remote, local):
        assert [nb["checks"] for nb in mine["notebooks"]] == [nb["checks"] for nb in theirs["notebooks"]]
        assert [nb["path"] for nb in mine["notebooks"]] != [] or not theirs["notebooks"]


def test_export_from_a_report_rewrites_the_same_files(one_run, tmp_path, capsys):
    assert main(["gradebook", "export", str(one_run / "gradebook.json"), "--out-dir", str(tmp_path)]) == 0
    for name in ("canvas.csv", "moodle.csv", "summary.html"):
        assert (tmp_path / name).read_text() == (one_run / name).read_text(), name
    assert main(["gradebook", "export", str(tmp_path / "none.json"), "--out-dir", str(tmp_path)]) == 2
    assert "no report" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_clear_error():
    pytest.importorskip("distributed", reason="the [cluster] extra is not installed")
    from attention_course.grading.kit.cluster import ClusterUnavailable, connect

    with pytest.raises(ClusterUnavailable, match="could not reach the Dask scheduler at tcp://127.0.0.1:9"):
        connect("tcp://127.0.0.1:9", timeout=1)

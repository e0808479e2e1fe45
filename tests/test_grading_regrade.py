"""Regrades that keep every student, and names that find one person or stop the command (classroom/people.py, intake.py,
score.py, cli.py), through the real CLI on a small class downloaded from Canvas, from Moodle, and as plain folders.

The class (built once per module): non-ASCII names, a name with commas, two students of the same name, one late,
one with an extension (by SIS id for Canvas, by e-mail for Moodle and the folders), one held for review, one with
nothing; Canvas's Test Student in the Canvas download and its gradebook export; manual adjustments naming students
by every key a roster carries. Each regrade (a folder named by the student's roster id, by their name, by their
e-mail, the grader's own unpacked folder, a Canvas-named zip, a times file) is compared with what one clean run
gives.
"""

import csv
import datetime as dt
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest

from attention_course.cli import main
from attention_course.grading.classroom.write.lms import MOODLE_COLUMNS

import grading_class as gc

pytestmark = pytest.mark.sandbox

FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--follow-up-timeout", "0", "--no-progress"]
KINDS = ("late", "wrong", "extended", "hostile:network", "adjusted", "none")
NAMES = ("Ada Lovelace", "Björn Åström", "Anna Müller", "Anna Müller", gc.COMMA_NAME, "Chloé Martin")
TEST_STUDENT_ID = "9999"
ON_TIME = dt.datetime(2026, 3, 1, 12, tzinfo=dt.timezone.utc).timestamp()
MUCH_LATER = dt.datetime(2026, 12, 7, 12, tzinfo=dt.timezone.utc).timestamp()
"""When a folder is copied for a regrade, its files' modification times say nothing of when the work was handed in."""
ASSIGNMENT = gc.ASSIGNMENT.replace("penalty_per_day = 0.1", "penalty_per_day = 0.1\nmax_days = 3")


def people() -> list[gc.Student]:
    out = gc.students(len(KINDS))
    for person, kind, name in zip(out, KINDS, NAMES):
        person.kind, person.name = kind, name
        person.adjustment = None
    return out


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def _assignment(path: Path, extension_key: str, extra: str = "") -> Path:
    return _write(path, ASSIGNMENT + f'\n[extensions]\n"{extension_key}" = 2026-03-05T23:59:00Z\n{extra}')


def _adjustments(path: Path, lines: list[tuple[str, str, float]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("student", "exercise", "points", "reason"),
                                 *((who, ex, points, "asked in class") for who, ex, points in lines)])
    return path


def _moodle_worksheet(path: Path, class_people: list[gc.Student]) -> Path:
    """Moodle's worksheet, each student's `Last modified (submission)` as Moodle writes it: Ada two days late, Anna
    Müller (the first) late too but with an extension, the others on time."""
    late = {0: "Tuesday, 3 March 2026, 9:00 AM", 2: "Wednesday, 4 March 2026, 8:00 AM"}
    with path.open("w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(gc.MOODLE_WORKSHEET)
        for i, s in enumerate(class_people):
            when = "-" if s.kind == "none" else late.get(i, "Sunday, 1 March 2026, 10:00 PM")
            writer.writerow([f"Participant {s.moodle_id}", s.name, s.email, "Submitted for grading", "", "30.00", "Yes",
                             when, "-", ""])
    return path


def _canvas_export(path: Path, class_people: list[gc.Student]) -> Path:
    gc.write_canvas_export(path, class_people)
    with path.open("a", newline="", encoding="utf-8") as f:  # Canvas's student view, as Canvas exports it
        csv.writer(f).writerow(["Student, Test", TEST_STUDENT_ID, "", "", "", "Section A", "", "", ""])
    return path


def _canvas_zip(path: Path, class_people: list[gc.Student]) -> Path:
    test_student = {f"studenttest_{TEST_STUDENT_ID}_8001_03_softmax.ipynb":
                    gc.notebook_text("03_softmax", "stub").encode()}
    return gc.canvas_zip(path, class_people, extra=test_student)


def _grade(*args) -> int:
    return main(["grade", *map(str, args), *FAST])


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    """The class's files in one folder, each download graded once (`week3-<kind>/`)."""
    root = tmp_path_factory.mktemp("regrade")
    class_people = people()
    canvas_assignment = _assignment(root / "canvas.toml", class_people[2].sis_user_id)
    other_assignment = _assignment(root / "assignment.toml", class_people[2].email)
    canvas_adjust = _adjustments(root / "canvas-adjust.csv", [  # every key the Canvas export carries
        (class_people[0].email, "01_dot_scores", -2),  # SIS login
        (class_people[1].name, "01_dot_scores", -1),  # "First Last"
        (class_people[2].sis_user_id, "03_softmax", -1),  # SIS user id
        (class_people[3].canvas_id, "03_softmax", -3),  # Canvas's user id
        (gc.COMMA_NAME, "03_softmax", 4)])  # "Last, First" as Canvas shows it
    moodle_adjust = _adjustments(root / "moodle-adjust.csv", [  # every key Moodle's worksheet carries
        (f"Participant {class_people[0].moodle_id}", "01_dot_scores", -2),
        ("Åström, Björn", "01_dot_scores", -1),  # "Last, First" of a worksheet's "First Last"
        (class_people[2].email, "03_softmax", -1),
        (gc.COMMA_NAME, "03_softmax", 4)])
    twins = class_people[2:4]
    folders = gc.folders(root / "folders", [p for p in class_people if p not in twins])
    for twin, folder in zip(twins, (twins[0].email, twins[1].student_id)):  # a name that fits two: by e-mail, by id
        (folders / folder).mkdir()
        for name, data in gc.files_of(twin).items():
            (folders / folder / name).write_bytes(data)
    for notebook in folders.rglob("*.ipynb"):
        os.utime(notebook, (ON_TIME, ON_TIME))
    for notebook in (folders / class_people[0].name).glob("*.ipynb"):
        late = ON_TIME + 2 * 86400
        os.utime(notebook, (late, late))
    k = {
        "root": root, "people": class_people, "canvas_assignment": canvas_assignment, "assignment": other_assignment,
        "canvas_zip": _canvas_zip(root / "canvas.zip", class_people),
        "canvas_export": _canvas_export(root / "canvas-export.csv", class_people),
        "moodle_zip": gc.moodle_zip(root / "moodle.zip", class_people),
        "worksheet": _moodle_worksheet(root / "worksheet.csv", class_people),
        "roster": gc.write_roster(root / "roster.csv", class_people), "folders": folders,
        "canvas_adjust": canvas_adjust, "moodle_adjust": moodle_adjust,
    }
    assert _grade(k["canvas_zip"], "--roster", k["canvas_export"], "--assignment", canvas_assignment,
                  "--adjustments", canvas_adjust, "--out-dir", root / "week3-canvas") == 0
    assert _grade(k["moodle_zip"], "--roster", k["worksheet"], "--assignment", other_assignment,
                  "--adjustments", moodle_adjust, "--out-dir", root / "week3-moodle") == 0
    assert _grade(folders, "--roster", k["roster"], "--assignment", other_assignment,
                  "--out-dir", root / "week3-folders") == 0
    return k


def _copy(klass, week: str, tmp_path: Path) -> Path:
    """A copy of a graded week's folder to regrade in (the gradebook's files refer to their own folder)."""
    return Path(shutil.copytree(klass["root"] / week, tmp_path / week))


def _resubmit(folder: Path, kind: str = "full", mtime: float = MUCH_LATER) -> Path:
    """A folder holding a right (or `kind`) softmax, its time that of a copy made long after the deadline."""
    folder.mkdir(parents=True)
    (folder / "03_softmax.ipynb").write_text(gc.notebook_text("03_softmax", kind))
    os.utime(folder / "03_softmax.ipynb", (mtime, mtime))
    return folder


def _without_path(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "path"} for r in rows]


def _unchanged_but(before: Path, after: Path, key: str) -> dict:
    """The row of `key` in the gradebook `after`; every other row as in `before`, and as many."""
    old, new = ({r["student_id"] or r["name"]: r for r in _rows(p)} for p in (before, after))
    assert list(new) == list(old)
    for k in old:
        if k != key:
            assert new[k] == old[k], k
    return new[key]


# ---------------------------------------------------------------------------------------------- the first runs


def test_canvas_s_test_student_is_left_out_of_every_file_and_named_once(klass, capsys):
    week = klass["root"] / "week3-canvas"
    names = [r["name"] for r in _rows(week / "gradebook.csv")]
    assert names == [p.sortable for p in klass["people"]]  # no Test Student, no row of no one
    assert TEST_STUDENT_ID not in {r["ID"] for r in _rows(week / "canvas.csv")}
    assert not any("studenttest" in n for n in zipfile.ZipFile(week / "feedback-canvas.zip").namelist())
    assert len(list((week / "feedback").glob("*.txt"))) == len(klass["people"])
    summary = (week / "summary.html").read_text()
    assert "6 students on the roster, 5 with a submission" in summary and "Test Student" not in summary
    report = json.loads((week / "gradebook.json").read_text())
    said = json.dumps(report["intake"])
    assert len(report["intake"]["left_out"]) == 1 and said.count("Test Student") == 1


def test_adjustments_name_students_by_every_key_of_the_roster(klass):
    people = klass["people"]
    unadjusted = {r["student_id"]: r for r in _rows(klass["root"] / "week3-folders" / "gradebook.csv")}
    for week, key, adjusted in (("week3-canvas", "sis_user_id", 5), ("week3-moodle", "email", 4)):
        rows = {r["student_id"]: r for r in _rows(klass["root"] / week / "gradebook.csv")}
        report = json.loads((klass["root"] / week / "gradebook.json").read_text())
        decided = report["decisions"]["adjustments"]
        assert len(decided) == adjusted and not report["intake"]["adjustments_unused"]
        assert {a["student"] for a in decided} <= {r["key"] for r in report["submissions"]}  # each found
        bjorn, luis = rows[getattr(people[1], key)], rows[getattr(people[4], key)]
        assert bjorn["01_dot_scores"] == "9" and "adjusted" in bjorn["status"]
        assert float(luis["03_softmax"]) == pytest.approx(float(unadjusted[people[4].student_id]["03_softmax"]) + 4)
    canvas = {r["student_id"]: r for r in _rows(klass["root"] / "week3-canvas" / "gradebook.csv")}
    assert canvas[people[3].sis_user_id]["03_softmax"] == "17" and "adjusted" in canvas[people[3].sis_user_id]["status"]


def test_lateness_comes_from_canvas_s_marks_moodle_s_worksheet_and_the_folders_times(klass):
    people = klass["people"]
    for week, ada_late in (("week3-canvas", "1 day"), ("week3-moodle", "2 days"), ("week3-folders", "2 days")):
        rows = _rows(klass["root"] / week / "gradebook.csv")
        assert rows[0]["late"] == ada_late, week
        assert [r["late"] for r in rows[1:]] == [""] * 5, week  # Anna Müller (the first): an extension
    moodle = _rows(klass["root"] / "week3-moodle" / "moodle.csv")
    assert moodle[0]["Last modified (submission)"] == "2026-03-03T09:00:00+00:00"


def test_a_file_or_option_naming_no_one_stops_grade_before_anything_is_written(klass, tmp_path, capsys):
    root, people = klass["root"], klass["people"]
    wrong = _adjustments(tmp_path / "adjust.csv", [(people[0].email, "01_dot_scores", 1), ("Nobody Here", "03_softmax", 2),
                                                   ("Anna Müller", "03_softmax", 1)])
    out = tmp_path / "out"
    assert _grade(klass["canvas_zip"], "--roster", klass["canvas_export"], "--assignment", klass["canvas_assignment"],
                  "--adjustments", wrong, "--out-dir", out) == 2
    err = capsys.readouterr().err
    assert "'Nobody Here' names no one" in err
    assert (f"'Anna Müller' names 2 students (Müller, Anna ({people[2].sis_user_id}), Müller, Anna "
            f"({people[3].sis_user_id}))") in err
    typo = _assignment(tmp_path / "typo.toml", "SIS-9999")
    assert _grade(klass["canvas_zip"], "--roster", klass["canvas_export"], "--assignment", typo, "--out-dir", out) == 2
    assert "extension 'SIS-9999' names no one" in capsys.readouterr().err
    assert not out.exists() or not any(out.glob("*.csv"))


# ---------------------------------------------------------------------------------------------- regrades


@pytest.fixture(scope="module")
def fixed_canvas_run(klass):
    """One clean run of the Canvas download in which Björn's softmax is right: what a regrade of it must give."""
    fixed = people()
    fixed[1].kind = "full"
    root = klass["root"]
    (root / "fixed").mkdir()
    assert _grade(_canvas_zip(root / "fixed" / "canvas.zip", fixed), "--roster", klass["canvas_export"],
                  "--assignment", klass["canvas_assignment"], "--adjustments", klass["canvas_adjust"],
                  "--out-dir", root / "fixed" / "week3-canvas") == 0
    return root / "fixed" / "week3-canvas"


def _same_as_clean(week: Path, clean: Path, feedback_zip: bool = True) -> None:
    """Every file written from the gradebook is what one clean run wrote (a row's `path` aside: where the work was
    read from; and Moodle's `Last modified (grade)`: when the grades were made)."""
    names = ["canvas.csv", "summary.html", "feedback-moodle.zip"] + (["feedback-canvas.zip"] if feedback_zip else [])
    for name in names:
        assert (week / name).read_bytes() == (clean / name).read_bytes(), name
    for page in (clean / "feedback").iterdir():
        assert (week / "feedback" / page.name).read_text() == page.read_text(), page.name
    stamp = MOODLE_COLUMNS.index("Last modified (grade)")
    mine, theirs = (list(csv.reader((d / "moodle.csv").open(encoding="utf-8"))) for d in (week, clean))
    assert [r[:stamp] + r[stamp + 1:] for r in mine] == [r[:stamp] + r[stamp + 1:] for r in theirs]
    assert _without_path(_rows(week / "gradebook.csv")) == _without_path(_rows(clean / "gradebook.csv"))


@pytest.mark.parametrize("named", ["roster id", "name", "Last, First"])
def test_a_canvas_regrade_from_a_folder_named_by_id_or_name_replaces_the_student_s_row(klass, fixed_canvas_run,
                                                                                         named, tmp_path, capsys):
    bjorn = klass["people"][1]
    week = _copy(klass, "week3-canvas", tmp_path)
    folder = {"roster id": bjorn.sis_user_id, "name": bjorn.name, "Last, First": "Åström, Björn"}[named]
    resubmitted = _resubmit(tmp_path / "resubmit" / folder)
    capsys.readouterr()
    assert _grade(resubmitted, "--roster", klass["canvas_export"], "--assignment", klass["canvas_assignment"],
                  "--update", week / "gradebook.csv") == 0
    out = capsys.readouterr().out
    assert f"replaced 1 row(s): {bjorn.sortable} ({bjorn.sis_user_id}): " in out and "added" not in out
    row = _unchanged_but(klass["root"] / "week3-canvas" / "gradebook.csv", week / "gradebook.csv", bjorn.sis_user_id)
    assert (row["03_softmax"], row["late"], row["total"]) == ("20", "", "29")  # on time, as the first run knew
    _same_as_clean(week, fixed_canvas_run)


def test_a_regrade_of_the_grader_s_own_unpacked_folder_changes_nothing(klass, tmp_path, capsys):
    bjorn = klass["people"][1]
    week = _copy(klass, "week3-canvas", tmp_path)
    unpacked = next((week / "unpacked" / "canvas").glob(f"*_{bjorn.canvas_id}"))
    assert _grade(unpacked, "--roster", klass["canvas_export"], "--assignment", klass["canvas_assignment"],
                  "--update", week / "gradebook.csv") == 0
    assert f"replaced 1 row(s): {bjorn.sortable}" in capsys.readouterr().out
    first = klass["root"] / "week3-canvas"
    assert _without_path(_rows(week / "gradebook.csv")) == _without_path(_rows(first / "gradebook.csv"))
    assert (week / "canvas.csv").read_bytes() == (first / "canvas.csv").read_bytes()
    from attention_course.grading.classroom.intake import Timing, intake
    from attention_course.grading.classroom.roster import read_class

    taken = intake([unpacked.parent], tmp_path / "work", read_class(klass["canvas_export"]))  # what the grader unpacked: its
    assert {s.timing for s in taken.submissions if s.path} == {Timing.NONE}  # files' times are the unpacking's


@pytest.mark.parametrize("late", [False, True])
def test_a_canvas_named_zip_brings_its_own_late_mark(klass, fixed_canvas_run, late, tmp_path):
    bjorn = klass["people"][1]
    week = _copy(klass, "week3-canvas", tmp_path)
    bjorn.kind = "late" if late else "full"
    try:
        resubmitted = gc.canvas_zip(tmp_path / "resubmit.zip", [bjorn])
    finally:
        bjorn.kind = "wrong"
    assert _grade(resubmitted, "--roster", klass["canvas_export"], "--assignment", klass["canvas_assignment"],
                  "--update", week / "gradebook.csv") == 0
    row = _unchanged_but(klass["root"] / "week3-canvas" / "gradebook.csv", week / "gradebook.csv", bjorn.sis_user_id)
    assert (row["late"], row["total"]) == (("1 day", "26.1") if late else ("", "29"))
    if not late:  # the feedback zip names the resubmission's own Canvas attachment
        _same_as_clean(week, fixed_canvas_run, feedback_zip=False)


def test_a_times_file_gives_a_folder_regrade_its_time(klass, tmp_path):
    bjorn = klass["people"][1]
    week = _copy(klass, "week3-canvas", tmp_path)
    times = _write(tmp_path / "times.csv", f"sis_login_id,submitted\n{bjorn.email},2026-03-03T10:00:00Z\n")
    assert _grade(_resubmit(tmp_path / "resubmit" / bjorn.name), "--roster", klass["canvas_export"], "--assignment",
                  klass["canvas_assignment"], "--submission-times", times, "--update", week / "gradebook.csv") == 0
    row = _unchanged_but(klass["root"] / "week3-canvas" / "gradebook.csv", week / "gradebook.csv", bjorn.sis_user_id)
    assert (row["late"], row["total"]) == ("2 days", "23.2")


def test_a_regrade_naming_no_one_or_two_stops_before_anything_is_written(klass, tmp_path, capsys):
    people = klass["people"]
    week = _copy(klass, "week3-canvas", tmp_path)
    before = {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()}
    for folder, said in (("Nobody Here", "names no one"), ("Anna Müller", "names 2 students")):
        capsys.readouterr()
        assert _grade(_resubmit(tmp_path / folder / folder), "--roster", klass["canvas_export"], "--assignment",
                      klass["canvas_assignment"], "--update", week / "gradebook.csv") == 2
        assert said in capsys.readouterr().err, folder
    assert {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()} == before  # no backup, nothing rewritten
    assert _grade(_resubmit(tmp_path / "dry" / people[1].sis_user_id), "--roster", klass["canvas_export"],
                  "--assignment", klass["canvas_assignment"], "--update", week / "gradebook.csv", "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"would replace {people[1].sortable} ({people[1].sis_user_id})" in out and "nothing was graded or written" in out
    assert {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()} == before


def test_a_moodle_regrade_of_the_grader_s_unpacked_folder_without_the_roster_keeps_the_worksheet_s_time(
        klass, tmp_path, capsys):
    ada = klass["people"][0]
    week = _copy(klass, "week3-moodle", tmp_path)
    unpacked = next((week / "unpacked" / "moodle").glob(f"*_{ada.moodle_id}"))
    capsys.readouterr()
    assert _grade(unpacked, "--assignment", klass["assignment"], "--update", week / "gradebook.csv") == 0
    assert f"replaced 1 row(s): {ada.name} ({ada.email})" in capsys.readouterr().out
    first = klass["root"] / "week3-moodle"
    row = _unchanged_but(first / "gradebook.csv", week / "gradebook.csv", ada.email)
    assert row == {r["student_id"]: r for r in _rows(first / "gradebook.csv")}[ada.email] | {"path": row["path"]}
    assert (week / "canvas.csv").read_bytes() == (first / "canvas.csv").read_bytes()


def test_a_folder_regrade_by_e_mail_keeps_the_first_run_s_time(klass, tmp_path, capsys):
    ada = klass["people"][0]
    week = _copy(klass, "week3-folders", tmp_path)
    assert _grade(_resubmit(tmp_path / "resubmit" / ada.email, kind="wrong"), "--roster", klass["roster"],
                  "--assignment", klass["assignment"], "--update", week / "gradebook.csv") == 0
    row = _unchanged_but(klass["root"] / "week3-folders" / "gradebook.csv", week / "gradebook.csv", ada.student_id)
    assert row["late"] == "2 days" and float(row["03_softmax"]) < 20  # its copy's time is not when it was handed in


# ---------------------------------------------------------------------------------------------- gradebook commands


def test_gradebook_adjust_and_approve_find_students_by_any_key_and_refuse_the_rest(klass, tmp_path, capsys):
    people = klass["people"]
    week = _copy(klass, "week3-canvas", tmp_path)
    gradebook = week / "gradebook.csv"
    before = {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()}
    held = people[3]
    capsys.readouterr()
    assert main(["gradebook", "approve", str(gradebook), "Anna Müller", "Nobody Here", "--note", "x"]) == 2
    err = capsys.readouterr().err
    assert "'Anna Müller' names 2 students" in err and "'Nobody Here' names no one" in err
    assert main(["gradebook", "approve", str(gradebook), people[0].email, "--note", "x"]) == 2
    assert "nothing of theirs is held for review" in capsys.readouterr().err
    bad = _adjustments(tmp_path / "bad.csv", [("Åström, Björn", "03_softmax", 1), ("S-nobody", "03_softmax", 1)])
    assert main(["gradebook", "adjust", str(gradebook), str(bad)]) == 2
    assert "'S-nobody' names no one" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()} == before
    good = _adjustments(tmp_path / "good.csv", [("Åström, Björn", "03_softmax", 5)])
    assert main(["gradebook", "adjust", str(gradebook), str(good), "--dry-run"]) == 0
    assert f"would change {people[1].sortable} ({people[1].sis_user_id})" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()} == before
    assert main(["gradebook", "approve", str(gradebook), held.email, "--note", "looked", "--dry-run"]) == 0
    assert f"would approve {held.sortable} ({held.sis_user_id}): network" in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in week.iterdir() if p.is_file()} == before
    assert main(["gradebook", "approve", str(gradebook), held.email, "--note", "looked: harmless"]) == 0
    assert f"approved {held.sortable} ({held.sis_user_id})" in capsys.readouterr().out
    canvas = {r["SIS User ID"]: r for r in _rows(week / "canvas.csv")}
    assert held.sis_user_id in canvas and TEST_STUDENT_ID not in {r["ID"] for r in canvas.values()}


def test_a_regrade_without_the_roster_takes_its_time_from_a_times_file_of_the_whole_class(klass, tmp_path):
    people = klass["people"]
    ada = people[0]
    week = _copy(klass, "week3-moodle", tmp_path)
    times = _write(tmp_path / "times.csv", "email,submitted\n" + "".join(
        f"{p.email},2026-03-01T20:00:00Z\n" for p in people if p.kind != "none"))  # everyone, on time
    assert _grade(_resubmit(tmp_path / "resubmit" / ada.name), "--assignment", klass["assignment"],
                  "--submission-times", times, "--update", week / "gradebook.csv") == 0
    row = _unchanged_but(klass["root"] / "week3-moodle" / "gradebook.csv", week / "gradebook.csv", ada.email)
    assert (row["late"], row["03_softmax"]) == ("", "20")  # the times file's, not the worksheet's two days
    typo = _write(tmp_path / "typo.csv", "email,submitted\nnobody@example.edu,2026-03-01T20:00:00Z\n")
    assert _grade(_resubmit(tmp_path / "again" / ada.name), "--assignment", klass["assignment"],
                  "--submission-times", typo, "--update", week / "gradebook.csv") == 2

"""Tests for attention_course/grading/classroom/intake.py: rosters, folders, Canvas and Moodle zips, unpacked safely."""

import csv
import io
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from attention_course.cli import main
from attention_course.grading.checks.exercises import BY_ID
from attention_course.grading.classroom.intake import IntakeError, ZipLimits, intake, unpack
from attention_course.grading.classroom.roster import read_class
from attention_course.grading.classroom.roster import load as load_roster

import grading_class as gc

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--no-progress"]


def test_unpacking_refuses_entries_outside_the_folder_and_links(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("ok/01_dot_scores.ipynb", "{}")
        z.writestr("../escape.txt", "x")
        z.writestr("/etc/absolute.txt", "x")
        z.writestr("C:/windows.txt", "x")
        link = zipfile.ZipInfo("ok/link")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(link, "/etc/passwd")
    files, notes = unpack(archive, tmp_path / "out")
    assert files == [tmp_path / "out" / "ok" / "01_dot_scores.ipynb"]
    assert len(notes) == 4 and all("refused" in n for n in notes) and any("is a link" in n for n in notes)
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out" / "ok" / "link").exists()


def test_a_zip_bomb_stops_at_the_limit_on_the_bytes_written(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.ipynb", b"0" * (3 << 20))  # compresses to a few kB
        z.writestr("small.ipynb", b"{}")
    # one file too large (one student's notebook with its outputs): the others are unpacked, and an empty file of its
    # size stands in for it, so that the grader says how large it was
    files, notes = unpack(archive, tmp_path / "out", ZipLimits(file_bytes=1 << 20))
    assert [f.name for f in files] == ["big.ipynb", "small.ipynb"] and (tmp_path / "out" / "small.ipynb").read_bytes() == b"{}"
    stand_in = tmp_path / "out" / "big.ipynb"
    assert stand_in.stat().st_size == 3 << 20 and b"0" not in stand_in.read_bytes()
    assert notes == ["bomb.zip: big.ipynb unpacks to more than 1 MiB, the limit for one file: it was not unpacked (an empty "
                     "file of its size stands in for it, and is reported as too large)"]
    # past the limit for the whole download: the files that would pass it are left out and named, never the class
    files, notes = unpack(archive, tmp_path / "out2", ZipLimits(total_bytes=2 << 20))
    assert [f.name for f in files] == ["small.ipynb"] and not (tmp_path / "out2" / "big.ipynb").exists()
    assert notes == ["bomb.zip: big.ipynb (3.0 MiB) was not unpacked: with it, the download would unpack to more than "
                     "2 MiB, the limit for one download (notebooks are kept first)"]
    (tmp_path / "not.zip").write_text("no")
    with pytest.raises(IntakeError, match="not a zip file"):
        unpack(tmp_path / "not.zip", tmp_path / "out3")


def _state_size(archive: Path, name: str, size: int) -> None:
    """Make the zip's directory say that entry `name` unpacks to `size` bytes (its data stays as small as it was)."""
    data = bytearray(archive.read_bytes())
    at = 0
    while True:
        at = data.index(b"PK\x01\x02", at)
        length = int.from_bytes(data[at + 28:at + 30], "little")
        if data[at + 46:at + 46 + length] == name.encode():
            data[at + 24:at + 28] = size.to_bytes(4, "little")
            break
        at += 46
    archive.write_bytes(bytes(data))


def test_a_download_of_many_gigabytes_is_graded_without_what_would_pass_the_limit(tmp_path):
    # A class's download with videos and data sets in it: stated sizes of several GiB (the test writes none of them).
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("lovelaceada_50_1_lecture.mp4", b"not really a video")
        z.writestr("lovelaceada_50_2_05_causal_mask.ipynb", b"{}")
        z.writestr("turingalan_51_3_data.csv", b"a,b")
        z.writestr("turingalan_51_4_05_causal_mask.ipynb", b"{}")
        z.writestr("hopper_52_5_notes.txt", b"hi")
    _state_size(archive, "lovelaceada_50_1_lecture.mp4", (4 << 30) - 1)
    _state_size(archive, "turingalan_51_3_data.csv", 3 << 30)
    files, notes = unpack(archive, tmp_path / "out", ZipLimits(file_bytes=8 << 30))
    assert sorted(f.name for f in files) == ["hopper_52_5_notes.txt", "lovelaceada_50_2_05_causal_mask.ipynb",
                                             "turingalan_51_4_05_causal_mask.ipynb"]
    assert len(notes) == 2 and all("the limit for one download" in n for n in notes)
    assert "lovelaceada_50_1_lecture.mp4 (4,096.0 MiB) was not unpacked" in notes[0]
    assert "turingalan_51_3_data.csv (3,072.0 MiB) was not unpacked" in notes[1]
    files, notes = unpack(archive, tmp_path / "few", ZipLimits(entries=2))  # too many files: the notebooks kept
    assert sorted(f.name for f in files) == ["lovelaceada_50_2_05_causal_mask.ipynb", "turingalan_51_4_05_causal_mask.ipynb"]
    assert notes[0].startswith("submissions.zip: holds 5 files, more than the 2 unpacked from one download: 3 were not")
    # an entry whose data is damaged is left out, named, and the rest unpacked
    archive.write_bytes(archive.read_bytes().replace(b"not really a video", b"not really a vidoe"))
    files, notes = unpack(archive, tmp_path / "out2", ZipLimits(file_bytes=8 << 30, total_bytes=8 << 30))
    assert len(files) == 4 and len(notes) == 1 and "lovelaceada_50_1_lecture.mp4 could not be unpacked" in notes[0]
    assert not (tmp_path / "out2" / "lovelaceada_50_1_lecture.mp4").exists()


def test_the_roster_is_checked(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("\ufeffstudent_id,name,email\nS1,Ada Lovelace,ada@x.org\n\nS2,Ben Okafor,\n")
    assert [r["name"] for r in load_roster(path).students] == ["Ada Lovelace", "Ben Okafor"]
    for text, words in [("id,name\n1,A\n", "no column 'student_id'"), ("student_id,name,mail\n1,A,x\n", "unknown column 'mail'"),
                        ("student_id,name\n1,A\n1,B\n", "already on line 2"), ("student_id,name\n,A\n", "must not be empty"),
                        ("student_id,name\n", "lists no students")]:
        path.write_text(text)
        with pytest.raises(IntakeError, match=words):
            load_roster(path).students


def test_a_roster_saved_by_a_spreadsheet_in_another_locale_is_read(tmp_path):
    path = tmp_path / "r.csv"
    for text in ("\ufeffStudent_ID;Name;Email\nS1;Ada Lovelace;\nS2;\"Okafor; Ben\";ben@x.org\n",  # Excel, a French locale
                 " student_id \t name \t email\nS1\tAda Lovelace\t\nS2\tOkafor; Ben\tben@x.org\n"):
        path.write_text(text, encoding="utf-8")
        rows = load_roster(path).students
        assert [(r["student_id"], r["name"], r["email"]) for r in rows] == [
            ("S1", "Ada Lovelace", ""), ("S2", "Okafor; Ben", "ben@x.org")]
    path.write_text("student_id;name\nS1;Ada\nS1;Ben\n")
    with pytest.raises(IntakeError, match="student_id 'S1' is already on line 2"):
        load_roster(path).students
    path.write_bytes("student_id,name\nS1,Ada\n".encode("utf-16"))
    with pytest.raises(IntakeError, match="not UTF-8"):
        load_roster(path).students


def test_entries_the_file_system_refuses_are_reported_not_fatal(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a", "a file")
        z.writestr("a/01_dot_scores.ipynb", "{}")  # a folder where a file already is
        z.writestr("x" * 300 + ".ipynb", "{}")  # longer than any file name may be
        z.writestr("twice.ipynb", "first")
        with pytest.warns(UserWarning, match="Duplicate name"):
            z.writestr("twice.ipynb", "second")
        z.writestr("ok.ipynb", "{}")
    files, notes = unpack(archive, tmp_path / "out")
    assert sorted(p.name for p in files) == ["a", "ok.ipynb", "twice.ipynb"]
    assert (tmp_path / "out" / "twice.ipynb").read_text() == "first"
    assert len(notes) == 3 and all("refused the entry" in n for n in notes)
    assert any("'a/01_dot_scores.ipynb'" in n and "cannot be written here" in n for n in notes)
    assert any("File name too long" in n for n in notes) and any("holds it twice" in n for n in notes)


def test_names_from_lms_file_names_lose_the_characters_that_disguise_them(tmp_path):
    archive = tmp_path / "canvas.zip"
    text = (ROOT / "solutions" / "01_dot_scores.ipynb").read_text()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("müller\u202egnp.exe_123_456_01_dot_scores.ipynb", text)  # right-to-left override
        z.writestr("..._124_457_01_dot_scores.ipynb", text)  # a name that looks like a path
    subs = {s.name: s for s in intake([archive], tmp_path / "work").submissions}
    assert set(subs) == {"müllergnp.exe", "..."}
    assert all("\u202e" not in s.path for s in subs.values())
    assert all(Path(nb).resolve().is_relative_to((tmp_path / "work").resolve())
               for s in subs.values() for nb in s.notebooks)


def test_canvas_and_moodle_downloads_are_matched_to_the_roster(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative paths, as typed on the command line
    people = gc.students(6)
    roster = gc.write_roster(Path("roster.csv"), people)
    canvas = gc.canvas_zip(Path("canvas.zip"), people)
    moodle = gc.moodle_zip(Path("moodle.zip"), people)
    Path("out/work/mine").mkdir(parents=True)
    with pytest.raises(IntakeError, match="not unpacked by the grader"):
        intake([gc.canvas_zip(Path("mine.zip"), people)], Path("out/work"), read_class(roster))
    for archive in (canvas, moodle, canvas):  # the second time, the first run's copy is replaced
        taken = intake([archive], Path("out/work"), read_class(roster))
        subs = {s.student["student_id"]: s for s in taken.submissions}
        assert list(subs) == [p.student_id for p in people]  # roster order, nobody unmatched
        for p in people:
            assert len(subs[p.student_id].notebooks) == len(gc.files_of(p)), p
            assert subs[p.student_id].marked_late == (p.late and archive is canvas)
        none = next(p for p in people if p.kind == "none")
        assert subs[none.student_id].path == ""


def test_duplicates_unmatched_missing_and_ignored_files_are_reported_by_grade(tmp_path, capsys):
    sub = tmp_path / "submitted"
    for folder in ("H11_Dup", "h11_dup"):
        (sub / folder).mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", sub / folder / "01_dot_scores.ipynb")
    shutil.copy(ROOT / "exercises" / "01_dot_scores.ipynb", sub / "h11_dup" / "01_dot_scores (1).ipynb")
    (sub / "h11_dup" / "notes.docx").write_bytes(b"PK")
    (sub / "README.txt").write_text("collected on Monday")
    (sub / "Stranger").mkdir()
    shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", sub / "Stranger")
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,submission\nH11,Hal Dup,H11_Dup\nA1,Absent Person,\n")
    (tmp_path / "a.toml").write_text('exercises = ["01_dot_scores"]\n')
    out = tmp_path / "gb.csv"
    assert main(["grade", str(sub), "--roster", str(roster), "--assignment", str(tmp_path / "a.toml"),
                 "--out", str(out), *FAST]) == 0
    printed = capsys.readouterr().out
    rows = {r["name"]: r for r in csv.DictReader(out.open())}
    assert list(rows) == ["Hal Dup", "Absent Person", "Stranger"]
    hal = rows["Hal Dup"]
    assert hal["status"] == "ok; duplicates" or hal["status"].endswith("; duplicates"), hal["status"]
    assert "duplicate submissions" in hal["feedback"] and "3 notebooks for 01_dot_scores" in hal["feedback"]
    # two of them share a file name: each is named by its folder too, so that the one that counts is clear
    assert "H11_Dup/01_dot_scores.ipynb (" in hal["feedback"] and "h11_dup/01_dot_scores.ipynb (" in hal["feedback"]
    assert "ignored notes.docx: not a notebook" in hal["feedback"] and hal["01_dot_scores"] == str(BY_ID["01_dot_scores"].max_score)
    assert rows["Absent Person"]["status"] == "no submission" and rows["Absent Person"]["total"] == "0"
    assert rows["Stranger"]["status"].startswith("not on the roster") and rows["Stranger"]["student_id"] == ""
    for words in ("in the download (1): submitted: ignored README.txt: it belongs to no student's submission",
                  "no submission (1): Absent Person", "not on the roster (1)", "duplicates (2)", "ignored files (1)"):
        assert words in printed, printed


def test_one_student_s_folder_is_one_row(tmp_path, capsys):
    folder = tmp_path / "dana"
    folder.mkdir()
    for name in ("01_dot_scores", "03_softmax"):
        shutil.copy(ROOT / "solutions" / f"{name}.ipynb", folder)
    out = tmp_path / "gb.csv"
    assert main(["grade", str(folder), "--out", str(out), *FAST]) == 0
    (row,) = csv.DictReader(out.open())
    assert row["name"] == "dana" and row["01_dot_scores"] != "0" and row["03_softmax"] != "0"


def test_moodle_s_flat_download_and_canvas_resubmissions(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,canvas_id,moodle_id\nS1,Ada Lovelace,50,900\n")
    flat = tmp_path / "moodle.zip"
    with zipfile.ZipFile(flat, "w") as z:
        z.writestr("Ada Lovelace_900_assignsubmission_file_03_softmax.ipynb", "{}")
        z.writestr("Ada Lovelace_900_assignsubmission_onlinetext_onlinetext.html", "<p>hi</p>")
    (ada,) = intake([flat], tmp_path / "w1", read_class(roster)).submissions
    assert [p.name for p in ada.notebooks] == ["03_softmax.ipynb"]  # the name the student gave it
    assert ada.issues == ["ignored onlinetext.html: not a notebook"] and ada.lms["moodle_id"] == "900"
    canvas = tmp_path / "canvas.zip"
    with zipfile.ZipFile(canvas, "w") as z:
        z.writestr("lovelaceada_late_50_7001_03_softmax.ipynb", "{}")
        z.writestr("lovelaceada_late_50_7002_03_softmax-1.ipynb", "{}")
    (ada,) = intake([canvas], tmp_path / "w2", read_class(roster)).submissions
    assert [p.name for p in ada.notebooks] == ["03_softmax-1.ipynb", "03_softmax.ipynb"]
    assert ada.marked_late and ada.submitted is None and ada.lms["canvas_id"] == "50"
    assert ada.lms["canvas_attachment"] in ("7001", "7002")


def test_a_zipped_folder_of_student_folders(tmp_path):
    archive = tmp_path / "week1.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for student in ("ana", "ben"):
            z.writestr(f"submitted/{student}/03_softmax.ipynb", "{}")
    subs = intake([archive], tmp_path / "work").submissions
    assert [(s.name, len(s.notebooks)) for s in subs] == [("ana", 1), ("ben", 1)]
    assert all(s.submitted is None for s in subs)  # unpacking time is no submission time


def test_names_that_merely_look_like_an_lms_s_are_a_plain_folder(tmp_path):
    for name in ("control_05_causal_mask", "bob_04_attention", "ana"):
        (tmp_path / f"{name}.ipynb").write_text("{}")
    subs = intake([tmp_path], tmp_path / "work").submissions
    assert sorted(s.name for s in subs) == ["ana", "bob_04_attention", "control_05_causal_mask"]
    assert all(not s.student and not s.marked_late for s in subs)


def test_a_zip_a_student_handed_in_is_unpacked_too(tmp_path):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("work/01_dot_scores.ipynb", "{}")
        z.writestr("work/03_softmax.ipynb", "{}")
        z.writestr("../../escape.ipynb", "{}")
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,canvas_id\nS1,Ada Lovelace,50\n")
    canvas = tmp_path / "canvas.zip"
    with zipfile.ZipFile(canvas, "w") as z:
        z.writestr("lovelaceada_50_7001_mywork.zip", inner.getvalue())
    taken = intake([canvas], tmp_path / "work", read_class(roster))
    (ada,) = taken.submissions
    assert sorted(p.name for p in ada.notebooks) == ["01_dot_scores.ipynb", "03_softmax.ipynb"]
    assert ada.issues == ["unpacked mywork.zip, which they handed in"]
    assert any("escape.ipynb" in n and "refused" in n for n in taken.notes)


def _without_utf8_flag(path: Path, names: dict[str, str]) -> None:
    """A zip whose entries' names are UTF-8 bytes without the UTF-8 flag, as Windows' own zips write them:
    written under ASCII stand-ins of the same length, then the bytes of the names swapped in."""
    stand_ins = {name: "x" * len(name.encode()) for name in names}
    with zipfile.ZipFile(path, "w") as z:
        for name, text in names.items():
            z.writestr(stand_ins[name], text)
    data = path.read_bytes()
    for name, stand_in in stand_ins.items():
        data = data.replace(stand_in.encode(), name.encode())
    path.write_bytes(data)
    assert not any(i.flag_bits & 0x800 for i in zipfile.ZipFile(path).infolist())


def test_zip_names_without_the_utf8_flag_are_read_as_utf8(tmp_path):
    archive = tmp_path / "canvas.zip"
    _without_utf8_flag(archive, {"núñezjosé_51_7002_03_softmax.ipynb": "{}", "ørstedzoë_52_7003_03_softmax.ipynb": "{}"})
    subs = intake([archive], tmp_path / "work").submissions
    assert sorted(s.name for s in subs) == ["núñezjosé", "ørstedzoë"]


def test_an_empty_zip_is_reported_not_fatal(tmp_path, capsys):
    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()
    taken = intake([empty], tmp_path / "work")
    assert taken.submissions == [] and taken.notes == ["empty.zip holds no files"]
    assert main(["grade", str(empty), "--out", str(tmp_path / "gb.csv"), *FAST]) == 2
    assert "no submissions found: empty.zip holds no files" in capsys.readouterr().err


def test_an_anonymous_canvas_download_is_graded_under_its_anonymous_ids(tmp_path):
    roster = gc.write_roster(tmp_path / "roster.csv", gc.students(3))
    archive = tmp_path / "canvas.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("anon_Xq7bK_7001_03_softmax.ipynb", "{}")
        z.writestr("LATE_anon_9fTzW_7002_03_softmax.ipynb", "{}")
        z.writestr("anon_9fTzW_7003_notes.txt", "x")
    taken = intake([archive], tmp_path / "work", read_class(roster))
    assert sorted((s.name, s.key, s.marked_late, s.ignored) for s in taken.submissions) == [
        ("anonymous 9fTzW", "anon_9fTzW", True, ["notes.txt"]), ("anonymous Xq7bK", "anon_Xq7bK", False, [])]
    assert any("anonymous" in n and "roster cannot name them" in n for n in taken.notes)
    assert "late or not, as Canvas marked each submission" in taken.lateness


def test_canvas_s_gradebook_export_and_moodle_s_worksheet_are_rosters(tmp_path):
    people = gc.students(5)
    canvas = load_roster(gc.write_canvas_export(tmp_path / "export.csv", people))
    assert canvas.form == "Canvas gradebook export"  # its "Points Possible" line is no student
    assert [(r["student_id"], r["name"], r["canvas_id"]) for r in canvas.students] == [
        (p.sis_user_id, p.sortable, p.canvas_id) for p in people]
    moodle = load_roster(gc.write_moodle_worksheet(tmp_path / "worksheet.csv", people))
    assert moodle.form == "Moodle grading worksheet"
    assert [(r["student_id"], r["name"], r["moodle_id"]) for r in moodle.students] == [
        (p.email, p.name, p.moodle_id) for p in people]
    archive = gc.canvas_zip(tmp_path / "canvas.zip", people)
    subs = intake([archive], tmp_path / "work", read_class(tmp_path / "export.csv")).submissions
    assert [s.student.get("student_id") for s in subs] == [p.sis_user_id for p in people]  # matched by Canvas id


def test_submission_times_give_each_student_their_time(tmp_path):
    people = gc.students(7)
    roster = gc.write_roster(tmp_path / "roster.csv", people)
    archive = gc.canvas_zip(tmp_path / "canvas.zip", people)
    times = tmp_path / "times.csv"
    times.write_text(f"sis_user_id,submitted\n{people[6].sis_user_id},2026-03-03T10:00:00Z\n")
    taken = intake([archive], tmp_path / "work", read_class(roster, times))
    late = next(s for s in taken.submissions if s.student["student_id"] == people[6].student_id)
    assert late.submitted == "2026-03-03T10:00:00+00:00" and taken.lateness == "from the submission-times file"
    times.write_text(f"sis_user_id,submitted\n{people[6].sis_user_id},2026-03-03T10:00:00Z\n"
                     "SIS-nobody,2026-03-01T00:00:00Z\n")  # a typo stops intake: no late penalty lost in silence
    with pytest.raises(IntakeError, match="1 line\\(s\\) name no one .*\n  sis_user_id 'SIS-nobody' names no one"):
        intake([archive], tmp_path / "work", read_class(roster, times))
    times.write_text("sis_user_id,submitted\nSIS-1000,yesterday\n")
    with pytest.raises(IntakeError, match="line 2: 'yesterday' is not an ISO 8601 date-time with a time zone"):
        intake([archive], tmp_path / "work", read_class(roster, times))


def test_moodle_s_worksheet_times_the_submissions_it_can_read_and_names_the_time_it_cannot(tmp_path):
    import datetime as dt

    from attention_course.grading.classroom.intake import Source, Timing, match
    from attention_course.grading.classroom.roster import ROSTER_COLUMNS, moodle_time

    def entry(student_id, name, submitted):
        return {**{c: "" for c in ROSTER_COLUMNS}, "student_id": student_id, "name": name,
                "moodle_submitted": submitted}

    roster = [entry("S1", "Ada Lovelace", "Sunday, 1 March 2026, 10:00 PM"), entry("S2", "Bob Byte", "soon"),
              entry("S3", "Cy Absent", "Sunday, 1 March 2026, 9:00 PM")]
    zone = dt.timezone(dt.timedelta(hours=1))
    times = {r["student_id"]: moodle_time(r["moodle_submitted"], zone) for r in roster}
    sources = [Source(name, [tmp_path / f"{name}.ipynb"], where=name) for name in ("Ada Lovelace", "Bob Byte")]
    for s in sources:
        s.files[0].write_text("{}")
    notes = []
    ada, bob, cy = match(sources, roster, (times, notes))
    assert (ada.submitted, ada.timing) == ("2026-03-01T21:00:00+00:00", Timing.WORKSHEET)
    assert bob.timing == Timing.FILES and cy.timing == Timing.NONE and cy.submitted is None
    assert notes == ["Bob Byte: the worksheet's Last modified (submission) 'soon' is not a time Moodle writes; that "
                     "submission's lateness was not judged from it"]
    assert match(sources, roster)[0].timing == Timing.FILES  # no worksheet times given: the files' times

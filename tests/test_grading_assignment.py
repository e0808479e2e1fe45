"""Tests for attention_course/grading/classroom/assignment.py (the assignment file, run through the real CLI) and the late rule of classroom/score.py."""

import csv
import datetime as dt
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from attention_course.cli import main
from attention_course.grading.classroom.assignment import Assignment, AssignmentError, from_dict, load, template
from attention_course.grading.classroom.score import days_late, late_factor
from attention_course.grading.checks.engine.run import check_in_process
from attention_course.grading.checks.exercises import BY_ID, EXERCISES

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--no-progress"]
SOFTMAX = ROOT / "solutions" / "03_softmax.ipynb"


def _softmax_without_max(x, axis=-1):
    e = np.exp(x)  # what _wrong_softmax's notebook computes: the solution with its shift m replaced by 0
    total = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def _wrong_softmax(path: Path) -> Path:
    text = SOFTMAX.read_text().replace("np.max(x, axis=axis, keepdims=True)", "0")  # no max subtraction
    path.write_text(text)
    return path


def test_the_written_template_without_its_seed_is_the_default():
    text = template(seed=123)
    assert "seed = 123" in text and load_text(text).hidden_seed == 123
    default = load_text(re.sub(r"(?m)^seed = .*$", "", text))
    assert default.fingerprint() == Assignment.default().fingerprint()
    assert default.max_total == sum(e.max_score for e in EXERCISES)  # one point per input tried


def load_text(text: str) -> Assignment:
    import tomllib

    return from_dict(tomllib.loads(text))


def test_the_default_assignment_reproduces_the_grader_s_marks(tmp_path, capsys):
    notebook = _wrong_softmax(tmp_path / "03_softmax.ipynb")
    plain, with_file = tmp_path / "plain.csv", tmp_path / "file.csv"
    assert main(["grade", str(notebook), "--out", str(plain), *FAST]) == 0
    (tmp_path / "a.toml").write_text(re.sub(r"(?m)^seed = .*$", "", template()))
    assert main(["grade", str(notebook), "--assignment", str(tmp_path / "a.toml"), "--out", str(with_file), *FAST]) == 0
    rows = [next(csv.DictReader(p.open())) for p in (plain, with_file)]
    # inputs passed, as the check counts them on the same function in this process
    expected = check_in_process(BY_ID["03_softmax"].checks[0], _softmax_without_max, hidden=True).score
    assert 0 < expected < BY_ID["03_softmax"].max_score
    assert rows[0]["03_softmax"] == rows[1]["03_softmax"] == str(expected)
    assert rows[0]["max_total"] == rows[1]["max_total"] == str(sum(e.max_score for e in EXERCISES))


def test_points_hidden_inputs_and_the_maximum_come_from_the_file(tmp_path, capsys):
    notebook = _wrong_softmax(tmp_path / "03_softmax.ipynb")
    (tmp_path / "a.toml").write_text('exercises = ["03_softmax", "04_attention"]\n[hidden]\nenabled = false\n'
                                     '[exercise.03_softmax]\npoints = 12\n[exercise.04_attention]\npoints = 8\n')
    out = tmp_path / "gb.csv"
    assert main(["grade", str(notebook), "--assignment", str(tmp_path / "a.toml"), "--out", str(out), *FAST]) == 0
    row = next(csv.DictReader(out.open()))
    visible = [c for c in BY_ID["03_softmax"].checks[0].cases if not c.hidden]
    report = json.loads(out.with_suffix(".json").read_text())
    tried = report["submissions"][0]["notebooks"][0]["checks"][0]["cases"]
    assert len(tried) == len(visible) and not any(c["hidden"] for c in tried)
    passed = sum(c["status"] == "passed" for c in tried)
    assert float(row["03_softmax"]) == pytest.approx(12 * passed / len(visible), abs=0.01)
    assert row["max_total"] == "20" and row["04_attention"] == "0"


def test_the_seed_redraws_the_hidden_inputs_only_and_solutions_still_pass(tmp_path, capsys):
    seeded = from_dict({"hidden": {"seed": 99}})
    for exercise in ("01_dot_scores", "05_causal_mask"):
        for mine, packaged in zip(seeded.checks(exercise), BY_ID[exercise].checks):
            assert [c.label for c in mine.cases] == [c.label for c in packaged.cases]
            same = [all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(m.args, p.args))
                    for m, p in zip(mine.cases, packaged.cases)]
            assert all(s for s, c in zip(same, packaged.cases) if not c.hidden)
            if exercise == "01_dot_scores":
                assert not any(s for s, c in zip(same, packaged.cases) if c.hidden)
    (tmp_path / "a.toml").write_text('exercises = ["01_dot_scores", "03_softmax"]\n[hidden]\nseed = 99\n')
    shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", tmp_path / "01_dot_scores.ipynb")
    shutil.copy(SOFTMAX, tmp_path / "03_softmax.ipynb")
    out = tmp_path / "gb.csv"
    assert main(["grade", str(tmp_path), "--assignment", str(tmp_path / "a.toml"), "--out", str(out), *FAST]) == 0
    (row,) = csv.DictReader(out.open())  # one student's folder: one row
    assert row["total"] == row["max_total"] == str(BY_ID["01_dot_scores"].max_score + BY_ID["03_softmax"].max_score)
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["assignment"]["hidden_seed"] == "set" and "99" not in json.dumps(report["assignment"])


def test_a_seed_redraws_hidden_inputs_of_every_exercise():
    seeded = from_dict({"hidden": {"seed": 7}})
    for exercise in EXERCISES:
        redrawn, hidden = seeded.redrawn(exercise.id)
        if exercise.drawn is not None:  # no hidden inputs: the assignment's secret redraws each student's example
            (mine,), _ = exercise.drawn({}, "s1", seeded.hidden_seed)
            (theirs,), _ = exercise.drawn({}, "s1", None)
            assert hidden == 0 and mine.cases[0].code != theirs.cases[0].code, exercise.id
            continue
        assert 0 < redrawn <= hidden, exercise.id  # an input builder that stopped using default_rng would show here
    assert Assignment.default().redrawn("03_softmax")[0] == 0


def test_a_check_s_own_time_limit_is_used(tmp_path, capsys):
    text = SOFTMAX.read_text().replace('"def softmax(x, axis=-1):\\n"',
                                       '"def softmax(x, axis=-1):\\n", "    import time; time.sleep(1.5)\\n"')
    assert "time.sleep" in text
    (tmp_path / "03_softmax.ipynb").write_text(text)
    (tmp_path / "a.toml").write_text('exercises = ["03_softmax"]\n[exercise.03_softmax.check.softmax]\nseconds = 0.5\n')
    out = tmp_path / "gb.csv"
    assert main(["grade", str(tmp_path / "03_softmax.ipynb"), "--assignment", str(tmp_path / "a.toml"),
                 "--out", str(out), *FAST]) == 0
    row = next(csv.DictReader(out.open()))
    assert row["03_softmax"] == "0" and "0.5 s" in row["feedback"]


def test_the_late_rule():
    a = from_dict({"deadline": dt.datetime.fromisoformat("2026-03-01T23:59:00+00:00"),
                   "late": {"grace_minutes": 10, "penalty_per_day": 0.25, "max_days": 2}})
    due, a = a.deadline, a.marking()
    assert days_late(a, due + dt.timedelta(minutes=9)) == 0 and days_late(a, due + dt.timedelta(minutes=11)) == 1
    assert days_late(a, due + dt.timedelta(days=1, minutes=11)) == 2 and days_late(a, None, marked_late=True) == 1
    assert [late_factor(a.late, d) for d in (0, 1, 2, 3)] == [1.0, 0.75, 0.5, 0.0]


@pytest.mark.parametrize("text, words", [
    ('exercises = ["99_nope"]', "unknown exercise '99_nope'"),
    ('exercises = ["03_softmax"]\n[exercise.04_attention]\npoints = 1', "not in the exercises list"),
    ('[exercise.03_softmax.check.soft]\npoints = 1', "no such check; the checks of 03_softmax are softmax"),
    ('[exercise.03_softmax]\npoints = -1', "points must be a number of at least 0"),
    ('deadline = 2026-03-01T23:59:00', "needs a time zone"),
    ('[late]\npenalty_per_day = 10', "fraction of the marks"),
    ('[hidden]\nseed = "x"', "hidden.seed must be a whole number"),
    ('pointz = 3', "unknown key 'pointz'"),
    ('title = ', "not valid TOML"),
    ('[integrity]\nhandout_mismatch = "warn"', "integrity.handout_mismatch must be one of 'hold', 'grade', 'zero'"),
    ('[integrity]\nhandouts = "hold"', "unknown key 'handouts'"),
])
def test_a_bad_file_is_refused_with_a_message_naming_the_key(text, words, tmp_path, capsys):
    path = tmp_path / "a.toml"
    path.write_text(text + "\n")
    with pytest.raises(AssignmentError, match=re.escape(words)):
        load(path)
    assert main(["assignment", "show", str(path)]) == 2 and words in capsys.readouterr().err


def test_assignment_init_and_show(tmp_path, capsys):
    path = tmp_path / "assignment.toml"
    assert main(["assignment", "init", str(path)]) == 0
    assert main(["assignment", "init", str(path)]) == 2 and "already exists" in capsys.readouterr().err
    assert main(["assignment", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{len(EXERCISES)} exercise(s), {sum(e.max_score for e in EXERCISES)} points" in out
    assert re.search(r"redrawn from the file's seed \(\d+ of \d+ differ", out)
    assert "exercise 0 on another student's handout: hold" in out  # the template's policy, the default

"""Tests for attention_course/grading/cli.py: `attention-course check | release | grade`."""

import csv
import json
import shutil
from pathlib import Path

import pytest

from attention_course.cli import main
from attention_course.grading.checks.exercises import BY_ID, EXERCISES

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--cell-timeout", "5", "--check-timeout", "5"]
DOT_MAX = BY_ID["01_dot_scores"].max_score
"""Inputs of the dot-scores check: full marks for its solution."""


@pytest.mark.parametrize("command", ["check", "release", "grade", "gradebook", "assignment", "exercises"])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert f"usage: attention-course {command}" in capsys.readouterr().out


def test_check_prints_a_table_and_exits_0_on_full_marks(capsys):
    assert main(["check", str(ROOT / "solutions" / "03_softmax.ipynb"), *FAST]) == 0
    out = capsys.readouterr().out
    full = BY_ID["03_softmax"].max_score
    assert f"03_softmax.ipynb — 03_softmax: {full}/{full} inputs passed; the notebook ran: ok" in out
    assert f"✓ softmax passed; {full}/{full}" in out


def test_check_teaches_on_a_wrong_notebook(tmp_path, capsys):
    nb = (ROOT / "solutions" / "03_softmax.ipynb").read_text()
    wrong = nb.replace("np.max(x, axis=axis, keepdims=True)", "0")  # no max subtraction
    assert wrong != nb
    (tmp_path / "03_softmax.ipynb").write_text(wrong)
    assert main(["check", str(tmp_path / "03_softmax.ipynb"), *FAST]) == 1
    out = capsys.readouterr().out
    assert "✗ softmax" in out and "large scores" in out and "hint: exp of a large score overflows" in out


def test_check_of_a_missing_file_is_a_usage_error(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.ipynb")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_release_check_on_the_repository(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["release", "--check"]) == 0
    assert f"{len(EXERCISES)} up to date" in capsys.readouterr().out


def test_release_writes_exercises(tmp_path, capsys):
    out = tmp_path / "ex"
    assert main(["release", "--solutions", str(ROOT / "solutions"), "--exercises", str(out)]) == 0
    assert len(list(out.glob("*.ipynb"))) == len(EXERCISES)
    assert main(["release", "--solutions", str(tmp_path / "none"), "--exercises", str(out)]) == 2


def test_grade_writes_a_gradebook_and_refuses_to_overwrite_it(tmp_path, capsys):
    for name in ("ann", "ben"):
        shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", tmp_path / f"{name}.ipynb")
    out = tmp_path / "gradebook.csv"
    assert main(["grade", str(tmp_path / "ann.ipynb"), str(tmp_path / "ben.ipynb"), "--out", str(out),
                 "--no-progress", *FAST]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [(r["name"], r["01_dot_scores"], r["status"]) for r in rows] == [("ann", str(DOT_MAX), "ok"), ("ben", str(DOT_MAX), "ok")]
    assert out.with_suffix(".json").exists() and "graded 2 submission(s)" in capsys.readouterr().out
    before = out.read_text()
    assert main(["grade", str(tmp_path / "ann.ipynb"), "--out", str(out), "--no-progress"]) == 2
    assert "already exists" in capsys.readouterr().err and out.read_text() == before
    assert main(["grade", str(tmp_path / "ann.ipynb"), "--out", str(out), "--force", "--no-progress", *FAST]) == 0
    assert len(list(csv.DictReader(out.open()))) == 1


@pytest.mark.parametrize("bad", [["--memory-limit", "12"], ["--cell-timeout", "-1"], ["--jobs", "0"],
                                 ["--follow-up-timeout", "-1"], ["--follow-up-timeout", "soon"]])
def test_grade_rejects_bad_limits(bad, tmp_path, capsys):
    args = ["grade", str(ROOT / "solutions"), "--out", str(tmp_path / "g.csv"), *bad]
    if bad[0] == "--jobs":
        assert main(args) == 2
    else:
        with pytest.raises(SystemExit):
            main(args)


def test_the_follow_up_timeout_reaches_the_limits_and_0_turns_it_off():
    from attention_course.cli import build_parser
    from attention_course.grading.run.options import read_limits
    from attention_course.grading.run.sandbox.runner import Limits

    def limits(*extra):
        return read_limits(build_parser().parse_args(["grade", str(ROOT / "solutions"), *extra]))

    assert limits().follow_seconds == Limits().follow_seconds > 0
    assert limits("--follow-up-timeout", "0").follow_seconds == 0
    assert limits("--follow-up-timeout", "2.5").follow_seconds == 2.5


def _without_bwrap(monkeypatch):
    from attention_course.grading.run.sandbox import bubblewrap

    which = shutil.which
    monkeypatch.setattr(bubblewrap.shutil, "which", lambda name, path=None: None if name == "bwrap" else which(name, path=path))


def test_grade_refuses_to_run_without_bubblewrap_and_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    _without_bwrap(monkeypatch)
    shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", tmp_path / "ann.ipynb")
    out = tmp_path / "gradebook.csv"
    assert main(["grade", str(tmp_path / "ann.ipynb"), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "apt-get install bubblewrap" in err and "--no-sandbox" in err and not out.exists()


def test_grade_without_a_sandbox_warns_on_the_terminal_and_in_the_report(tmp_path, capsys, monkeypatch):
    _without_bwrap(monkeypatch)
    shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", tmp_path / "ann.ipynb")
    out = tmp_path / "gradebook.csv"
    assert main(["grade", str(tmp_path / "ann.ipynb"), "--out", str(out), "--no-progress", "--no-sandbox", *FAST]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("warning: no sandbox (--no-sandbox)") == 2  # before and after the run
    report = json.loads(out.with_suffix(".json").read_text())
    assert report["settings"]["sandbox"] == "none (--no-sandbox)" and "as your user" in report["settings"]["warning"]
    assert [r["status"] for r in csv.DictReader(out.open())] == ["ok"]


def test_check_runs_where_bubblewrap_is_missing(capsys, monkeypatch):
    _without_bwrap(monkeypatch)
    assert main(["check", str(ROOT / "solutions" / "01_dot_scores.ipynb"), *FAST]) == 0
    assert f"01_dot_scores.ipynb — 01_dot_scores: {DOT_MAX}/{DOT_MAX} inputs passed; the notebook ran: ok" in capsys.readouterr().out

"""Tests for attention_course/grading/run/plan.py: what grades one notebook, decided once, under an assignment's setting;
and for `run.notebook.find_notebooks`, the notebooks `attention-course check` grades."""

import json
import shutil
from pathlib import Path

import pytest

from attention_course.grading.checks.exercises import BY_ID
from attention_course.grading.classroom.assignment import from_dict
from attention_course.grading.run.notebook import find_notebooks
from attention_course.grading.run.plan import NotGraded, Setting, plan_notebook
from attention_course.grading.run.sandbox.runner import Limits
from attention_course.grading.run.status import Status

ROOT = Path(__file__).resolve().parents[1]
ATTENTION = ROOT / "solutions" / "04_attention.ipynb"


def test_a_plan_lays_out_every_call_and_where_it_goes_once():
    plan = plan_notebook(ATTENTION)
    exercise = BY_ID["04_attention"]
    assert plan.exercise is exercise and plan.mismatch is None and plan.notes == () and plan.handout == ""
    (check,) = plan.checks
    assert [c.id for c in plan.calls] == list(range(len(check.indices(True)))) == list(plan.where)
    assert [plan.where[c.id] for c in plan.calls] == [(check.name, i) for i in check.indices(True)]
    assert {c.seconds for c in plan.calls} == {Limits().call_seconds}
    # attention has a helper (softmax) to swap in: its failures are followed up, on its own calls
    (follow,) = plan.follows
    assert (follow.check, follow.calls) == (check.name, tuple(c.id for c in plan.calls))
    assert plan_notebook(ATTENTION, limits=Limits(follow_seconds=0)).follows == ()
    assert len(plan_notebook(ATTENTION, Setting(hidden=False)).calls) == len(check.indices(False)) < len(plan.calls)


def test_an_assignment_s_setting_gives_its_time_limits_and_leaves_out_what_it_does_not_grade(tmp_path):
    assignment = from_dict({"title": "week 1", "exercises": ["04_attention"],
                            "exercise": {"04_attention": {"check": {"attention": {"seconds": 0.5}}}}})
    setting = assignment.setting()
    assert setting.exercises == {"04_attention": {"attention": 0.5}} and setting.title == "week 1"
    plan = plan_notebook(ATTENTION, setting)
    assert {c.seconds for c in plan.calls} == {0.5} and plan.follows[0].seconds == 0.5
    assert plan.checks == assignment.checks("04_attention")
    with pytest.raises(NotGraded) as refused:
        plan_notebook(ROOT / "solutions" / "03_softmax.ipynb", setting)
    assert (refused.value.status, refused.value.exercise) == (Status.NOT_IN_ASSIGNMENT, "03_softmax")
    assert "'week 1'" in refused.value.sentence


def test_a_notebook_that_cannot_be_planned_says_why(tmp_path):
    broken = tmp_path / "05_causal_mask.ipynb"
    broken.write_text("{not json")
    with pytest.raises(NotGraded) as refused:
        plan_notebook(broken)
    assert (refused.value.status, refused.value.exercise) == (Status.INVALID_NOTEBOOK, "05_causal_mask")
    nb = json.loads(ATTENTION.read_text())
    nb["metadata"] = {}
    nb["cells"] = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
    (tmp_path / "mine.ipynb").write_text(json.dumps(nb))
    with pytest.raises(NotGraded) as refused:
        plan_notebook(tmp_path / "mine.ipynb")
    assert (refused.value.status, refused.value.exercise) == (Status.UNKNOWN_EXERCISE, None)


def test_a_notebook_whose_metadata_names_another_exercise_is_planned_as_the_one_it_defines(tmp_path):
    nb = json.loads(ATTENTION.read_text())
    nb["metadata"]["attention_course"]["exercise"] = "03_softmax"  # it defines attention, not softmax
    path = tmp_path / "04_attention.ipynb"
    path.write_text(json.dumps(nb))
    plan = plan_notebook(path)
    assert plan.exercise.id == "04_attention" and "metadata says it is exercise 03_softmax" in plan.mismatch


def test_find_notebooks_takes_files_and_each_folder_s_notebooks_in_name_order(tmp_path):
    (tmp_path / "b_student" / "deep").mkdir(parents=True)
    (tmp_path / "b_student" / ".ipynb_checkpoints").mkdir()
    for name in ("a.ipynb", "b_student/deep/x.ipynb", "b_student/.ipynb_checkpoints/x.ipynb", "c.ipynb", ".h.ipynb",
                 "notes.txt"):
        shutil.copy(ATTENTION, tmp_path / name)
    assert find_notebooks([tmp_path, ATTENTION]) == [tmp_path / "a.ipynb", tmp_path / "b_student" / "deep" / "x.ipynb",
                                                     tmp_path / "c.ipynb", ATTENTION]
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        find_notebooks([tmp_path / "missing.ipynb"])

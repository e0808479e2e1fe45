"""Tests for the exercise registry and every check: the solutions' own code passes them all.

The solution notebooks' code cells run here, in this process, so each check
function is exercised the way a student's notebook calls it.
"""

import importlib
from pathlib import Path

import nbformat
import numpy as np
import pytest

import attention_course.grading as grading
from attention_course.grading.checks.engine import results
from attention_course.grading.checks.exercises import BY_ID, EXERCISES, exercise, identify

ROOT = Path(__file__).resolve().parents[1]


def solution_namespace(exercise_id: str) -> dict:
    nb = nbformat.read(ROOT / "solutions" / f"{exercise_id}.ipynb", as_version=4)
    namespace: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code":  # the check cells run too: their results are simply not displayed
            exec(compile(cell.source, exercise_id, "exec"), namespace)
    return namespace


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_solution_code_passes_every_check_with_hidden_inputs(ex):
    namespace = solution_namespace(ex.id)
    for check in ex.checks:
        check_function = getattr(grading, f"check_{check.name}")
        result = check_function(namespace[check.function], hidden=True)
        assert result.passed, str(result)
        assert result.score == result.max_score == len(check.cases)


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_stubs_are_not_attempted(ex):
    for check in ex.checks:
        def stub(*args, **kwargs):
            raise NotImplementedError()

        result = getattr(grading, f"check_{check.name}")(stub)
        assert result.status == results.CheckStatus.NOT_ATTEMPTED and result.score == 0


@pytest.mark.parametrize("check", [c for ex in EXERCISES for c in ex.checks], ids=lambda c: c.name)
def test_every_check_of_the_registry_is_a_function_of_the_grading_package(check):
    assert f"check_{check.name}" in grading.__all__
    assert callable(getattr(grading, f"check_{check.name}"))


@pytest.mark.parametrize("ex", EXERCISES, ids=[e.id for e in EXERCISES])
def test_the_registry_names_each_exercise_s_checks_as_their_module_does(ex):
    # the registry is read without importing the checks; their names there are the checks' own
    assert tuple(c.name for c in ex.checks) == ex.check_names
    assert tuple(c.function for c in ex.checks) == ex.functions
    module = importlib.import_module(f"attention_course.grading.checks.exercises.{ex.module}")
    for check_function in ex.check_functions:
        assert getattr(grading, check_function) is getattr(module, check_function)
    assert all(a is b for a, b in zip(ex.checks, ex.checks))  # the same objects each time they are asked for


def test_each_module_of_checks_lists_exactly_the_checks_the_registry_names_from_it():
    for module_name in dict.fromkeys(e.module for e in EXERCISES):
        module = importlib.import_module(f"attention_course.grading.checks.exercises.{module_name}")
        named = [name for e in EXERCISES if e.module == module_name for name in e.check_names]
        assert sorted(module.CHECKS) == sorted(named), module_name
        assert all(check.name == name for name, check in module.CHECKS.items()), module_name


def test_every_check_has_hidden_inputs_and_a_book_chapter():
    chapters = {line.split("file:")[1].strip().removeprefix("book/")
                for line in (ROOT / "_toc.yml").read_text().splitlines() if "file:" in line}
    for ex in EXERCISES:
        assert ex.chapter in chapters and (ROOT / "book" / f"{ex.chapter}.ipynb").is_file(), ex.chapter
        for check in ex.checks:
            # an exercise worked by hand hides nothing: each student's own example, drawn again by the grader, is
            # what a neighbour's answers cannot pass
            assert ex.drawn is not None or any(c.hidden for c in check.cases), check.name
            assert any(not c.hidden for c in check.cases), check.name


def test_max_score_counts_every_input():
    assert exercise("05_causal_mask").max_score == len(BY_ID["05_causal_mask"].checks[0].cases) + len(
        BY_ID["05_causal_mask"].checks[1].cases)
    with pytest.raises(ValueError, match="unknown exercise"):
        exercise("09_nothing")


def test_identify_by_metadata_then_file_name_then_functions():
    assert identify({"attention_course": {"exercise": "03_softmax"}}, "anything.ipynb", "").id == "03_softmax"
    assert identify({}, "bob_07_multi_head_attention.ipynb", "").id == "07_multi_head_attention"
    code = "def causal_mask(n):\n    pass\n\ndef masked_attention(Q, K, V, mask):\n    pass\n"
    assert identify({}, "mine.ipynb", code).id == "05_causal_mask"
    assert identify({}, "mine.ipynb", "print(1)") is None


def test_spread_check_tells_measurement_from_formula():
    def formula(d_k, n_samples=10_000, seed=0):
        return float(np.sqrt(d_k))

    result = grading.check_dot_product_spread(formula)
    assert result.mistake == "formula_not_measurement"


def test_package_answers_used_by_a_notebook_are_named():
    from attention_course.grading.checks.exercises import package_names_used

    attention = BY_ID["04_attention"]
    assert package_names_used(["from attention_course import softmax\nfrom attention_course.grading import check_attention"],
                              attention) == []
    cells = ["import attention_course as ac\n%time x = 1", "from attention_course.core.attention import attention_weights",
             "def attention(Q, K, V):\n    return ac.scaled_dot_product_attention(Q, K, V), None"]
    assert package_names_used(cells, attention) == ["attention_weights", "scaled_dot_product_attention"]
    assert package_names_used(["from attention_course import softmax"], BY_ID["03_softmax"]) == ["softmax"]


@pytest.mark.parametrize("check", [c for e in EXERCISES for c in e.checks], ids=lambda c: c.name)
def test_every_visible_input_can_be_rebuilt_from_what_the_student_is_shown(check):
    from attention_course.grading.checks.engine.cases import SHOW_MAX_ELEMENTS

    for case in check.cases:
        if case.hidden:
            continue
        namespace = {"np": np}
        exec(case.describe(check.params).split("\n(")[0], namespace)  # the shown code, less any note
        for name, value in zip(check.params, case.args):
            if isinstance(value, np.ndarray):
                rebuilt = namespace[name]
                assert rebuilt.dtype == value.dtype and np.array_equal(rebuilt, value), (case.label, name)
                assert case.code or value.size <= SHOW_MAX_ELEMENTS, (case.label, name)
            else:
                assert namespace[name] == value, (case.label, name)


def test_every_check_that_takes_a_softmax_shows_scores_beyond_exp_s_limit():
    """A softmax without its max subtracted overflows only where a score passes log(largest float) of its dtype
    (about 709 for float64, 88 for float32): the notebook's check (and so the batch) must try such an input."""
    for exercise in EXERCISES:
        for check in exercise.checks:
            if check.scores is None:
                continue
            beyond = False
            for case in (c for c in check.cases if not c.hidden):
                scores = np.asarray(check.scores(case)[0], dtype=np.float64)
                dtype = next((a.dtype for a in case.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"),
                             np.dtype(np.float64))
                finite = scores[np.isfinite(scores)]
                if finite.size and finite.max() > np.log(np.finfo(dtype).max):
                    beyond = True
            assert beyond, check.name

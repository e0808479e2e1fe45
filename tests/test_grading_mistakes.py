"""Tests for attention_course/grading/checks/engine/mistakes.py: every mistake of the corpus is recognised.

tests/grading_corpus/mistakes/ holds one wrong implementation per common
mistake; each names its check (CHECK), the mistake it must be diagnosed as
(MISTAKE, or None for a wrong answer caught but not named, when HINT says what
the hint must contain) and the marks it must get (MARKS, e.g. "3/10", with the
hidden inputs); ABSENT, if given, lists what is not so of that code and must
not be said of it. The check must fail it, give that mistake's hint, and never
claim anything about it that `audit` finds untrue.
"""

import dataclasses
import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from attention_course.grading.checks.engine.cases import Case
from attention_course.grading.checks.engine.run import check_in_process
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.core.softmax import softmax
from support.audit import _unsupported_error_hint, audit
from attention_course.grading.checks.engine.calls import AT_LINE
from attention_course.grading.checks.engine.mistakes import difference, diagnose, same_values, seen_difference
from attention_course.grading.checks.exercises.softmax import NO_MAX_SUBTRACTION

CORPUS = Path(__file__).parent / "grading_corpus" / "mistakes"
CHECKS = {check.name: check for exercise in EXERCISES for check in exercise.checks}
BOOK_LESSONS = {  # mistakes the book warns against by name: each has at least one corpus entry
    "no_max_subtraction", "softmax_wrong_axis", "does_not_sum_to_1", "missing_scale", "divided_by_d_k",
    "mask_after_softmax", "mask_filled_with_zero", "query_key_swapped", "returns_weights_as_output",
    "builds_full_matrix", "modifies_input", "top_left_causal_mask", "kv_heads_tiled", "keys_cached_before_rope",
    "appended_on_wrong_axis",
}


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ENTRIES = sorted(CORPUS.glob("*.py"))


def sampled(paths: list[Path], ids) -> list:
    """`paths` as parameters, every tenth in `make check`'s quick run, the others marked `corpus` (`make test`)."""
    return [pytest.param(p, id=i, marks=() if n % 10 == 0 else pytest.mark.corpus) for n, (p, i) in
            enumerate(zip(paths, ids))]


@functools.cache
def graded(path: Path):
    """(the corpus entry, its check, the check's result on it with the hidden inputs): made once for the tests below
    that read it."""
    wrong = load(path)
    check = CHECKS[wrong.CHECK]
    return wrong, check, check_in_process(check, getattr(wrong, check.function), hidden=True)


@pytest.mark.parametrize("path", sampled(ENTRIES, [p.stem for p in ENTRIES]))
def test_each_wrong_implementation_gets_its_hint_and_marks(path):
    wrong, check, result = graded(path)
    assert not result.passed
    assert result.mistake == wrong.MISTAKE, str(result)
    assert f"{result.score}/{result.max_score}" == wrong.MARKS, str(result)
    words = " ".join(str(result).split())  # the text form wraps long hints
    assert " ".join(result.hint.split()) in words
    said = " ".join(f"{result.message} {result.hint}".split())
    for claim in getattr(wrong, "ABSENT", ()):  # what is not so of this code, and must not be said of it
        assert claim not in said, (claim, str(result))
    if wrong.MISTAKE is None:  # caught, not named: the hint (or, with no hint, the message) says what is seen
        if hasattr(wrong, "HINT"):
            assert wrong.HINT in " ".join(result.hint.split()), str(result)
        else:
            assert result.hint == "" and wrong.MESSAGE in result.message, str(result)
        return
    hints = {m.hint for m in check.mistakes if m.id == wrong.MISTAKE}
    failing = [c for c in result.cases if c.mistake == wrong.MISTAKE]
    assert failing and all(c.hint for c in failing)
    predicted = [c for c in failing if c.matches]  # an input where a prediction reproduced the result
    if hints:  # there the prediction's own hint is said, then the leads that apply
        assert all(any(c.hint.startswith(h) for h in hints) for c in predicted), str(result)


WRONG = ENTRIES + sorted((Path(__file__).parent / "grading_corpus" / "assumptions").glob("*.py"))


@pytest.mark.parametrize("path", sampled(WRONG, [f"{p.parent.name}/{p.stem}" for p in WRONG]))
def test_the_notebook_check_catches_what_the_batch_grader_catches(path):
    """Every property the hidden inputs test has a visible input too: the check cell fails every wrong function."""
    wrong = load(path)
    check = CHECKS[wrong.CHECK]
    assert not check_in_process(check, getattr(wrong, check.function)).passed


CORRECT = sorted((Path(__file__).parent / "grading_corpus" / "correct").glob("*.py"))


@pytest.mark.parametrize("path", CORRECT, ids=[p.stem for p in CORRECT])
def test_a_right_function_written_another_way_gets_full_marks_and_no_hint(path):
    try:
        right = load(path)
    except ModuleNotFoundError as missing:  # scipy comes with the `fast` extra only
        pytest.skip(f"needs {missing.name}")
    check = CHECKS[right.CHECK]
    result = check_in_process(check, getattr(right, check.function), hidden=True)
    assert result.passed and result.score == result.max_score, str(result)
    assert result.hint == "" and all(not c.hint and c.mistake is None for c in result.cases), str(result)


def test_every_recognised_mistake_has_a_corpus_entry():  # a prediction no wrong function is graded with is untested
    # an assumption entry that names the mistake it is recognised as (exercise 0's sheets) covers it too
    assumptions = (load(p) for p in sorted((CORPUS.parent / "assumptions").glob("*.py")))
    covered = {load(p).MISTAKE for p in ENTRIES} | {a.MISTAKE for a in assumptions if hasattr(a, "MISTAKE")}
    missing = {check.name: sorted({m.id for m in check.mistakes} - covered) for check in CHECKS.values()}
    assert not any(missing.values()), {name: ids for name, ids in missing.items() if ids}


def test_one_mistake_id_has_one_hint():  # the hint shown for a mistake is its id's: two hints would mix them up
    for check in CHECKS.values():
        hints: dict[str, set[str]] = {}
        for mistake in check.mistakes:
            hints.setdefault(mistake.id, set()).add(mistake.hint)
        assert all(len(h) == 1 for h in hints.values()), (check.name, {k: h for k, h in hints.items() if len(h) > 1})


def test_the_corpus_covers_every_mistake_the_book_warns_against():
    covered = {load(p).MISTAKE for p in ENTRIES}
    assert BOOK_LESSONS <= covered, BOOK_LESSONS - covered


def test_difference_names_shape_nan_and_dtype():
    tol = (1e-6, 1e-9)
    assert difference(np.zeros(3), np.zeros(3), tol) is None
    assert difference(np.zeros(3), np.zeros((3, 1)), tol) == "expected shape (3,), got shape (3, 1)"
    assert "got nan at index 1" in difference(np.zeros(3), np.array([0.0, np.nan, 0.0]), tol)
    assert "booleans" in difference(np.ones(2, dtype=bool), np.ones(2), tol)
    assert "expected a tuple" in difference((np.zeros(1), np.zeros(1)), np.zeros(1), tol, ("output", "weights"))
    assert difference((np.zeros(1), np.zeros(1)), (np.zeros(1), np.ones(1)), tol, ("output", "weights")).startswith("weights:")


def test_same_values_needs_the_same_structure():
    tol = (1e-6, 1e-9)
    assert same_values(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), tol)
    assert not same_values(np.zeros(2), np.zeros(3), tol)
    assert not same_values(np.zeros(2), (np.zeros(2),), tol)
    assert not same_values(np.zeros(2), None, tol)


def test_unexplained_wrong_values_get_a_generic_diagnosis():
    case = Case("c", (np.zeros(2),))
    message, mistake = diagnose(case, np.zeros(2), np.zeros((2, 2)), {}, ())
    assert mistake.id == "wrong_shape" and "shape" in message
    message, mistake = diagnose(case, np.zeros(2), None, {}, ())
    assert mistake.id == "returns_none"
    message, mistake = diagnose(case, np.zeros(2), np.array([np.inf, 0.0]), {}, ())
    assert mistake.id == "not_finite"
    assert diagnose(case, np.zeros(2), np.zeros(2), {}, ()) is None


@pytest.mark.parametrize("path", sampled(ENTRIES, [p.stem for p in ENTRIES]))
def test_no_hint_in_the_corpus_contradicts_its_submission(path):
    wrong, check, result = graded(path)
    assert audit(check, getattr(wrong, check.function), result) == []


def test_the_audit_reports_a_claim_the_submission_does_not_bear_out():
    def flipped(x, axis=-1):
        return softmax(-np.asarray(x), axis=axis)

    honest = CHECKS["softmax"]
    assert audit(honest, flipped) == []
    blames_overflow = dataclasses.replace(  # every prediction gone: the same answer blamed on overflow
        honest, mistakes=(), specific=lambda case, expected, got, code: dataclasses.replace(NO_MAX_SUBTRACTION, predict=None))
    assert any("could not be verified" in p for p in audit(blames_overflow, flipped))
    overflow = dataclasses.replace(NO_MAX_SUBTRACTION, predict=lambda x, axis=-1: -x)  # predicts something else
    wrong_prediction = dataclasses.replace(honest, mistakes=(overflow,), specific=lambda case, expected, got, code: overflow)
    assert any("no prediction" in p for p in audit(wrong_prediction, flipped))


def test_the_audit_checks_what_an_error_hint_says_of_the_failing_line():
    error = "ValueError: operands could not be broadcast" + AT_LINE + "scores = np.where(mask, s, -np.inf)"
    assert "`.T`" in _unsupported_error_hint("Your `.T` reverses all the axes.", error)
    assert "quotes" in _unsupported_error_hint("The line that failed, `s = q @ k.T`, ...", error)
    assert _unsupported_error_hint("The line that failed, `scores = np.where(mask, s, -np.inf)`, ...", error) is None


def test_an_unexplained_difference_is_described_by_what_was_observed():
    tol = (1e-6, 1e-9)
    expected = np.arange(1.0, 7.0).reshape(2, 3)
    assert seen_difference(expected, 2 * expected, tol).id == "observed_constant_factor"
    assert "exactly 2 times" in seen_difference(expected, 2 * expected, tol).hint
    assert "√8" in seen_difference(expected, expected * np.sqrt(8), tol).hint
    assert seen_difference(expected, expected + 0.5, tol).id == "observed_constant_offset"
    square = np.arange(9.0).reshape(3, 3)
    assert "transposed" in seen_difference(square, square.T, tol).hint
    assert "reversed along axis 0" in seen_difference(expected, expected[::-1].copy(), tol).hint
    rows = np.arange(12.0).reshape(3, 4)
    assert "in the order [2, 0, 1]" in seen_difference(rows, rows[[2, 0, 1]], tol).hint
    later = expected.copy()
    later[1, 2] = 0.0
    assert seen_difference(expected, later, tol).id == "observed_right_until" and "row 1 is the first wrong" in seen_difference(expected, later, tol).hint
    with_nan = expected.copy()
    with_nan[1, 0] = np.nan
    assert "(1, 0) (row 1)" in seen_difference(expected, with_nan, tol).hint
    assert seen_difference(expected, np.ones((2, 3)) * 7.5, tol) is None  # nothing simple to say: nothing is said
    named = seen_difference((expected, expected), (expected, 3 * expected), tol, ("output", "weights"))
    assert named.hint.startswith("In `weights`: Every value is exactly 3 times")


def test_a_prediction_contradicted_by_another_input_is_not_named():
    def halved(scores, d_k):  # equals dividing by d_k only when d_k = 4
        return scores / (2 * np.sqrt(d_k))

    result = check_in_process(CHECKS["scale_scores"], halved, hidden=True)
    assert result.mistake == "observed_constant_factor"
    assert all(c.mistake != "divided_by_d_k" for c in result.cases)

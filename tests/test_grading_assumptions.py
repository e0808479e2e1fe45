"""Tests for the inputs that break hidden assumptions, and for engine/observe.py and engine/shrink.py.

tests/grading_corpus/assumptions/ holds one wrong function per assumption a
function could silently make (d_model = h * d_k, a full-length sequence, no
allowed score of exactly 0, float32 being enough, ...). Each names its check
(CHECK), a piece of the observational message the check must print for it
(MESSAGE, or a tuple of pieces; "cut down to the smallest input" when the
failure is shown on a smaller input) and the marks it must get with the hidden inputs (MARKS). Every
corpus folder is then walked to verify that no hint names a cause the grader
did not check on that submission.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from attention_course.grading.engine import observe, shrink
from attention_course.grading.engine.calls import RAISED, observe_call
from attention_course.grading.engine.cases import Case, shape_of
from attention_course.grading.engine.check import run_check
from attention_course.grading.engine.mistakes import modified_arguments, same_values
from attention_course.grading.engine.results import FAILED
from attention_course.grading.exercises import EXERCISES
from attention_course.grading.exercises.softmax import sums_to_one

CORPUS = Path(__file__).parent / "grading_corpus"
ASSUMPTIONS = sorted((CORPUS / "assumptions").glob("*.py"))
EVERY_ENTRY = sorted(p for folder in ("mistakes", "assumptions") for p in (CORPUS / folder).glob("*.py"))
CHECKS = {check.name: check for exercise in EXERCISES for check in exercise.checks}
DEFAULT_ERROR_HINT = "Read the error: which line failed, and what shapes did the arrays have there?"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("path", ASSUMPTIONS, ids=[p.stem for p in ASSUMPTIONS])
def test_each_assumption_is_broken_by_an_input_with_an_observed_message(path):
    wrong = load(path)
    check = CHECKS[wrong.CHECK]
    result = run_check(check, getattr(wrong, check.function), hidden=True)
    assert not result.passed, str(result)
    assert f"{result.score}/{result.max_score}" == wrong.MARKS, str(result)
    pieces = (wrong.MESSAGE,) if isinstance(wrong.MESSAGE, str) else wrong.MESSAGE
    assert all(flat(piece) in flat(str(result)) for piece in pieces), str(result)


def test_every_exercise_has_an_assumption_corpus_entry():
    covered = {load(p).CHECK for p in ASSUMPTIONS}
    missing = [e.id for e in EXERCISES if not covered & {c.name for c in e.checks}]
    assert not missing, missing


def _weights(value):
    """The weights of an attention result (output, weights), or a softmax's result itself."""
    return value[1] if isinstance(value, tuple) and len(value) == 2 else value


def _dtypes(value) -> tuple:
    return tuple(getattr(v, "dtype", None) for v in (value if isinstance(value, tuple) else (value,)))


def _described(expected, value, tolerance) -> str:
    """What engine/observe.py says about each array of a result."""
    pairs = zip(expected, value) if isinstance(expected, tuple) and isinstance(value, tuple) else [(expected, value)]
    return " ".join(observe.describe(e, v, tolerance) for e, v in pairs
                    if isinstance(e, np.ndarray) and isinstance(v, np.ndarray) and e.shape == v.shape)


def _helper_fixes_it(check, fn, failing: list[int]) -> bool:
    """True if `fn`, given the course's version of a helper it calls, returns the expected result on `failing`."""
    def call(f, j):
        return observe_call(f, check.cases[j].args, check.cases[j].kwargs)

    def right(j, obs):
        return same_values(obs.value, check.expected(j), check.cases[j].tolerance)

    return observe.helper_at_fault(fn, failing, call, right) is not None


def _checked(check, i, case, fn, result) -> str | None:
    """None if the hint of a failing input rests on something checked on `fn`, else why not."""
    if result.status == RAISED or result.got.split(":")[0].endswith("Error"):
        allowed = {DEFAULT_ERROR_HINT, check.error_hint(case, result.got) if check.error_hint else ""}
        return None if result.hint in allowed or result.mistake else f"hint {result.hint!r} not from the exception"
    obs = observe_call(fn, case.args, case.kwargs)
    value, expected = obs.value, check.expected(i)
    predicted = [p for p, m in enumerate(check.mistakes) if m.id == result.mistake]
    if any(same_values(value, check.predictions(i).get(p), case.tolerance) for p in predicted):
        return None  # the mistake's prediction reproduces what the function returned
    verified = {
        "wrong_shape": lambda: shape_of(value) != shape_of(expected),
        "returns_none": lambda: value is None,
        "not_a_tuple": lambda: isinstance(expected, tuple) and not isinstance(value, tuple),
        "not_finite": lambda: any(isinstance(v, np.ndarray) and v.dtype.kind == "f" and not np.isfinite(v).all()
                                  for v in (value if isinstance(value, tuple) else (value,))),
        "modifies_input": lambda: bool(modified_arguments(case, obs.args_after, check.params)),
        "dtype_changed": lambda: _dtypes(value) != _dtypes(expected),
        "float32_not_kept": lambda: _dtypes(value) != _dtypes(expected),
        "precision_lost": lambda: _dtypes(value) != _dtypes(expected),
        # observations named as mistakes ("observed_..."): the same kind of difference is seen by engine/observe.py
        "observed_constant_factor": lambda: "factor" in observe.kind(expected, value, case.tolerance),
        "observed_constant_offset": lambda: "offset" in observe.kind(expected, value, case.tolerance),
        "observed_permutation": lambda: "order" in observe.kind(expected, value, case.tolerance),
        "observed_right_until": lambda: "is the first that differs" in _described(expected, value, case.tolerance),
        "builds_full_matrix": lambda: case.measure_memory,
        "does_not_sum_to_1": lambda: not sums_to_one(_weights(value), case.kwargs.get("axis", -1)),
        "softmax_wrong_axis": lambda: any(sums_to_one(_weights(value), a) for a in range(_weights(value).ndim)),
        "helper_at_fault": lambda: _helper_fixes_it(check, fn, [i]),
    }
    if result.mistake in verified and verified[result.mistake]():
        return None
    if check.compare is not None and not predicted:  # a check judged by bands of values, e.g. the measured spread
        verdict = check.compare(case, expected, value, check.predictions(i))
        if verdict and verdict[1] is not None and verdict[1].id == result.mistake:
            return None
    return f"mistake {result.mistake!r} is neither predicted nor observed on this input"


@pytest.mark.parametrize("path", EVERY_ENTRY, ids=[f"{p.parent.name}/{p.stem}" for p in EVERY_ENTRY])
def test_no_hint_names_a_cause_the_grader_did_not_check(path):
    wrong = load(path)
    check = CHECKS[wrong.CHECK]
    fn = getattr(wrong, check.function)
    result = run_check(check, fn, hidden=True)
    if result.mistake == "helper_at_fault":  # checked by re-running with the course's version of the helper
        failing = [i for i, c in enumerate(result.cases) if c.status == FAILED]
        assert _helper_fixes_it(check, fn, failing)
        return
    problems = []
    for i, (case, case_result) in enumerate(zip(check.cases, result.cases)):
        if case_result.status == FAILED and case_result.hint:
            why = _checked(check, i, case, fn, case_result)
            if why:
                problems.append(f"{case.label}: {why}")
    assert not problems, "\n".join(problems)


# ---- engine/observe.py ------------------------------------------------------------------------

TOL = (1e-6, 1e-9)
E = np.arange(1.0, 7.0).reshape(2, 3)


@pytest.mark.parametrize("got, clause", [
    (E * 2, "every entry is the expected one times 2"),
    (E / np.sqrt(8), "times 1/sqrt(8) = 0.3536"),
    (E + 0.5, "every entry is the expected one plus 0.5"),
    (E[::-1], "slices along axis 0 in the order [1, 0]"),
    (np.sort(E[:, ::-1], axis=None).reshape(2, 3)[:, ::-1], "the right values in another order"),
    (E.astype(np.float32) * np.float32(1 + 1e-5), "the result has dtype float32 where float64 was expected"),
])
def test_describe_names_the_kind_of_difference(got, clause):
    assert clause in observe.describe(E, got, TOL)


def test_describe_says_where_the_first_wrong_row_and_the_first_nan_are():
    got = E.copy()
    got[1, 2] = np.nan  # the first wrong entry, which the message names already
    assert observe.describe(E, got, TOL) == "; row 0 is right, row 1 is the first that differs"
    got[0, 1] = 99.0  # now a wrong number comes first, and the nan later
    assert "the first nan or inf where a finite value was expected is at index (1, 2)" in observe.describe(E, got, TOL)
    square = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert "last two axes swapped" in observe.describe(square, square.T, TOL)
    assert observe.describe(np.array([1.0]), np.array([3.0]), TOL) == ""  # one number: no pattern to see


# ---- engine/shrink.py -------------------------------------------------------------------------

def test_sizes_cut_every_axis_of_a_size_together_and_keep_broadcast_axes():
    spec = shrink.Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "mask": ("n_q", "n_k")})
    args = {"Q": np.zeros((2, 3, 4)), "K": np.zeros((2, 5, 4)), "mask": np.ones((1, 5), dtype=bool)}
    assert shrink.sizes_of(spec, args) == {"lead1": 2, "n_q": 3, "d_k": 4, "n_k": 5}
    cut = shrink.cut(spec, args, "n_q", 3, 1)
    assert cut["Q"].shape == (2, 1, 4) and cut["mask"].shape == (1, 5)
    cut = shrink.cut(spec, args, "n_k", 5, 2)
    assert cut["K"].shape == (2, 2, 4) and cut["mask"].shape == (1, 2)


def test_a_failure_no_mistake_explains_is_shown_on_a_smaller_input_without_changing_the_marks():
    def attention(Q, K, V):  # the scores of every key but the first made 1.5 times larger
        s = Q @ K.T / np.sqrt(Q.shape[1])
        s[:, 1:] *= 1.5
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        return w @ V, w

    check = CHECKS["attention"]
    result = run_check(check, attention)
    assert result.smallest is not None and result.mistake is None
    q, k, v = (line for line in result.smallest.inputs.splitlines() if "shape" in line)
    assert "shape (1, 1)" in q and "shape (2, 1)" in k  # one query, two keys, d_k = 1
    assert "cut down to the smallest input" in str(result) and result.smallest.label in str(result)
    assert result.smallest.label in result._repr_html_() and result.message == result.smallest.message
    assert result.score == sum(c.passed for c in result.cases) and result.max_score == len(check.indices(False))


def test_a_right_function_calling_a_wrong_helper_is_told_so():
    path = CORPUS / "assumptions" / "padded_own_wrong_mask.py"
    wrong = load(path)
    result = run_check(CHECKS["padded_attention"], wrong.padded_attention)
    assert result.mistake == "helper_at_fault" and "your `padding_mask`" in result.hint
    right_helper = run_check(CHECKS["padding_mask"], wrong.padding_mask)
    assert not right_helper.passed  # the helper itself is what its own check fails

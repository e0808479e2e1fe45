"""Tests for the inputs that break hidden assumptions, and for checks/engine/differences.py and checks/engine/shrink.py.

tests/grading_corpus/assumptions/ holds one wrong function per assumption a
function could silently make (d_model = h * d_k, n_q <= n_k, a full-length
sequence, float32 being enough, ...). Each names its check (CHECK), pieces of
the feedback the check must print for it (MESSAGE, a string or a tuple; "cut
down to the smallest input" when the failure is shown on a smaller input) and
the marks it must get with the hidden inputs (MARKS). Every entry is then
audited (tests/support/audit.py): no hint may name a cause the grader did not check
on that submission.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from attention_course.grading.checks.engine import differences, shrink
from support.audit import audit
from attention_course.grading.checks.engine.run import check_in_process
from attention_course.grading.checks.exercises import EXERCISES

CORPUS = Path(__file__).parent / "grading_corpus"
ASSUMPTIONS = sorted((CORPUS / "assumptions").glob("*.py"))
CHECKS = {check.name: check for exercise in EXERCISES for check in exercise.checks}


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
    result = check_in_process(check, getattr(wrong, check.function), hidden=True)
    assert not result.passed, str(result)
    assert f"{result.score}/{result.max_score}" == wrong.MARKS, str(result)
    pieces = (wrong.MESSAGE,) if isinstance(wrong.MESSAGE, str) else wrong.MESSAGE
    assert all(flat(piece) in flat(str(result)) for piece in pieces), str(result)


def test_every_exercise_has_an_assumption_corpus_entry():
    covered = {load(p).CHECK for p in ASSUMPTIONS}
    missing = [e.id for e in EXERCISES if not covered & {c.name for c in e.checks}]
    assert not missing, missing


@pytest.mark.parametrize("path", ASSUMPTIONS, ids=[p.stem for p in ASSUMPTIONS])
def test_no_hint_names_a_cause_the_grader_did_not_check(path):
    """Every claim of the feedback holds on the submission (mistakes/ is audited by test_grading_mistakes.py)."""
    wrong = load(path)
    check = CHECKS[wrong.CHECK]
    assert audit(check, getattr(wrong, check.function)) == []


def test_a_helper_is_blamed_only_when_the_course_version_of_it_fixes_the_function(tmp_path):
    own = (CORPUS / "assumptions" / "padded_own_wrong_mask.py").read_text()
    unscaled = tmp_path / "unscaled.py"  # the same wrong helper, and a mistake of its own: no scale
    unscaled.write_text(own.replace(" / math.sqrt(Q.shape[-1])", ""))
    check = CHECKS["padded_attention"]
    assert check_in_process(check, load(unscaled).padded_attention, hidden=True).mistake != "helper_at_fault"
    right = load(CORPUS / "assumptions" / "padded_own_wrong_mask.py").padded_attention
    assert check_in_process(check, right, hidden=True).mistake == "helper_at_fault"
    assert audit(check, right) == []


def test_each_failure_describes_its_difference_once():
    check = CHECKS["scale_scores"]
    doubled = check_in_process(check, lambda scores, d_k: 2 * scores / np.sqrt(d_k))
    assert doubled.mistake == "observed_constant_factor" and "exactly 2" in doubled.hint
    assert "times 2" not in doubled.message  # the hint says it: the message does not say it again
    close = check_in_process(check, lambda scores, d_k: scores / np.sqrt(d_k) * 1.0001)  # right to 4 digits: rounding-like
    assert close.hint == "" and "agree to about 4 significant digits only" in close.message  # no hint: the message


def test_a_mistake_is_not_named_where_the_function_is_right_on_what_the_mistake_gets_wrong():
    # a float32 softmax that subtracts the max: nan only beyond float32's range, where exp without the max
    # trick gives the same nan; right on large scores, where exp without the max trick overflows
    result = check_in_process(CHECKS["softmax"], load(CORPUS / "assumptions" / "softmax_float32.py").softmax, hidden=True)
    assert result.mistake != "no_max_subtraction" and "overflows" not in result.hint


# ---- engine/differences.py ------------------------------------------------------------------------

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
    assert clause in differences.describe(E, got, TOL)


def test_describe_says_where_the_first_wrong_row_and_the_first_nan_are():
    got = E.copy()
    got[1, 2] = np.nan  # the first wrong entry, which the message names already
    assert differences.describe(E, got, TOL) == "; row 0 is right, row 1 is the first that differs"
    got[0, 1] = 99.0  # now a wrong number comes first, and the nan later
    assert "the first nan or inf where a finite value was expected is at index (1, 2)" in differences.describe(E, got, TOL)
    square = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert "last two axes swapped" in differences.describe(square, square.T, TOL)
    assert differences.describe(np.array([1.0]), np.array([3.0]), TOL) == ""  # one number: no pattern to see


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
    def attention(Q, K, V):  # the weights mixed with uniform ones: wrong wherever there are two keys or more
        s = Q @ K.T / np.sqrt(Q.shape[1])
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w = 0.9 * w / w.sum(axis=1, keepdims=True) + 0.1 / K.shape[0]
        return w @ V, w

    check = CHECKS["attention"]
    result = check_in_process(check, attention)
    assert result.smallest is not None and result.mistake is None and result.hint == ""
    shown = {}
    exec(result.smallest.inputs, {"np": np}, shown)  # the input is printed as code that rebuilds it
    assert shown["Q"].shape[0] == 1 and shown["K"].shape[0] == 2 and shown["V"].shape[1] == 1  # 1 query, 2 keys
    assert "cut down to the smallest input" in str(result) and result.smallest.label in str(result)
    assert result.smallest.label in result._repr_html_() and result.message == result.smallest.message
    assert result.score == sum(c.passed for c in result.cases) and result.max_score == len(check.indices(False))


def test_a_right_function_calling_a_wrong_helper_is_told_so():
    path = CORPUS / "assumptions" / "padded_own_wrong_mask.py"
    wrong = load(path)
    result = check_in_process(CHECKS["padded_attention"], wrong.padded_attention)
    assert result.mistake == "helper_at_fault" and "your `padding_mask`" in result.hint
    right_helper = check_in_process(CHECKS["padding_mask"], wrong.padding_mask)
    assert not right_helper.passed  # the helper itself is what its own check fails

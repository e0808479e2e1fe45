"""Check for exercise 3: a softmax that is stable for large inputs.

The reference is the package's `softmax`. The mistakes recognised here come
back in the attention checks, which reuse the predictions below.
"""

from __future__ import annotations

import numpy as np

from ...core.softmax import softmax
from ..engine.cases import Case
from ..engine.check import Check, run_check
from ..engine.shrink import Sizes
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult


def naive_softmax(x, axis=-1):
    """softmax without subtracting the maximum: exp overflows for large x."""
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def global_softmax(x, axis=-1):
    """Normalised by the sum of every entry, not of each slice along `axis`."""
    e = np.exp(x - np.max(x))
    return e / e.sum()


def unnormalised(x, axis=-1):
    """The shifted exponentials, never divided by their sum."""
    return np.exp(x - np.max(x, axis=axis, keepdims=True))


NO_MAX_SUBTRACTION = Mistake(
    "no_max_subtraction",
    "exp of a large score overflows to inf (exp(1000) does not fit in a float), and inf/inf is nan. "
    "Subtract the largest score of each slice before exp: the factor exp(-max) cancels between "
    "numerator and denominator, so the weights are unchanged, and every exponent becomes <= 0.",
)
WRONG_AXIS = Mistake(
    "softmax_wrong_axis",
    "The weights sum to 1 along the wrong axis. Each query's weights over the keys must sum to 1: "
    "which axis of the scores runs over the keys?",
)
DOES_NOT_SUM_TO_1 = Mistake(
    "does_not_sum_to_1",
    "The weights do not sum to 1 along the softmax axis. After exp, divide each slice by its own sum.",
)


def sums_to_one(weights: np.ndarray, axis: int) -> bool:
    """True if every slice of `weights` along `axis` sums to 1 (within rounding)."""
    try:
        sums = weights.astype(np.float64).sum(axis=axis)
    except (np.exceptions.AxisError, ValueError):
        return False
    return bool(np.allclose(sums, 1.0, atol=1e-4))


def diagnose_weights(weights, axis: int, expected_shape: tuple) -> Mistake | None:
    """A wrong set of weights that sums to 1 the other way, or not at all."""
    if not isinstance(weights, np.ndarray) or weights.shape != expected_shape or weights.dtype.kind != "f":
        return None
    if not np.isfinite(weights).all():
        return None
    if sums_to_one(weights, axis):
        return None
    ndim = weights.ndim
    if any(sums_to_one(weights, a) for a in range(ndim) if a != axis % ndim):
        return WRONG_AXIS
    return DOES_NOT_SUM_TO_1


def _cases() -> list[Case]:
    rng = np.random.default_rng(3)
    return [
        Case("the bank bot's scaled scores", (np.array([0.5, 3.0, 0.2, 1.0]),)),
        Case("three rows of five scores", (rng.standard_normal((3, 5)) * 2,)),
        Case("along axis 0 (each column sums to 1)", (rng.standard_normal((4, 3)) * 2,), {"axis": 0}),
        Case("large scores", (np.array([1000.0, 1001.0, 1002.0]),)),
        Case("very negative scores", (np.array([[-1000.0, -1001.0, -1002.0], [-5.0, 0.0, 5.0]]),)),
        Case("masked entries (-inf)", (np.array([1.0, -np.inf, 2.0, -np.inf]),)),
        Case("a (2, 3, 4) array along axis 1", (rng.standard_normal((2, 3, 4)) * 2,), {"axis": 1}, hidden=True),
        Case("float32 large scores", ((rng.standard_normal((3, 4)) * 300).astype(np.float32),), hidden=True),
        Case("a single score", (np.array([5.0]),), hidden=True),
        Case("along axis -2", (rng.standard_normal((2, 4, 3)),), {"axis": -2}, hidden=True),
    ] + _assumption_cases_softmax()


def _assumption_cases_softmax() -> list[Case]:
    """Inputs that break what a softmax could silently assume."""
    return [
        # scores close together: only the max is safe to subtract; the min or the mean leaves exp(2000) or exp(1000).
        Case("scores 2000 apart", (np.array([-1000.0, 0.0, 1000.0]),)),
        # float64 kept: 1e39 is beyond float32's range; cast to float32, the shift gives inf - inf = nan.
        Case("float64 scores beyond float32's range", (np.array([1e39, 0.0, -1e39]),), hidden=True),
        # floats returned for integer input (an array made like x would round the weights to 0).
        Case("integer scores", (np.array([[1, 2, 3], [0, 0, 0]]),), hidden=True),
        # a softmax axis of size 1: every weight is 1.
        Case("a column of three scores, shape (3, 1)", (np.array([[2.0], [-7.0], [0.0]]),), hidden=True),
    ]


def _specific(case: Case, expected, got) -> Mistake | None:
    if isinstance(got, np.ndarray) and got.shape == expected.shape and not np.isfinite(got).all():
        with np.errstate(all="ignore"):  # claimed only where exp without the max trick fails in the same entries
            naive_fails = ~np.isfinite(naive_softmax(case.args[0], **case.kwargs))
        if np.array_equal(naive_fails, ~np.isfinite(got)):
            return NO_MAX_SUBTRACTION  # overflow (or 0/0) of exp on large scores
    return diagnose_weights(got, case.kwargs.get("axis", -1), expected.shape)


SOFTMAX = Check(
    name="softmax",
    function="softmax",
    params=("x",),
    reference=softmax,
    sizes=Sizes({"x": "*"}),
    make_cases=_cases,
    mistakes=(
        Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, naive_softmax),
        Mistake("ignores_axis",
                "The function ignores its `axis` argument. Here axis is not -1, so the slices that must "
                "sum to 1 run along another axis.",
                lambda x, axis=-1: softmax(x, axis=-1)),
        Mistake("normalised_over_everything",
                "You divided by the sum of ALL the entries, so the whole array sums to 1 but no single slice "
                "does. Sum along `axis` only, keeping that axis (keepdims=True) so that the division lines up.",
                global_softmax),
        Mistake(DOES_NOT_SUM_TO_1.id,
                "These are the exponentials (shifted by the max), not yet weights: divide each slice by its "
                "sum so that it sums to 1.",
                unnormalised),
    ),
    specific=_specific,
    error_hint=lambda case, error: (
        "The sum along an axis has one axis fewer than x, so it no longer lines up with x. "
        "Keep the axis (keepdims=True) when you take the max and the sum."
        if "broadcast" in error else ""
    ),
)


def check_softmax(softmax, *, hidden: bool = False) -> CheckResult:
    """Check `softmax(x, axis=-1)`: weights of the shape of x, each slice along `axis` sums to 1.

    Tries large and very negative scores (the max trick), -inf entries (masked,
    weight exactly 0) and other axes. Exercise 3; chapter "A stable softmax"
    (book/stable_softmax).
    """
    return run_check(SOFTMAX, softmax, hidden=hidden)

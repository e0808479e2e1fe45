"""Check for exercise 3: a softmax that is stable for large inputs.

The reference is the package's `softmax`. The mistakes recognised here come
back in the attention checks, which reuse the predictions below.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ....core.softmax import softmax
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_overflows, nothing_to_attend, slices_far_apart
from ..engine.mistakes import Lead, Mistake, code_uses_infinity
from ..engine.results import CheckResult


def naive_softmax(x, axis=-1):
    """softmax without subtracting the maximum: exp overflows for large x."""
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def global_softmax(x, axis=-1):
    """Normalised by the sum of every entry, not of each slice along `axis`."""
    e = np.exp(x - np.max(x))
    return e / e.sum()


def shifted_softmax(x, axis=-1):
    """The max trick with nothing more: a slice that is entirely -inf gives -inf - (-inf) = nan."""
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def global_max_softmax(x, axis=-1):
    """The max of the whole array subtracted, then each slice normalised: far-below slices underflow to 0/0."""
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)


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


INF_MINUS_INF = Lead(
    "inf_minus_inf",
    "If the slice's max was subtracted, that max is -inf, and -inf - (-inf) is nan: where a slice's max is -inf, "
    "subtract 0 instead.",
    code_uses_infinity,
)
ZERO_SUM = Lead(
    "zero_sum",
    "If its exponentials were divided by their sum, that sum is 0, and 0/0 is nan: where the sum is 0, divide by 1.",
    lambda case, code: code.uses("sum", "nansum", "einsum", "add"),
)
NAN_FOR_EMPTY_ROW = Mistake(
    "nan_for_empty_row",
    "A slice whose scores are all -inf (a query with nothing to attend to) came back as nan. The course's "
    "convention gives such a slice weights 0.",
    leads=(INF_MINUS_INF, ZERO_SUM),
)
GLOBAL_MAX = Mistake(
    "global_max",
    "You subtracted the largest score of the whole array, not of each slice. A slice whose scores are "
    "all far below that maximum underflows: exp gives 0 for every entry, and 0/0 is nan. Take the max "
    "along `axis`, keeping that axis (keepdims=True), so every slice is shifted by its own maximum.",
)


def sums_to_one(weights: np.ndarray, axis: int) -> bool:
    """True if every slice of `weights` along `axis` sums to 1 (within rounding)."""
    try:
        sums = weights.astype(np.float64).sum(axis=axis)
    except (np.exceptions.AxisError, ValueError):
        return False
    return bool(np.allclose(sums, 1.0, atol=1e-4))


def wrong_sums(weights: np.ndarray, expected: np.ndarray, axis: int) -> np.ndarray:
    """Where the slices of `weights` along `axis` do not sum to what the expected slices sum to (1, or 0 for a
    slice with nothing to attend to): a boolean array of the slices."""
    with np.errstate(all="ignore"):
        got = weights.astype(np.float64).sum(axis=axis)
        right = expected.astype(np.float64).sum(axis=axis)
    return ~np.isclose(got, right, atol=1e-4)


def diagnose_weights(weights, axis: int, expected, masked: bool = False) -> Mistake | None:
    """Weights that sum to 1 the other way, or whose slices do not sum to what the expected ones do.

    A slice the expected weights leave all 0 (nothing to attend to) is never called wrong for summing to 0.
    `masked`: the function has a mask (a lead about what it hides may apply).
    """
    if (not isinstance(weights, np.ndarray) or not isinstance(expected, np.ndarray)
            or weights.shape != expected.shape or weights.dtype.kind != "f"):
        return None
    if not np.isfinite(weights).all():
        return None
    bad = wrong_sums(weights, expected, axis)
    if not bad.any():
        return None
    ndim = weights.ndim
    if all(np.isclose(expected.astype(np.float64).sum(axis=axis), 1.0, atol=1e-4).ravel()) and any(
            sums_to_one(weights, a) for a in range(ndim) if a != axis % ndim):
        return WRONG_AXIS
    sums = weights.astype(np.float64).sum(axis=axis)
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    total = float(sums[first])
    meant = float(expected.astype(np.float64).sum(axis=axis)[first])
    where = f"slice {first[0] if len(first) == 1 else first}" if first else "the slice"
    text = f"The weights do not sum to {meant:.4g} along the softmax axis: {where} sums to {total:.4g}."
    leads = ()
    if meant == 0:  # nothing to attend to: every weight 0, by the course's convention
        text += (" That slice has nothing to attend to (every score -inf, or every key hidden): its weights are all 0, "
                 "not spread over its entries.")
    elif total == 0 and masked:
        leads = (Lead("all_hidden", "Every weight of that slice is 0: a slice may be all 0 only when its mask hides "
                      "every key; check what your mask, or a test such as `scores == 0`, hides.",
                      lambda case, code: True),)
    elif total != 0:
        leads = (Lead("not_divided", "If the exponentials were not divided by their own slice's sum, that is the "
                      "difference.", lambda case, code: True),)
    return Mistake(DOES_NOT_SUM_TO_1.id, text, leads=leads, facts=(("slice", first), ("sum", total), ("axis", axis)))


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (stability both ways, -inf, any axis, float32 kept, float64's digits and
    range kept, integers in, an axis of size 1), then hidden inputs that vary the values."""
    rng = rngs(3)
    return [
        Case("the bank bot's scaled scores", (np.array([0.5, 3.0, 0.2, 1.0]),)),
        Case("three rows of five scores", (rng.standard_normal((3, 5)) * 2,)),
        Case("along axis 0 (each column sums to 1)", (rng.standard_normal((4, 3)) * 2,), {"axis": 0}),
        Case("large scores", (np.array([1000.0, 1001.0, 1002.0]),)),
        Case("scores 2000 apart", (np.array([-1000.0, 0.0, 1000.0]),)),
        Case("very negative scores", (np.array([[-1000.0, -1001.0, -1002.0], [-5.0, 0.0, 5.0]]),)),
        Case("masked entries (-inf)", (np.array([1.0, -np.inf, 2.0, -np.inf]),)),
        Case("a row with nothing to attend to (all -inf)", (np.array([[0.5, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]]),)),
        Case("a (2, 3, 4) array along axis 1", (rng.standard_normal((2, 3, 4)) * 2,), {"axis": 1}),
        Case("a (2, 4, 3) array along axis -2", (rng.standard_normal((2, 4, 3)),), {"axis": -2}),
        Case("float32 large scores", ((rng.standard_normal((2, 3)) * 300).astype(np.float32),)),
        _float32_close_large(rngs),
        Case("a single score", (np.array([5.0]),)),
        Case("three rows by six scores", (rng.standard_normal((3, 6)) * 3,), hidden=True),
        Case("a (3, 2, 4) array along axis 1", (rng.standard_normal((3, 2, 4)) * 2,), {"axis": 1}, hidden=True),
        Case("float32 large scores, four rows", ((rng.standard_normal((3, 4)) * 300).astype(np.float32),), hidden=True),
        Case("masked entries (-inf) in two rows", (np.where(rng.random((2, 5)) < 0.4, -np.inf, rng.standard_normal((2, 5))),),
             hidden=True),
        Case("large scores, another row", (1000 * rng.uniform(1, 3) + rng.standard_normal(4),), hidden=True),
    ] + _assumption_cases_softmax(rngs)


def _float32_close_large(rngs: Rngs) -> Case:
    """float32 scores far above exp's float32 limit (about 88) and a few units apart, so that every row has several
    weights that matter: a code that clips or saturates large float32 scores gives them equal weights. (Drawn from
    its own generator, so that the other inputs keep their values.)"""
    rng = rngs(32)
    x = rng.uniform(200, 600, size=(2, 1)) + rng.standard_normal((2, 4)) * 2
    return Case("float32 large scores a few units apart", (x.astype(np.float32),))


def _assumption_cases_softmax(rngs: Rngs) -> list[Case]:
    """Inputs that break what a softmax could silently assume."""
    rng = rngs(31)
    return [
        # float64 kept: 1e39 is beyond float32's range; cast to float32, the shift gives inf - inf = nan.
        Case("float64 scores beyond float32's range", (np.array([1.0, 0.0, -1.0]) * rng.uniform(1, 9, 3) * 1e39,)),
        # float64's digits kept: weights that differ in the 9th digit, which float32 (7 digits) makes equal.
        Case("float64 precision: scores 4e-8 apart", (np.array([0.5, 0.5 + 4e-8, 0.5 - 4e-8]),)),
        # floats returned for integer input (an array made like x would round the weights to 0).
        Case("integer scores", (np.array([[1, 2, 3], [0, -2, 2]]),)),
        # a softmax axis of size 1: every weight is 1.
        Case("a column of three scores, shape (3, 1)", (np.array([[2.0], [-1.0], [0.5]]),)),
        Case("float64 scores beyond float32's range, another row", (np.array([-1.0, 1.0, 0.0]) * rng.uniform(1, 9, 3) * 1e39,),
             hidden=True),
        Case("float64 precision: scores 1e-8 apart", (rng.uniform(-1, 1) + np.array([0.0, -1e-8, 1e-8, 2e-8]),), hidden=True),
        Case("integer scores, three rows", (rng.integers(-3, 4, size=(3, 3)),), hidden=True),
        Case("a column of four scores, shape (4, 1)", (rng.standard_normal((4, 1)) * 3,), hidden=True),
    ]


def _specific(case: Case, expected, got, code: Code) -> Mistake | None:
    axis = case.kwargs.get("axis", -1)
    if isinstance(got, np.ndarray) and got.shape == expected.shape and got.dtype.kind == "f" and not np.isfinite(got).all():
        return not_finite_softmax(case.args[0], got, axis)
    return diagnose_weights(got, axis, expected)


def not_finite_softmax(scores: np.ndarray, got: np.ndarray, axis: int = -1, item: str | None = None) -> Mistake:
    """What nan or inf in a softmax's result (or in weights made from `scores`) may mean: what was observed, then
    only the possibilities these scores allow (overflow needs a score above exp's limit, a slice far below the
    largest score needs such a slice, -inf needs -inf). `item`: the name of the item of a returned tuple that
    `got` is (the weights of (output, weights)), so that its index is read in the right array."""
    x = np.asarray(scores)
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    top, bottom = (float(finite.max()), float(finite.min())) if finite.size else (0.0, 0.0)
    where = tuple(int(i) for i in np.argwhere(~np.isfinite(got))[0])
    limit = float(np.log(np.finfo(x.dtype if x.dtype.kind == "f" else np.float64).max))  # 709.8 for float64
    tiny = -float(np.log(np.finfo(x.dtype if x.dtype.kind == "f" else np.float64).smallest_subnormal))  # 744 for float64
    with np.errstate(all="ignore"):
        slice_max = np.max(np.where(np.isfinite(x), x, -np.inf), axis=axis)  # -inf for a slice with no finite score
        empty = bool(np.any(np.all(np.isneginf(x), axis=axis))) if x.dtype.kind == "f" else False
    far = bool(np.any(np.isfinite(slice_max) & (slice_max < top - tiny)))
    leads = (
        Lead("overflow", f"If exp was taken of scores above about {limit:.0f} (without subtracting each slice's max), "
             "it overflowed to inf, and inf/inf is nan.", lambda case, code, t=top: t > limit),
        Lead("global_max", "If a max was subtracted but not each slice's own, a slice far below it underflowed to 0 "
             "for every entry, and 0/0 is nan.", lambda case, code, f=far: f),
        Lead("inf_minus_inf", "If a slice is all -inf and its max was subtracted, -inf - (-inf) is nan.",
             lambda case, code, e=empty: e and code_uses_infinity(case, code)),
        Lead("zero_sum", "If a slice's exponentials are all 0 (all hidden) and were divided by their sum, 0/0 is nan.",
             lambda case, code, e=empty: e and code.uses("sum", "nansum", "einsum")),
    )
    text = where[0] if len(where) == 1 else where
    what = "The result has" if item is None else f"`{item}` has"
    return Mistake(
        "not_finite",
        f"{what} nan or inf (the first at index {text}); the finite scores of this input run from "
        f"{bottom:.4g} to {top:.4g}.", leads=leads,
        facts=(("index", where), ("scores", (bottom, top))) + ((("item", item),) if item is not None else ()))


def _error_hint(case: Case, error: str, code: Code) -> str:
    line = error_line(error)
    if "broadcast" in error and ("max(" in line or "sum(" in line) and "keepdims" not in line:
        return ("The line that failed takes a max or a sum without keepdims=True: the result has one axis "
                "fewer than x, so it no longer lines up with x. Keep the axis when you reduce.")
    return ""


def _softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(x, axis): what `Check.scores` reads to tell a saturated input."""
    return np.asarray(case.args[0]), case.kwargs.get("axis", -1)


SOFTMAX = Check(
    name="softmax",
    function="softmax",
    params=("x",),
    reference=softmax,
    scores=_softmax_scores,
    sizes=Sizes({"x": "*"}),
    make_cases=_cases,
    mistakes=(
        dataclasses.replace(NAN_FOR_EMPTY_ROW, predict=shifted_softmax, premise=nothing_to_attend(_softmax_scores)),
        Mistake(GLOBAL_MAX.id, GLOBAL_MAX.hint, global_max_softmax, premise=slices_far_apart(_softmax_scores)),
        Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, naive_softmax, premise=exp_overflows(_softmax_scores)),
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
        Mistake("subtracted_min",
                "The smallest score of each slice was subtracted, not the largest: every exponent is then >= 0, "
                "and exp overflows as soon as the scores of a slice lie more than about 709 apart. Subtract the "
                "largest, so that every exponent is <= 0.",
                lambda x, axis=-1: (lambda e: e / e.sum(axis=axis, keepdims=True))(np.exp(x - np.min(x, axis=axis, keepdims=True)))),
        Mistake("sign_flipped",
                "The largest score got the smallest weight: these are the weights of -x. The max trick "
                "computes exp(x - max), not exp(max - x).",
                lambda x, axis=-1: softmax(-np.asarray(x), axis=axis)),
        Mistake("base_2",
                "These are the weights of 2^x, not of e^x: the softmax raises e to the scores (np.exp). "
                "(Kernels that use exp2 multiply the scores by log2(e) first, which gives e^x again.)",
                lambda x, axis=-1: softmax(np.asarray(x) * np.log(2.0), axis=axis)),
        Mistake("log_weights",
                "These are the logarithms of the weights (x minus the log of the sum of exponentials), so "
                "they are all <= 0. Return the weights themselves: exp of that, which sums to 1.",
                lambda x, axis=-1: np.log(softmax(x, axis=axis))),
    ),
    specific=_specific,
    error_hint=_error_hint,
)


def check_softmax(softmax, *, hidden: bool = False) -> CheckResult:
    """Check `softmax(x, axis=-1)`: weights of the shape of x, each slice along `axis` sums to 1.

    Tries large and very negative scores (the max trick), -inf entries (masked,
    weight exactly 0) and other axes. Exercise 3; chapter "A stable softmax"
    (book/stable_softmax).
    """
    return check_in_process(SOFTMAX, softmax, hidden=hidden)


CHECKS = {c.name: c for c in (SOFTMAX,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""

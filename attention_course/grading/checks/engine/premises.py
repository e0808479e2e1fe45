"""What a hint states about its input, as conditions on the input's numbers (`mistakes.Premise`).

A hint such as "exp of a large score overflows to inf" is true only of an
input with a score above exp's limit; the same wrong numbers (a nan row) can
come from an input with small scores and another cause. Each builder here
takes a function `scores_of(case) -> (scores, axis)` (a check's `scores`: the
scores whose softmax is taken, -inf where a mask hides, float64) and returns
the premise, checked on the case's own dtype: float32 overflows above about
88.7, float64 above about 709.8. `PREMISES` (tests/support/audit.py) checks each again, by id,
with evidence of its own.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .cases import Case
from .mistakes import Premise

ScoresOf = Callable[[Case], tuple]
"""case -> (scores, axis): the scores whose softmax the function takes, -inf where hidden."""


def exp_limits(case: Case) -> tuple[float, float]:
    """(log of the largest number, -log of the smallest) of the case's float dtype: above the first exp overflows,
    below minus the second it underflows to 0."""
    dtype = next((a.dtype for a in case.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"), np.float64)
    info = np.finfo(dtype)
    return float(np.log(info.max)), -float(np.log(info.smallest_subnormal))


def _finite(scores: np.ndarray) -> np.ndarray:
    return scores[np.isfinite(scores)]


def exp_overflows(scores_of: ScoresOf) -> Premise:
    """Some score lies above exp's limit: exp of it overflows to inf."""
    def holds(case: Case) -> bool:
        scores = np.asarray(scores_of(case)[0], dtype=np.float64)
        finite = _finite(scores)
        return bool(finite.size) and float(finite.max()) > exp_limits(case)[0]
    return Premise("scores_above_exp_limit", holds)


def nothing_to_attend(scores_of: ScoresOf) -> Premise:
    """Some slice along the softmax axis has every score -inf: a query with nothing to attend to."""
    def holds(case: Case) -> bool:
        scores, axis = scores_of(case)
        scores = np.asarray(scores, dtype=np.float64)
        return bool(scores.size) and bool(np.any(np.all(np.isneginf(scores), axis=axis)))
    return Premise("slice_with_nothing_to_attend", holds)


def slices_far_apart(scores_of: ScoresOf) -> Premise:
    """The largest score of some slice lies so far below the largest score of all that exp underflows to 0 for
    every score of that slice, shifted by it."""
    def holds(case: Case) -> bool:
        scores, axis = scores_of(case)
        scores = np.asarray(scores, dtype=np.float64)
        with np.errstate(all="ignore"):
            tops = np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=axis)
        finite = _finite(tops)
        return bool(finite.size) and bool(np.any(finite < finite.max() - exp_limits(case)[1]))
    return Premise("slices_far_apart", holds)


def line_below_underflow(scores_of: ScoresOf) -> Premise:
    """Every score of some slice lies below exp's underflow limit (about -745 in float64): exp of each is 0."""
    def holds(case: Case) -> bool:
        scores, axis = scores_of(case)
        scores = np.asarray(scores, dtype=np.float64)
        with np.errstate(all="ignore"):
            tops = np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=axis)
        finite = _finite(tops)
        return bool(finite.size) and bool(np.any(finite < -exp_limits(case)[1]))
    return Premise("slice_below_underflow", holds)


def hidden_key_far_above(raw_and_visible: Callable[[Case], tuple]) -> Premise:
    """Some query has a hidden key whose score lies above every score it may see by more than exp's limit (or, for
    a query that sees no key, a hidden score above exp's limit itself): exp of it, unshifted or shifted by the
    visible maximum, overflows, and shifted by it the visible keys underflow.

    `raw_and_visible(case) -> (scores, visible)`: the scores before any mask (..., n_q, n_k), and a boolean array
    of their shape, True where the query may see the key.
    """
    def holds(case: Case) -> bool:
        scores, visible = raw_and_visible(case)
        scores = np.asarray(scores, dtype=np.float64)
        visible = np.broadcast_to(np.asarray(visible, dtype=bool), scores.shape)
        hidden_top = np.max(np.where(visible, -np.inf, scores), axis=-1)
        seen_top = np.max(np.where(visible, scores, -np.inf), axis=-1)
        seen_top = np.where(np.isfinite(seen_top), seen_top, 0.0)  # a query that sees nothing: exp of the score
        return bool(np.any(hidden_top - seen_top > exp_limits(case)[0]))
    return Premise("hidden_key_far_above", holds)

"""Auditing feedback: every claim a check makes about a submission must hold on that submission.

The tests' own (not shipped in the package): the corpus tests audit every hint it gives.

`audit(check, fn)` grades `fn` (hidden inputs too), then calls it again on
every input and verifies what the feedback said about each failing one:

- the message, the hint and the input shown come from the same failure (the
  smaller failing input, when one is shown first), and a visible failing input
  is shown before a hidden one;
- a helper at fault: the function, given the course's version of that helper,
  passes every input it failed;
- a mistake recognised by prediction: one of that mistake's predictions
  equals what the function returned on that input, and what its hint states
  about the input (its premise: a score above exp's limit, a hidden key far
  above the visible ones, a query with nothing to attend to) holds on the
  input's numbers (`PREMISES`);
- a hint that states what was observed (a symptom: nan at an index, a slice
  and its sum, a factor, the rows that are right, a measured number, which
  inputs passed, two seeds that gave one number): each fact it states
  (`CaseResult.facts`) is checked on the result by `EVIDENCE`, and an
  observation is made again and must say the same;
- every possibility a hint offers (`CaseResult.leads`): `LEADS` checks, from
  the input and from the function's own code read here (`code.code_of`),
  that it can apply to this function and this input, and the hint is
  composed again from that code and must read the same;
- a hint for an exception quotes, or names an operation of, the student's
  own line only if the traceback shows that line (and names np.dot only if the
  code uses it);
- a note on a right answer (a step carried forward from a wrong one) is what
  the check's `pass_note` says of the value called again;
- every row, sum, index, factor, offset or count of digits that a message or a
  hint states about the result, whatever diagnosis wrote it, is read back from
  its words and recomputed on the call made again (`claims`): a row named
  right must be right and must not lie only on saturated softmax lines.

A claim that cannot be verified is itself reported: every hint must be backed.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from attention_course.decoder.attention import layer_mask
from attention_course.grading.checks.engine import results
from attention_course.grading.checks.engine.calls import CallOutcome, Observation, error_line, observe_call
from attention_course.grading.checks.engine.cases import Case
from attention_course.grading.checks.engine.check import Check, as_expected, case_verdict, graded_part, prediction_matches
from attention_course.grading.checks.engine.code import Code, code_of
from attention_course.grading.checks.engine.mistakes import (
    Mistake, compose, diagnose, dtype_changed, modified_arguments, precision_lost, same_values, seen_difference,
)
from attention_course.grading.checks.engine.differences import NOT_SATURATED, Saturation, helper_at_fault, saturated_lines
from attention_course.grading.checks.engine.run import check_in_process

from . import claims


@dataclass(frozen=True)
class Seen:
    """One failing input as the audit sees it: what the feedback said, and the function called again on it."""

    check: Check
    index: int
    """The input's position in `check.cases`."""
    case: Case
    expected: object
    obs: Observation
    """The function's call on this input, made again by the audit."""
    result: results.CaseResult
    """What the feedback said about this input."""
    run: tuple
    """(case, result, observation made again) for every input of the run."""
    code: Code
    """The words of the function's code, read by the audit."""

    @property
    def value(self):
        """What came back, in the part the check grades."""
        return graded_part(self.check, self.index, as_expected(self.expected, self.obs.value))

    @property
    def facts(self) -> dict:
        return dict(self.result.facts)


Evidence = Callable[[Seen], bool]
"""Does the claim of a hint (its mistake id, or one of its leads) hold on this input?"""


def _float(value) -> float | None:
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    return None


def _item(seen: Seen, value):
    """The array a fact is about: the item it names (`item` fact, or the weights of (output, weights)), else all."""
    names = seen.check.output_names or ()
    name = seen.facts.get("item")
    if isinstance(value, tuple) and name in names:
        return value[names.index(name)]
    return value


def _weights(value):
    """The weights of a result: the array itself, or the second item of (output, weights)."""
    if isinstance(value, tuple) and len(value) == 2:
        value = value[1]
    return value if isinstance(value, np.ndarray) and value.dtype.kind == "f" else None


def _sums_to_one(weights: np.ndarray, axis: int) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.allclose(weights.astype(np.float64).sum(axis=axis), 1.0, atol=1e-4))


def _non_finite(value) -> bool:
    if isinstance(value, tuple):
        return any(_non_finite(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all()


def _tiles(case: Case) -> tuple[bool, bool]:
    Q, K, _, b = case.args[:4]
    return K.shape[0] > b, Q.shape[0] % b == 0 and K.shape[0] % b == 0


def _rises(case: Case) -> bool:
    """Some query's running max rises after the first key tile of a tiled attention's input."""
    Q, K, _, b = case.args[:4]
    scores = np.asarray(Q, dtype=np.float64) @ np.asarray(K, dtype=np.float64).T  # (n_q, n_k), unscaled: same order
    return bool(np.any(scores[:, b:].max(axis=1, initial=-np.inf) > scores[:, :b].max(axis=1)))


def _arg(seen: Seen, name: str):
    params = seen.check.params
    return seen.case.args[params.index(name)] if name in params and params.index(name) < len(seen.case.args) else None


def _scores(seen: Seen) -> np.ndarray | None:
    """The scores whose softmax the function takes: x itself, or Q K^T / sqrt(d_k), -inf where a mask hides."""
    x = _arg(seen, "x")
    if x is not None:
        return np.asarray(x, dtype=np.float64)
    Q, K = _arg(seen, "Q"), _arg(seen, "K")
    if Q is None or K is None:
        return None
    Q, K = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    mask, lengths = _arg(seen, "mask"), _arg(seen, "lengths")
    if lengths is not None:
        mask = np.arange(K.shape[-2])[None, None, :] < np.asarray(lengths)[:, None, None]
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return scores


def _nothing_to_attend(seen: Seen) -> bool:
    """The input has a slice with nothing to attend to: all -inf scores, a mask row all False, an lse of -inf."""
    scores = _scores(seen)
    axis = seen.case.kwargs.get("axis", -1)
    if scores is not None and scores.size and bool(np.any(np.all(np.isneginf(scores), axis=axis))):
        return True
    lse = _arg(seen, "lse")
    return lse is not None and bool(np.any(np.asarray(lse) == -np.inf))


def _infinity(seen: Seen) -> bool:
    return seen.code.infinity or any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isinf(a).any()
                                     for a in seen.case.args)


def _dtype_limits(seen: Seen) -> tuple[float, float]:
    """(log of the largest number, -log of the smallest) of the input's float dtype: where exp overflows, underflows."""
    dtype = next((a.dtype for a in seen.case.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"), np.float64)
    info = np.finfo(dtype)
    return float(np.log(info.max)), -float(np.log(info.smallest_subnormal))


def _overflow(seen: Seen) -> bool:
    scores = _scores(seen)
    finite = scores[np.isfinite(scores)] if scores is not None else np.array([])
    return bool(finite.size) and float(finite.max()) > _dtype_limits(seen)[0]


def _slices_far_apart(seen: Seen) -> bool:
    scores = _scores(seen)
    if scores is None:
        return False
    axis = seen.case.kwargs.get("axis", -1)
    with np.errstate(all="ignore"):
        tops = np.max(np.where(np.isfinite(scores), scores, -np.inf), axis=axis)
    finite = tops[np.isfinite(tops)]
    return bool(finite.size) and bool(np.any(finite < finite.max() - _dtype_limits(seen)[1]))


def _row_scores(seen: Seen) -> np.ndarray:
    return _scores(seen)[seen.facts["row"]]


def _tile_far_below(seen: Seen) -> bool:
    scores, row, b = _scores(seen), seen.facts["row"], _arg(seen, "block_size")
    tile = scores[row // b * b: row // b * b + b]
    return float(scores[row].max()) < float(tile.max()) - 745


def _max_rises(seen: Seen) -> bool:
    scores, b = _scores(seen), _arg(seen, "block_size")
    return bool(np.any(scores[:, b:].max(axis=1, initial=-np.inf) > scores[:, :b].max(axis=1)))


def _standard_error(seen: Seen, band: float) -> bool:
    value = _float(seen.obs.value)
    d_k, n = seen.case.args[0], seen.case.kwargs.get("n_samples", 10_000)
    return value is not None and abs(value - np.sqrt(d_k / n)) <= band * np.sqrt(d_k / n)


LEADS: dict[str, Evidence] = {
    # the code or the input holds infinity, and a slice has nothing to attend to
    "inf_minus_inf": lambda s: _infinity(s) and _nothing_to_attend(s),
    "zero_sum": lambda s: s.code.uses("sum", "nansum", "einsum", "add") and _nothing_to_attend(s),
    "mask_after_exp": _nothing_to_attend,
    "float32_in_code": lambda s: s.code.float32,
    "array_created": lambda s: s.code.uses("zeros", "full", "empty", "ones", "array", "zeros_like", "full_like",
                                           "empty_like", "ones_like", "asarray", "eye", "tri", "arange"),
    "numpy_sqrt": lambda s: s.case.float32 and s.code.uses("sqrt"),
    "cast": lambda s: s.code.uses("astype"),
    "overflow": lambda s: _overflow(s) if "row" not in s.facts else float(_row_scores(s).max()) > 709,
    "global_max": _slices_far_apart,
    "max_at_zero": lambda s: float(_row_scores(s).max()) < -745,
    "finite_start": lambda s: s.code.known and not s.code.infinity,
    "finite_fill": lambda s: s.code.known and not s.code.infinity,
    "uniform_row": lambda s: _nothing_to_attend(s) and not (s.code.known and not s.code.infinity),
    "max_held_above": lambda s: not (s.code.known and not s.code.infinity),
    "tile_max": _tile_far_below,
    "no_rescale": _max_rises,
    "tiles_skipped": lambda s: True,
    "short_tile": lambda s: True,
    "all_hidden": lambda s: (any(p in s.check.params for p in ("mask", "lengths"))
                             and s.facts.get("sum") == 0 and _weights_sum_is(s, 0.0) and _expected_sum_is(s, 1.0)),
    "not_divided": lambda s: s.facts.get("sum", 0) != 0 and _expected_sum_is(s, 1.0),
    "mean": lambda s: not _standard_error(s, 0.02),
    "standard_error": lambda s: _standard_error(s, 0.1),
    "global_generator": lambda s: True,
}
"""Lead id -> does the possibility it offers apply to this input and this code?"""


def _weights_sum_is(seen: Seen, total: float) -> bool:
    weights = _weights(seen.value)
    if weights is None or "slice" not in seen.facts:
        return False
    with np.errstate(all="ignore"):
        sums = weights.astype(np.float64).sum(axis=seen.facts.get("axis", -1))
    return bool(np.isclose(sums[tuple(seen.facts["slice"])], total, atol=1e-4))


def _expected_sum_is(seen: Seen, total: float) -> bool:
    expected = _weights(seen.expected)
    if expected is None or "slice" not in seen.facts:
        return False
    with np.errstate(all="ignore"):
        sums = expected.astype(np.float64).sum(axis=seen.facts.get("axis", -1))
    return bool(np.isclose(sums[tuple(seen.facts["slice"])], total, atol=1e-4))


def _sum_claim(seen: Seen) -> bool:
    """A slice named, and its sum: the weights' slice sums to that, the expected slice to something else."""
    if "slice" not in seen.facts:
        weights = _weights(seen.value)
        return weights is not None and not _sums_to_one(weights, seen.case.kwargs.get("axis", -1))
    expected = _weights(seen.expected)
    if expected is None or not _weights_sum_is(seen, seen.facts["sum"]):
        return False
    with np.errstate(all="ignore"):
        meant = expected.astype(np.float64).sum(axis=seen.facts.get("axis", -1))[tuple(seen.facts["slice"])]
    return not np.isclose(meant, seen.facts["sum"], atol=1e-4)


def _not_finite_claim(seen: Seen) -> bool:
    value, expected = _item(seen, seen.value), _item(seen, seen.expected)
    if "index" not in seen.facts and "row" not in seen.facts:
        return _non_finite(seen.value) and not _non_finite(seen.expected)
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        return False
    if "row" in seen.facts:
        row = seen.facts["row"]
        if not (~np.isfinite(value[row])).any():
            return False
        scores = _row_scores(seen)
        return np.allclose(seen.facts["scores"], (scores.min(), scores.max()))
    index = tuple(seen.facts["index"])
    return not np.isfinite(value[index]) and (not isinstance(expected, np.ndarray) or np.isfinite(expected[index]))


def _item_dtypes(expected, got) -> list[tuple[np.dtype, np.dtype]]:
    """(expected dtype, returned dtype) of each item of a tuple result (of the result itself otherwise)."""
    pairs = zip(expected, got) if isinstance(expected, tuple) and isinstance(got, tuple) else [(expected, got)]
    return [(e.dtype, g.dtype) for e, g in pairs if isinstance(e, np.ndarray) and isinstance(g, np.ndarray)]


def _spread(test: Callable[[float, int], bool]) -> Evidence:
    def holds(seen: Seen) -> bool:
        value = _float(seen.obs.value)
        return value is not None and test(value, seen.case.args[0])
    return holds


def _pair(relation: str) -> Evidence:
    """Two inputs of the run that the same function answered with one number (or two), as the hint says."""
    def arguments(case: Case):
        return case.args[0], case.kwargs.get("n_samples", 10_000), case.kwargs.get("seed", 0)

    def holds(seen: Seen) -> bool:
        mine, value = arguments(seen.case), _float(seen.obs.value)
        for case, _, obs in seen.run:
            other, w = arguments(case), _float(obs.value)
            if case is seen.case or w is None or value is None:
                continue
            if relation == "same" and other == mine and w != value:
                return True
            if relation == "seed" and other[:2] == mine[:2] and other[2] != mine[2] and w == value:
                return True
            if relation == "samples" and (other[0], other[2]) == (mine[0], mine[2]) and other[1] != mine[1] and w == value:
                return True
        return False
    return holds


def _hidden_scores_above(seen: Seen) -> bool:
    """Some hidden key scores above every key its query may see by more than exp's limit (above the limit itself,
    for a query that sees none)."""
    Q, K = (np.asarray(_arg(seen, n), dtype=np.float64) for n in ("Q", "K"))
    raw = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])  # (..., n_q, n_k)
    seen_scores = _scores(seen)  # -inf where hidden
    hidden = np.isneginf(seen_scores) & np.isfinite(raw)
    with np.errstate(all="ignore"):
        top_hidden = np.max(np.where(hidden, raw, -np.inf), axis=-1)
        top_seen = np.max(seen_scores, axis=-1)
    return bool(np.any(top_hidden - np.where(np.isfinite(top_seen), top_seen, 0.0) > _dtype_limits(seen)[0]))


def _above_lse(seen: Seen) -> bool:
    """A hidden key of the backward pass's input scores above its query's lse by more than exp's limit."""
    Q, K, lse, mask = (_arg(seen, n) for n in ("Q", "K", "lse", "mask"))
    if mask is None:
        return False
    Q, K = np.asarray(Q, dtype=np.float64), np.asarray(K, dtype=np.float64)
    with np.errstate(all="ignore"):
        gap = Q @ K.T / np.sqrt(Q.shape[-1]) - np.asarray(lse, dtype=np.float64)[:, None]  # (n_q, n_k)
    finite = np.isfinite(np.asarray(lse, dtype=np.float64))[:, None]  # an lse of -inf: nothing to attend to
    return bool(np.any(gap[~np.asarray(mask, dtype=bool) & finite] > _dtype_limits(seen)[0]))


def _below_underflow(seen: Seen) -> bool:
    """Every score of some query lies below exp's underflow limit, and the function gave nan or inf for it."""
    scores = _scores(seen)
    tops = np.max(scores, axis=-1)
    value = _weights(seen.value) if isinstance(seen.value, tuple) else seen.value
    return bool(np.any(tops < -_dtype_limits(seen)[1])) and _non_finite(value)


def _far_below_tile(seen: Seen) -> bool:
    """A query's scores lie more than exp's underflow limit below its query tile's largest, and the function gave
    nan for some query."""
    scores, b = _scores(seen), _arg(seen, "block_size")
    tops = scores.max(axis=1)
    tiles = np.array([tops[i // b * b: i // b * b + b].max() for i in range(len(tops))])
    return bool(np.any(tops < tiles - _dtype_limits(seen)[1])) and _non_finite(seen.value)


def _sink_above(seen: Seen) -> bool:
    sinks = _arg(seen, "sinks")
    return sinks is not None and bool(np.any(np.asarray(sinks, dtype=np.float64) > _dtype_limits(seen)[0]))


def _key_scores_overflow(seen: Seen) -> bool:
    """A score of the keys (the sink aside) above exp's limit."""
    q, k, window = (_arg(seen, n) for n in ("q", "k", "window"))
    if q is None or k is None:
        return _overflow(seen)
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    keys = np.repeat(k, q.shape[0] // k.shape[0], axis=0)  # (h_q, n_k, d)
    scores = q @ np.swapaxes(keys, -1, -2) / np.sqrt(q.shape[-1])  # (h_q, n_q, n_k)
    allowed = layer_mask(scores.shape[-2], scores.shape[-1], window)  # (n_q, n_k): the decoder's own mask
    return bool(np.any(np.where(allowed, scores, -np.inf) > _dtype_limits(seen)[0]))


def _checks_scores_overflow(seen: Seen) -> bool:
    """For an input whose scores the audit does not rebuild (rotated, a cache): the check's own scores."""
    if seen.check.scores is None:
        return False
    scores = np.asarray(seen.check.scores(seen.case)[0], dtype=np.float64)
    finite = scores[np.isfinite(scores)]
    return bool(finite.size) and float(finite.max()) > _dtype_limits(seen)[0]


PREMISES: dict[str, Evidence] = {
    "scores_above_exp_limit": lambda s: _key_scores_overflow(s) if _arg(s, "sinks") is not None else _overflow(s)
    if _scores(s) is not None else _checks_scores_overflow(s),
    "slice_with_nothing_to_attend": _nothing_to_attend,
    "slices_far_apart": _slices_far_apart,
    "slice_below_underflow": _below_underflow,
    "hidden_key_far_above": _hidden_scores_above,
    "hidden_key_far_above_lse": _above_lse,
    "query_far_below_its_tile": _far_below_tile,
    "sink_above_exp_limit": _sink_above,
}
"""Premise id (`mistakes.Premise`) -> does what a named mistake's hint states about its input hold there? Each
is checked here from the input's own numbers, apart from the premise's code."""


EVIDENCE: dict[str, Evidence] = {
    "modifies_input": lambda s: bool(modified_arguments(s.case, s.obs.args_after, s.check.params)),
    "dtype_changed": lambda s: dtype_changed(s.expected, as_expected(s.expected, s.obs.value)) is not None,
    "precision_lost": lambda s: precision_lost(s.expected, as_expected(s.expected, s.obs.value)) is not None,
    "not_finite": _not_finite_claim,
    "nan_for_empty_rows": lambda s: _non_finite(s.obs.value) and _nothing_to_attend(s),
    "returns_none": lambda s: s.obs.value is None,
    "not_a_tuple": lambda s: isinstance(s.expected, tuple) and not isinstance(s.obs.value, tuple),
    "wrong_shape": lambda s: (
        not isinstance(s.value, np.ndarray) or not isinstance(s.expected, np.ndarray) or s.value.shape != s.expected.shape),
    "does_not_sum_to_1": _sum_claim,
    "softmax_wrong_axis": lambda s: (
        _weights(s.value) is not None
        and not _sums_to_one(_weights(s.value), s.case.kwargs.get("axis", -1))
        and any(_sums_to_one(_weights(s.value), a) for a in range(_weights(s.value).ndim))),
    "output_not_from_weights": lambda s: (
        isinstance(s.value, tuple) and len(s.value) == 2 and same_values(s.value[1], s.expected[1], s.case.tolerance)
        and not same_values(s.value[0], s.expected[0], s.case.tolerance)),
    "builds_full_matrix": lambda s: s.check.after_pass is not None and s.check.after_pass(s.case, s.obs) is not None,
    # an overflow the task forbids: NumPy reported it again on the call made again, with the values right
    "exp_overflowed": lambda s: s.obs.overflowed and same_values(s.value, s.expected, s.case.tolerance),
    "appended_on_wrong_axis": lambda s: s.obs.status == CallOutcome.RAISED and "concatenation axis must match" in s.obs.error,
    # counts and an intensity: a whole number that came back as a float, a float64 that came back as another type
    "counts_not_integers": lambda s: any(
        want.kind in "iu" and got.kind not in "iu" for want, got in _item_dtypes(s.expected, s.obs.value)),
    "intensity_not_a_float": lambda s: any(
        want == np.float64 and got != np.float64 for want, got in _item_dtypes(s.expected, s.obs.value)),
    # the measured spread of q.k: each hint states what the number is close to
    "formula_not_measurement": _spread(lambda v, d_k: v == np.sqrt(d_k)),
    "variance_not_spread": _spread(lambda v, d_k: abs(v - d_k) <= 0.1 * d_k),
    "spread_about_one": _spread(lambda v, d_k: abs(v - 1) <= 0.1),
    "mean_not_spread": _spread(lambda v, d_k: abs(v) < 0.05 * np.sqrt(d_k)),
    "dot_with_itself": _spread(lambda v, d_k: abs(v - np.sqrt(2 * d_k)) <= 0.1 * np.sqrt(2 * d_k)),
    "entries_not_unit_variance": _spread(lambda v, d_k: abs(v - np.sqrt(d_k)) > 0.1 * np.sqrt(d_k)),
    "not_a_number": lambda s: _float(s.obs.value) is None or not np.isfinite(_float(s.obs.value)),
    # what two inputs of the run gave, called again
    "not_reproducible": _pair("same"),
    "seed_ignored": _pair("seed"),
    "n_samples_ignored": _pair("samples"),
    # tiled attention, from which inputs passed: right with one tile (or dividing tiles), wrong here
    "several_tiles_wrong": lambda s: _tiles(s.case)[0] and any(
        r.passed and not _tiles(c)[0] for c, r, _ in s.run) and not any(
        r.passed and _tiles(c)[0] and _rises(c) for c, r, _ in s.run),
    "short_tile_wrong": lambda s: not _tiles(s.case)[1] and any(
        r.passed and _tiles(c) == (True, True) for c, r, _ in s.run) and not any(
        r.passed and _tiles(c) == (True, False) for c, r, _ in s.run),
}
"""Mistake id -> does what a hint without a prediction states hold on this input?"""


def _observation(seen: Seen) -> bool:
    """The observation, made again, finds the same kind of difference and says it in the same words."""
    found = seen_difference(seen.expected, seen.value, seen.case.tolerance, seen.check.output_names,
                            saturation=seen.case.saturation)
    return found is not None and found.id == seen.result.mistake and _same_hint(seen, found)


for _id in ("observed_constant_factor", "observed_constant_offset", "observed_permutation", "observed_right_until",
            "observed_some_rows_right", "observed_items_reordered", "observed_float32_digits"):
    EVIDENCE[_id] = _observation


def audit(check: Check, fn, result: results.CheckResult | None = None) -> list[str]:
    """Every claim of `check`'s feedback on `fn` that does not hold on `fn` (an empty list if none); `result`: the
    check's result on `fn` with its hidden inputs (`check_in_process(check, fn, hidden=True)`), if already made."""
    if result is None:
        result = check_in_process(check, fn, hidden=True)
    code = code_of(fn)
    problems = []
    indices = check.indices(True)
    run = tuple((check.cases[i], r, _call(check, fn, check.cases[i])) for i, r in zip(indices, result.cases))
    if result.mistake == "helper_at_fault":  # one hint for every failing input, checked by re-running them
        failing = [i for i, (_, r, _) in zip(indices, run) if r.status == results.CheckStatus.FAILED]
        if helper_at_fault(fn, failing, lambda f, i: _call(check, f, check.cases[i]),
                           lambda i, obs: case_verdict(check, i, obs).passed, check.helpers) is None:
            problems.append("the hint blames a helper, but the course's version of it does not fix the function")
        return problems
    shown = result.smallest or result.first_failure
    if result.status == results.CheckStatus.FAILED and shown is not None:
        if (result.message, result.hint, result.mistake) != (shown.message, shown.hint, shown.mistake):
            problems.append("the message, the hint and the input shown do not all come from one failure")
        if shown.hidden and any(not r.hidden and r.status == results.CheckStatus.FAILED for r in result.cases):
            problems.append("a hidden failing input is shown while a visible one fails too")
    if result.smallest is not None and result.smallest.hint:
        small = result.smallest_input
        one = dataclasses.replace(check, make_cases=lambda rngs: [small], refine=None, mistakes=(), across=None)
        obs = _call(one, fn, small)
        problems += [f"{small.label}: {claim}" for claim in
                     _untrue_numbers(one, one.cases[0], one.expected(0), result.smallest, obs)]
        reason = _unsupported(one, 0, result.smallest, obs, ((small, result.smallest, obs),), code)
        if reason:
            problems.append(f"{small.label}: {reason}")
    for i, (case, case_result, obs) in zip(indices, run):
        for claim in _untrue_numbers(check, case, check.expected(i), case_result, obs):
            problems.append(f"{case.label}: {claim}")
        if case_result.passed and case_result.message:
            reason = _unsupported_note(check, i, case_result, obs)
            if reason:
                problems.append(f"{case.label}: {reason}")
        if case_result.passed or not case_result.hint or case_result.status != results.CheckStatus.FAILED:
            continue
        reason = _unsupported(check, i, case_result, obs, run, code)
        if reason:
            problems.append(f"{case.label}: {reason}")
    return problems


def _untrue_numbers(check: Check, case: Case, expected, case_result: results.CaseResult,
                    obs: Observation) -> list[str]:
    """The rows and numbers that the message and the hint on a failing input state about the result, each read
    back from the words and recomputed on the function's call made again (`claims`); the saturated rows from the
    input's scores."""
    if case_result.status != results.CheckStatus.FAILED or obs.status != CallOutcome.RETURNED:
        return []
    value = as_expected(expected, obs.value)
    value = value if check.graded is None else check.graded(case, expected, value)
    axis = case.kwargs.get("axis", -1)
    return [f"{claim} (said in the {where})"
            for where, text in (("message", case_result.message), ("hint", case_result.hint)) if text
            for claim in claims.untrue_in_result(text, value, expected, check.output_names, case.tolerance,
                                                 _saturation(check, case), axis)]


def _saturation(check: Check, case: Case) -> Saturation:
    """The slices of the result that lie only on saturated softmax lines, read again from the input's scores (the
    case's own mark when the check has no `scores`)."""
    if check.scores is None:
        return case.saturation
    try:
        found = check.scores(case)
    except Exception:  # noqa: BLE001 -- an input the scores cannot be read from
        return case.saturation
    lines = None if found is None else saturated_lines(*found)
    return NOT_SATURATED if lines is None else Saturation(lines)


def _call(check: Check, fn, case: Case) -> Observation:
    return observe_call(fn, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)


def _unsupported(check: Check, i: int, case_result: results.CaseResult, obs: Observation, run: tuple,
                 code: Code) -> str | None:
    """Why the hint on this input is not backed by what the function did, or None if it is."""
    case = check.cases[i]
    if obs.status == CallOutcome.RAISED:
        return _unsupported_error_hint(case_result.hint, obs.error, code)
    if obs.status != CallOutcome.RETURNED:
        return None  # timeouts, exits, memory: the hint says what happened, and the status shows it
    mistake_id = case_result.mistake
    if mistake_id is None:
        return f"a hint with no mistake behind it: {case_result.hint[:60]!r}"
    seen = Seen(check, i, case, check.expected(i), obs, case_result, run, code)
    for lead in case_result.leads:
        holds = LEADS.get(lead)
        if holds is None:
            return f"the hint offers the possibility {lead!r}, which no evidence checks"
        if not holds(seen):
            return f"the hint offers the possibility {lead!r}, which cannot apply to this input or this code"
    predicted = [p for p, m in enumerate(check.mistakes) if m.id == mistake_id and m.predict is not None]
    for premise in {m.premise.id for m in check.mistakes if m.id == mistake_id and m.premise is not None}:
        holds = PREMISES.get(premise)
        if holds is None:
            return f"the hint states {premise!r} of its input, which no evidence checks"
        if not holds(seen):
            return f"the hint states {premise!r} of its input, which its numbers do not bear out"
    if predicted and _predicted(check, i, case, seen.expected, obs.value, predicted):
        first = next(m for m in check.mistakes if m.id == mistake_id)
        return None if _same_hint(seen, first) else "the hint does not read as its mistake's, composed for this code"
    evidence = EVIDENCE.get(mistake_id)
    if evidence is not None and evidence(seen):
        again = _diagnosed_again(seen)
        if again is not None and again.id == mistake_id and not _same_hint(seen, again):
            return "the hint does not read as the diagnosis made again gives it for this code"
        return None
    if predicted:
        return f"no prediction of {mistake_id!r} equals what the function returned"
    return f"the claim of {mistake_id!r} could not be verified"


def _unsupported_note(check: Check, i: int, case_result: results.CaseResult, obs: Observation) -> str | None:
    """Why the note on a right answer is not backed (None if it is): the check's `pass_note`, on the value called
    again, must say the same."""
    if check.pass_note is None or obs.status != CallOutcome.RETURNED:
        return f"a note on a right answer that nothing states: {case_result.message[:60]!r}"
    expected = check.expected(i)
    if check.pass_note(check.cases[i], expected, as_expected(expected, obs.value)) != case_result.message:
        return "the note on a right answer does not read as the check gives it again"
    return None


def _same_hint(seen: Seen, mistake: Mistake) -> bool:
    """The hint shown is `mistake`'s, with the leads that apply to the code read by the audit."""
    return seen.result.hint == compose(mistake, seen.case, seen.code)[0]


def _diagnosed_again(seen: Seen) -> Mistake | None:
    """The diagnosis without predictions, made again on the value called again (None when a band or `across`
    judged it)."""
    check = seen.check
    if check.compare is not None:
        verdict = check.compare(seen.case, seen.expected, as_expected(seen.expected, seen.obs.value), {})
        return verdict[1] if verdict else None
    verdict = diagnose(seen.case, seen.expected, seen.value, {}, (), check.output_names, check.specific, seen.code)
    return verdict[1] if verdict else None


def _predicted(check: Check, i: int, case: Case, expected, value, positions: list[int]) -> bool:
    value = as_expected(expected, value)
    if check.compare is None:
        return any(prediction_matches(check, i, value, p) for p in positions)
    predictions = check.predictions(i)
    for p in positions:  # a check judged by a band judges the match
        verdict = check.compare(case, expected, value, {p: predictions.get(p)})
        if verdict is not None and verdict[1] is check.mistakes[p]:
            return True
    return False


_QUOTED_LINE = re.compile(r"The line that failed, `(.*?)`,")


def _unsupported_error_hint(hint: str, error: str, code: Code | None = None) -> str | None:
    """An exception's hint may quote or name an operation only from the line the traceback shows (or, for np.dot,
    from the code)."""
    line = error_line(error)
    quoted = _QUOTED_LINE.search(hint)
    if quoted and quoted.group(1) != line:
        return f"the hint quotes `{quoted.group(1)}`, but the line that failed was `{line}`"
    if "`.T`" in hint and ".T" not in line:
        return "the hint names `.T`, which the line that failed does not use"
    if "without keepdims" in hint and ("keepdims" in line or not line):
        return "the hint says a reduction lacks keepdims, which the line that failed does not show"
    if "np.dot" in hint and code is not None and not code.uses("dot"):
        return "the hint names np.dot, which the code does not use"
    return None

"""Auditing feedback: every claim a check makes about a submission must hold on that submission.

`audit(check, fn)` grades `fn` (hidden inputs too), then calls it again on
every failing input and verifies what the feedback said about it:

- the message, the hint and the input shown come from the same failure (the
  smaller failing input, when one is shown first);
- a helper at fault: the function, given the course's version of that helper,
  passes every input it failed;
- a mistake recognised by prediction: one of that mistake's predictions
  equals what the function returned on that input;
- a mistake named without a prediction: the fact its hint states (a dtype,
  nan, an argument changed, a shape, a measured number, which inputs passed)
  is checked on the result by `EVIDENCE`;
- a hint for an exception quotes, or names an operation of, the student's
  own line only if the traceback shows that line.

A claim that cannot be verified is itself reported: every hint must be backed.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable

import numpy as np

from . import results
from .calls import RAISED, RETURNED, Observation, error_line, observe_call
from .cases import Case
from .check import Check, judge
from .mistakes import dtype_changed, modified_arguments, observe, precision_lost, same_values
from .observe import helper_at_fault
from .run import run_check

Evidence = Callable[[Check, Case, object, Observation, list[tuple[Case, results.CaseResult]]], bool]
"""(check, case, expected, observation, every (case, result) of the run) -> does the hint's claim hold?"""


def _float(value) -> float | None:
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.reshape(()))
    return None


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


def _spread(test: Callable[[float, int], bool]) -> Evidence:
    def holds(check, case, expected, obs, run):
        value = _float(obs.value)
        return value is not None and test(value, case.args[0])
    return holds


EVIDENCE: dict[str, Evidence] = {
    "modifies_input": lambda check, case, e, obs, run: bool(modified_arguments(case, obs.args_after, check.params)),
    "dtype_changed": lambda check, case, e, obs, run: dtype_changed(e, obs.value) is not None,
    "precision_lost": lambda check, case, e, obs, run: precision_lost(e, obs.value) is not None,
    "float32_not_kept": lambda check, case, e, obs, run: (
        isinstance(obs.value, np.ndarray) and case.float32 and obs.value.dtype != np.float32),
    "not_finite": lambda check, case, e, obs, run: _non_finite(obs.value) and not _non_finite(e),
    "nan_for_empty_rows": lambda check, case, e, obs, run: _non_finite(obs.value) and bool(np.any(case.args[5] == -np.inf)),
    "returns_none": lambda check, case, e, obs, run: obs.value is None,
    "not_a_tuple": lambda check, case, e, obs, run: isinstance(e, tuple) and not isinstance(obs.value, tuple),
    "wrong_shape": lambda check, case, e, obs, run: (
        not isinstance(obs.value, np.ndarray) or not isinstance(e, np.ndarray) or obs.value.shape != e.shape),
    "does_not_sum_to_1": lambda check, case, e, obs, run: (
        _weights(obs.value) is not None and not _sums_to_one(_weights(obs.value), case.kwargs.get("axis", -1))),
    "softmax_wrong_axis": lambda check, case, e, obs, run: (
        _weights(obs.value) is not None
        and not _sums_to_one(_weights(obs.value), case.kwargs.get("axis", -1))
        and any(_sums_to_one(_weights(obs.value), a) for a in range(_weights(obs.value).ndim))),
    "builds_full_matrix": lambda check, case, e, obs, run: (
        check.after_pass is not None and check.after_pass(case, obs) is not None),
    "appended_on_wrong_axis": lambda check, case, e, obs, run: (
        obs.status == RAISED and "concatenation axis must match" in obs.error),
    # the measured spread of q.k: each hint states what the number is close to
    "formula_not_measurement": _spread(lambda v, d_k: v == np.sqrt(d_k)),
    "variance_not_spread": _spread(lambda v, d_k: abs(v - d_k) <= 0.1 * d_k),
    "spread_about_one": _spread(lambda v, d_k: abs(v - 1) <= 0.1),
    "mean_not_spread": _spread(lambda v, d_k: abs(v) < 0.05 * np.sqrt(d_k)),
    "dot_with_itself": _spread(lambda v, d_k: abs(v - np.sqrt(2 * d_k)) <= 0.1 * np.sqrt(2 * d_k)),
    "entries_not_unit_variance": _spread(lambda v, d_k: abs(v - np.sqrt(d_k)) > 0.1 * np.sqrt(d_k)),
    "not_a_number": lambda check, case, e, obs, run: _float(obs.value) is None or not np.isfinite(_float(obs.value)),
    # tiled attention, from which inputs passed: right with one tile (or dividing tiles), wrong here
    "several_tiles_wrong": lambda check, case, e, obs, run: _tiles(case)[0] and any(
        r.passed and not _tiles(c)[0] for c, r in run),
    "short_tile_wrong": lambda check, case, e, obs, run: not _tiles(case)[1] and any(
        r.passed and _tiles(c) == (True, True) for c, r in run),
}


def _observation(mistake_id: str) -> Evidence:
    def holds(check, case, expected, obs, run):  # the observation, made again, finds the same kind of difference
        found = observe(expected, obs.value, case.tolerance, check.output_names)
        return found is not None and found.id == mistake_id
    return holds


for _id in ("observed_constant_factor", "observed_constant_offset", "observed_permutation", "observed_right_until",
            "observed_some_rows_right", "observed_items_reordered"):
    EVIDENCE[_id] = _observation(_id)


def audit(check: Check, fn) -> list[str]:
    """Every claim of `check`'s feedback on `fn` that does not hold on `fn` (an empty list if none)."""
    result = run_check(check, fn, hidden=True)
    problems = []
    cases = [check.cases[i] for i in check.indices(True)]
    run = list(zip(cases, result.cases))
    if result.mistake == "helper_at_fault":  # one hint for every failing input, checked by re-running them
        failing = [i for i, (_, r) in zip(check.indices(True), run) if r.status == results.FAILED]
        if helper_at_fault(fn, failing, lambda f, i: _call(check, f, check.cases[i]),
                           lambda i, obs: judge(check, i, obs).passed, check.helpers) is None:
            problems.append("the hint blames a helper, but the course's version of it does not fix the function")
        return problems
    shown = result.smallest or result.first_failure
    if result.status == results.FAILED and shown is not None:
        if (result.message, result.hint, result.mistake) != (shown.message, shown.hint, shown.mistake):
            problems.append("the message, the hint and the input shown do not all come from one failure")
    if result.smallest is not None and result.smallest.hint:
        small = result.smallest_input
        one = dataclasses.replace(check, make_cases=lambda rngs: [small], refine=None)
        reason = _unsupported(one, 0, small, result.smallest, _call(one, fn, small), [(small, result.smallest)])
        if reason:
            problems.append(f"{small.label}: {reason}")
    for i, (case, case_result) in zip(check.indices(True), run):
        if case_result.passed or not case_result.hint or case_result.status != results.FAILED:
            continue
        reason = _unsupported(check, i, case, case_result, _call(check, fn, case), run)
        if reason:
            problems.append(f"{case.label}: {reason}")
    return problems


def _call(check: Check, fn, case: Case) -> Observation:
    return observe_call(fn, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)


def _unsupported(check: Check, i: int, case: Case, case_result: results.CaseResult, obs: Observation,
                 run: list[tuple[Case, results.CaseResult]]) -> str | None:
    """Why the hint on this input is not backed by what the function did, or None if it is."""
    if obs.status == RAISED:
        return _unsupported_error_hint(case_result.hint, obs.error)
    if obs.status != RETURNED:
        return None  # timeouts, exits, memory: the hint says what happened, and the status shows it
    mistake_id = case_result.mistake
    if mistake_id is None:
        return f"a hint with no mistake behind it: {case_result.hint[:60]!r}"
    expected = check.expected(i)
    predicted = [p for p, m in enumerate(check.mistakes) if m.id == mistake_id and m.predict is not None]
    if predicted and _predicted(check, i, case, expected, obs.value, predicted):
        return None
    evidence = EVIDENCE.get(mistake_id)
    if evidence is not None and evidence(check, case, expected, obs, run):
        return None
    if predicted:
        return f"no prediction of {mistake_id!r} equals what the function returned"
    return f"the claim of {mistake_id!r} could not be verified"


def _predicted(check: Check, i: int, case: Case, expected, value, positions: list[int]) -> bool:
    predictions = check.predictions(i)
    if check.compare is None:
        return any(same_values(value, predictions.get(p), case.tolerance) for p in positions)
    for p in positions:  # a check with its own comparison (e.g. only the real queries' rows) judges the match
        verdict = check.compare(case, expected, value, {p: predictions.get(p)})
        if verdict is not None and verdict[1] is check.mistakes[p]:
            return True
    return False


_QUOTED_LINE = re.compile(r"The line that failed, `(.*?)`,")


def _unsupported_error_hint(hint: str, error: str) -> str | None:
    """An exception's hint may quote or name an operation only from the line the traceback shows."""
    line = error_line(error)
    quoted = _QUOTED_LINE.search(hint)
    if quoted and quoted.group(1) != line:
        return f"the hint quotes `{quoted.group(1)}`, but the line that failed was `{line}`"
    if "`.T`" in hint and ".T" not in line:
        return "the hint names `.T`, which the line that failed does not use"
    if "without keepdims" in hint and ("keepdims" in line or not line):
        return "the hint says a reduction lacks keepdims, which the line that failed does not show"
    return None

"""Running a check in this process: every input, the verdicts, then a closer look at a failure.

`check_in_process` is what a notebook's `check_softmax(softmax)` calls: it calls the
student's function on each of the check's inputs (`calls.observe_call`),
hands the observations to `check.check_verdict`, and then, for a failed check,
`follow_up`: the one cause the engine can check by itself (a helper of the
student's at fault, re-run with the course's version the check was given), or
else the smallest input that still fails the same way (`smallest_failing`,
cutting sizes with `shrink`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import time
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from . import calls, differences, results
from .calls import CallOutcome, Observation, observe_call
from .cases import Case, Rngs, format_value
from .check import Check, case_verdict, check_verdict
from .code import UNKNOWN, Code, code_of
from .results import CheckStatus
from .shrink import MAX_CALLS, OBSERVED_ONLY, SECONDS, Sizes, candidates, failure_kind, observational

_LEFT_TO_THE_GRADER = contextvars.ContextVar("attention_course_checks_left_to_the_grader", default=False)


@contextmanager
def checks_left_to_the_grader():
    """A context in which a notebook's own `check_*` calls return at once, as skipped.

    The batch grader's worker runs a notebook's cells inside it: the grader
    calls every function itself afterwards, with the hidden inputs too, so
    the notebook's check cells need not run them first.
    """
    token = _LEFT_TO_THE_GRADER.set(True)
    try:
        yield
    finally:
        _LEFT_TO_THE_GRADER.reset(token)


def left_to_the_grader() -> bool:
    """True inside `checks_left_to_the_grader`: a check cell should return at once, as skipped."""
    return _LEFT_TO_THE_GRADER.get()


def check_in_process(check: Check, fn, *, hidden: bool = False) -> results.CheckResult:
    """Call `fn` on the check's inputs in this process and judge every call."""
    if left_to_the_grader():
        return results.CheckResult.skipped(check.name, check.function, "not run here: the batch grader checks every function itself.")
    if not callable(fn) and not isinstance(fn, Mapping):  # a Mapping is an answer sheet, read by observe_call
        case = results.CaseResult(
            "—", "", "", format_value(calls.to_plain(fn)), CheckStatus.FAILED,
            f"expected the function `{check.function}` itself, got {type(fn).__name__}",
            f"Pass the function without calling it: check_{check.name}({check.function}).",
        )
        return results.CheckResult.from_cases(check.name, check.function, [case])
    observations: dict[int, Observation] = {}
    timed_out = False
    for i in check.indices(hidden):
        case = check.cases[i]
        if timed_out:
            observations[i] = Observation(CallOutcome.SKIPPED)
            continue
        obs = observe_call(fn, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)
        timed_out = obs.status == CallOutcome.TIMEOUT
        observations[i] = obs
    code = code_of(fn)
    result = check_verdict(check, observations, code)
    return follow_up(check, result, observations, search(check, fn, result, observations), code)


@dataclass(frozen=True)
class FollowUp:
    """What calling a failed function again found: a helper at fault, or a smaller input that fails the same way.

    Plain data: the batch grader's worker finds it in the sandbox, and the
    grader checks it (`follow_up`) before saying anything of it.
    """

    helper: str | None = None
    """The name of the student's helper whose course version makes every failing input pass."""
    swapped: dict[int, Observation] = field(default_factory=dict)
    """Case index -> the call of the function with that helper swapped in, for every failing input."""
    smallest: Case | None = None
    """A smaller input on which the function fails the same way as on the first failing input."""
    observation: Observation | None = None
    """The function's call on `smallest`."""
    cut_from: int | None = None
    """Index of the case `smallest` was cut from (the first failing input the result shows)."""


def failing(result: results.CheckResult, observations: dict[int, Observation]) -> list[int]:
    """Indices of the cases a check's result failed (of those observed), in order."""
    return [i for i, r in zip(sorted(observations), result.cases) if r.status == CheckStatus.FAILED]


def shown_index(result: results.CheckResult, observations: dict[int, Observation]) -> int | None:
    """Index of the failing case the result shows (the one its message and hint come from)."""
    shown = result.first_failure
    return next((i for i, r in zip(sorted(observations), result.cases) if r is shown), None)


def search(check: Check, fn, result: results.CheckResult, observations: dict[int, Observation],
           deadline: float | None = None) -> FollowUp:
    """After a failed check: call `fn` again, with a helper swapped, or on smaller inputs (no verdict given here).

    `deadline` (time.perf_counter): when the search must end, its calls' time limits cut to fit (None: each call
    has the check's own limit, the smaller input its `shrink.SECONDS`).
    """
    if result.status != CheckStatus.FAILED or not callable(fn):
        return FollowUp()
    bad = failing(result, observations)
    if not bad:
        return FollowUp()

    def call(f, i):
        case = check.cases[i]
        seconds = check.seconds if deadline is None else max(0.05, min(check.seconds, deadline - time.perf_counter()))
        return calls.observe_call(f, case.args, case.kwargs, seconds=seconds, measure_memory=case.measure_memory)

    swapped: dict[int, Observation] = {}

    def passes(i, obs):
        swapped[i] = obs
        return case_verdict(check, i, obs).passed

    helper = differences.helper_at_fault(fn, bad, call, passes, check.helpers)
    if helper is not None:
        return FollowUp(helper=helper, swapped={i: swapped[i] for i in bad})
    first = shown_index(result, observations)
    if result.mistake not in OBSERVED_ONLY or check.sizes is None or first is None:
        return FollowUp()
    obs = observations[first]
    if obs.status not in (CallOutcome.RETURNED, CallOutcome.RAISED):
        return FollowUp()
    kind = failure_kind(check.expected(first), obs, check.cases[first])
    end = time.perf_counter() + SECONDS
    found = smallest_failing(check, fn, check.cases[first], kind, end if deadline is None else min(end, deadline))
    if found is None:
        return FollowUp()
    small, small_obs = found
    return FollowUp(smallest=small, observation=small_obs, cut_from=first)


def cut_down(case: Case, args: tuple) -> Case:
    """`case` with smaller arguments `args`: the input `smallest_failing` tries (hidden if `case` is)."""
    return Case(f"{case.label}, cut down", tuple(args), dict(case.kwargs), hidden=case.hidden)


def is_cut_of(args: tuple, case: Case) -> bool:
    """True if `args` could be `case`'s arguments cut down: as many, of the same types, arrays of the same dtype
    and number of axes, none longer on any axis."""
    if len(args) != len(case.args):
        return False
    for small, big in zip(args, case.args):
        if isinstance(big, np.ndarray):
            if not (isinstance(small, np.ndarray) and small.dtype == big.dtype and small.ndim == big.ndim
                    and all(a <= b for a, b in zip(small.shape, big.shape))):
                return False
        elif type(small) is not type(big) and not (_number(small) and _number(big)):
            return False
    return True


def _number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def smallest_failing(check: Check, fn, case: Case, kind: str, deadline: float) -> tuple[Case, Observation] | None:
    """A smaller input on which `fn` fails as it did on `case` (same kind of difference), and its call; or None."""
    spec: Sizes = check.sizes
    params = check.params[: len(case.args)]
    current, calls_left, found = dict(zip(params, case.args)), MAX_CALLS, None
    progress = True
    while progress and calls_left > 0 and time.perf_counter() < deadline:
        progress = False
        for args in candidates(spec, current):
            if calls_left <= 0 or time.perf_counter() >= deadline:
                break
            small = cut_down(case, tuple(args[p] for p in params))
            one = _one(check, small)
            try:
                expected = one.expected(0)  # the course's code refuses inputs that are not valid
            except Exception:  # noqa: BLE001 -- an input the reference rejects is no candidate
                continue
            calls_left -= 1
            obs = calls.observe_call(fn, small.args, small.kwargs, seconds=max(0.05, deadline - time.perf_counter()))
            verdict = case_verdict(one, 0, obs)
            if (verdict.status == CheckStatus.FAILED and observational(verdict.mistake)
                    and failure_kind(expected, obs, small) == kind):
                current, found, progress = args, (small, obs), True
                break
    return found


def _one(check: Check, case: Case) -> Check:
    """The check with `case` as its only input, judged without predictions: a mistake that a tiny input happens to
    match is no evidence about the function."""
    return dataclasses.replace(check, make_cases=lambda rngs, case=case: [case], refine=None, mistakes=(),
                               across=None, hidden_rngs=Rngs())


def follow_up(check: Check, result: results.CheckResult, observations: dict[int, Observation], found: FollowUp,
              code: Code = UNKNOWN) -> results.CheckResult:
    """`result` with what `found` shows, once checked here: a helper at fault, else a smaller failing input.

    Nothing `found` claims is taken on trust (the batch grader's worker may
    have been tampered with): the helper must be one the check knows and the
    function's code reads (when `code` is known), its swapped calls must pass
    on every input the function failed, and the smaller input must be a cut of
    the first failing input and fail, by this process's own verdict, the same
    way.
    """
    if result.status != CheckStatus.FAILED:
        return result
    bad = failing(result, observations)
    if not bad:
        return result
    if found.helper is not None and found.helper in check.helpers and (not code.known or found.helper in code.names):
        if set(found.swapped) >= set(bad) and all(case_verdict(check, i, found.swapped[i]).passed for i in bad):
            hint = (f"`{check.function}` gives the expected result on every input it failed when it calls the "
                    f"course's `{found.helper}` instead of yours: the difference comes from your `{found.helper}` "
                    "(its own check shows how).")
            return dataclasses.replace(result, hint=hint, mistake="helper_at_fault")
    first = shown_index(result, observations)
    if (found.smallest is None or found.observation is None or result.mistake not in OBSERVED_ONLY or first is None
            or found.cut_from not in (None, first) or not is_cut_of(found.smallest.args, check.cases[first])):
        return result
    one = _one(check, found.smallest)
    try:
        expected = one.expected(0)
    except Exception:  # noqa: BLE001 -- an input the course's code refuses is not shown
        return result
    verdict = case_verdict(one, 0, found.observation, code)
    kind = failure_kind(check.expected(first), observations[first], check.cases[first])
    if (verdict.status != CheckStatus.FAILED or not observational(verdict.mistake)
            or failure_kind(expected, found.observation, found.smallest) != kind):
        return result
    label = f"{check.cases[first].label}, cut down to the smallest input that still fails this way"
    smallest = dataclasses.replace(verdict, label=label)
    # Message, hint and input shown all come from the smaller input: its hint says only what was observed there.
    return dataclasses.replace(result, smallest=smallest, smallest_input=dataclasses.replace(found.smallest, label=label),
                               message=smallest.message, hint=smallest.hint, mistake=smallest.mistake)

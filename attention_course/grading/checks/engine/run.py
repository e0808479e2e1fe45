"""Running a check in this process: every input, the verdicts, then a closer look at a failure.

`run_check` is what a notebook's `check_softmax(softmax)` calls: it calls the
student's function on each of the check's inputs (`calls.observe_call`),
hands the observations to `check.judge_all`, and then, for a failed check,
`follow_up`: the one cause the engine can check by itself (a helper of the
student's at fault, re-run with the course's version the check was given), or
else the smallest input that still fails the same way (`smallest_failing`,
cutting sizes with `shrink`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import time
from contextlib import contextmanager

from . import calls, observe, results
from .calls import Observation, observe_call
from .cases import Case, format_value
from .check import Check, judge, judge_all
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


def run_check(check: Check, fn, *, hidden: bool = False) -> results.CheckResult:
    """Call `fn` on the check's inputs in this process and judge every call."""
    if _LEFT_TO_THE_GRADER.get():
        return results.CheckResult.skipped(check.name, check.function, "not run here: the batch grader checks every function itself.")
    if not callable(fn):
        case = results.CaseResult(
            "—", "", "", format_value(calls.to_plain(fn)), results.FAILED,
            f"expected the function `{check.function}` itself, got {type(fn).__name__}",
            f"Pass the function without calling it: check_{check.name}({check.function}).",
        )
        return results.CheckResult.from_cases(check.name, check.function, [case])
    observations: dict[int, Observation] = {}
    timed_out = False
    for i in check.indices(hidden):
        case = check.cases[i]
        if timed_out:
            observations[i] = Observation(calls.SKIPPED)
            continue
        obs = observe_call(fn, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)
        timed_out = obs.status == calls.TIMEOUT
        observations[i] = obs
    return follow_up(check, fn, judge_all(check, observations), observations)  # a smaller failing input


def smallest_failing(check: Check, fn, case: Case, kind: str, deadline: float) -> Case | None:
    """A smaller input on which `fn` fails as it did on `case` (same kind of difference), or None."""
    spec: Sizes = check.sizes
    params = check.params[: len(case.args)]
    current, calls_left, found = dict(zip(params, case.args)), MAX_CALLS, None
    progress = True
    while progress and calls_left > 0 and time.perf_counter() < deadline:
        progress = False
        for args in candidates(spec, current):
            if calls_left <= 0 or time.perf_counter() >= deadline:
                break
            small = Case(f"{case.label}, cut down", tuple(args[p] for p in params), dict(case.kwargs), hidden=case.hidden)
            # judged without predictions: a mistake that a tiny input happens to match is no evidence about fn
            one = dataclasses.replace(check, make_cases=lambda rngs, small=small: [small], refine=None, mistakes=())
            try:
                expected = one.expected(0)  # the course's code refuses inputs that are not valid
            except Exception:  # noqa: BLE001 -- an input the reference rejects is no candidate
                continue
            calls_left -= 1
            obs = calls.observe_call(fn, small.args, small.kwargs, seconds=max(0.05, deadline - time.perf_counter()))
            verdict = judge(one, 0, obs)
            if (verdict.status == results.FAILED and observational(verdict.mistake)
                    and failure_kind(expected, obs, small) == kind):
                current, found, progress = args, (small, verdict), True
                break
    return found


def follow_up(check: Check, fn, result: results.CheckResult, observations: dict) -> results.CheckResult:
    """After a failed check: say when a helper of the student's is at fault, else show a smaller failing input."""
    if result.status != results.FAILED or not callable(fn):
        return result
    failing = [i for i, r in zip(sorted(observations), result.cases) if r.status == results.FAILED]
    if not failing:
        return result

    def call(f, i):
        case = check.cases[i]
        return calls.observe_call(f, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)

    helper = observe.helper_at_fault(fn, failing, call, lambda i, obs: judge(check, i, obs).passed, check.helpers)
    if helper is not None:
        hint = (f"`{check.function}` gives the expected result on every input it failed when it calls the course's "
                f"`{helper}` instead of yours: the difference comes from your `{helper}` (its own check shows how).")
        return dataclasses.replace(result, hint=hint, mistake="helper_at_fault")
    if result.mistake not in OBSERVED_ONLY or check.sizes is None:
        return result
    first = failing[0]
    obs = observations[first]
    if obs.status not in (calls.RETURNED, calls.RAISED):
        return result
    kind = failure_kind(check.expected(first), obs, check.cases[first])
    found = smallest_failing(check, fn, check.cases[first], kind, time.perf_counter() + SECONDS)
    if found is None:
        return result
    small, verdict = found
    label = f"{check.cases[first].label}, cut down to the smallest input that still fails this way"
    smallest = dataclasses.replace(verdict, label=label)
    # Message, hint and input shown all come from the smaller input: its hint says only what was observed there.
    return dataclasses.replace(result, smallest=smallest, smallest_input=dataclasses.replace(small, label=label),
                               message=smallest.message, hint=smallest.hint, mistake=smallest.mistake)

"""The check engine: try a student's function on several inputs and judge each.

A `Check` bundles everything about one student function: its parameters, the
inputs to try, the package's reference implementation and the mistakes to
recognise. `judge` gives the verdict on one observed call, `judge_all` on a
check's calls: `run.run_check` makes the calls in the current process (the
in-notebook checks), the batch grader in a worker process, and both hand the
observations to the same `judge`, so both give the same verdict.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Mapping

import numpy as np

from . import calls, results
from .calls import Observation
from .cases import Case, Rngs, format_value
from .shrink import Sizes
from .mistakes import (
    DTYPE_CHANGED, MODIFIES_INPUT, PRECISION_LOST, Mistake, as_plain, diagnose, dtype_changed, modified_arguments,
    precision_lost, predict_all, same_values,
)

DEFAULT_SECONDS = 10.0
"""Time limit for one call of a student's function."""

@dataclass(frozen=True, eq=False)
class Check:
    """Everything needed to check one student function."""

    name: str
    """Name of the check, e.g. "softmax" for `check_softmax`."""
    function: str
    """Name the student's function has in the exercise notebook."""
    params: tuple[str, ...]
    """Names of its parameters, used to show the inputs."""
    reference: Callable[..., object]
    """Computes the expected result from a case's arguments (the package's own code)."""
    make_cases: Callable[[Rngs], list[Case]]
    """Builds the inputs to try, visible ones first, then hidden ones, drawing random values from its argument."""
    mistakes: tuple[Mistake, ...] = ()
    """Mistakes recognised by prediction, most specific first."""
    output_names: tuple[str, ...] | None = None
    """Names of the items when the function returns a tuple, e.g. ("output", "weights")."""
    compare: Callable[[Case, object, object, dict], tuple[str, Mistake | None] | None] | None = None
    """Replaces the standard comparison: (case, expected, got, predictions) -> None if
    right, else (message, mistake or None)."""
    expected_text: Callable[[Case, object], str] | None = None
    """Shows the expected result in words when printing it is not enough."""
    specific: Callable[[Case, object, object], Mistake | None] | None = None
    """Check-specific diagnosis of a wrong value that no prediction explains."""
    error_hint: Callable[[Case, str], str] | None = None
    """A hint for an exception raised on a given input."""
    sizes: Sizes | None = None
    """Which axis of which argument is which size: lets a failure be shown on the smallest input that fails."""
    after_pass: Callable[[Case, Observation], tuple[str, Mistake] | None] | None = None
    """A further requirement on a correct value (e.g. a memory budget)."""
    refine: Callable[[tuple[Case, ...], list[results.CaseResult]], list[results.CaseResult]] | None = None
    """Improves hints using all the inputs at once (e.g. right on one tile, wrong on several)."""
    seconds: float = DEFAULT_SECONDS
    """Time limit for one call."""
    float32_kept: bool = True
    """A float32 input must give a float32 result (else the right values only earn a note, not the mark's loss)."""
    hidden_rngs: Rngs = Rngs()
    """Where the hidden inputs are drawn from (an assignment's secret); the visible ones always come from `Rngs()`,
    as the notebook shows them."""
    helpers: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    """Name -> the course's version of each exercise function the student's may call (their own `softmax`, say):
    a failing function is re-run with these in place of the student's, to find a helper at fault. Given by the
    exercise, which knows the functions its students write."""

    @cached_property
    def cases(self) -> tuple[Case, ...]:
        """Every input, visible ones first; ValueError if `hidden_rngs` changes which hidden inputs there are."""
        packaged = tuple(self.make_cases(Rngs()))
        visible = tuple(c for c in packaged if not c.hidden)
        hidden = tuple(c for c in packaged if c.hidden)
        if self.hidden_rngs != Rngs():
            redrawn = tuple(c for c in self.make_cases(self.hidden_rngs) if c.hidden)
            if [c.label for c in redrawn] != [c.label for c in hidden]:
                raise ValueError(f"hidden_rngs: the hidden inputs of check {self.name} change in number or kind "
                                 f"with {self.hidden_rngs}, so they cannot be redrawn")
            hidden = redrawn
        return visible + hidden

    def __post_init__(self):
        # Expected results are computed once per process and shared by the batch's threads.
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_cache", {})

    def indices(self, hidden: bool) -> list[int]:
        """Indices of the cases to try: visible ones, plus hidden ones if `hidden`."""
        return [i for i, c in enumerate(self.cases) if hidden or not c.hidden]

    def expected(self, i: int) -> object:
        """The reference result for case `i` (computed once, in this process)."""
        return self._prepared(i)[0]

    def predictions(self, i: int) -> dict[int, object]:
        """What each recognised mistake (by position in `mistakes`) returns for case `i`."""
        return self._prepared(i)[1]

    def prepare(self) -> None:
        """Compute every expected result and prediction now (before threads start)."""
        for i in range(len(self.cases)):
            self._prepared(i)

    def _prepared(self, i: int):
        with self._lock:
            if i not in self._cache:
                case = self.cases[i]
                with np.errstate(all="ignore"):
                    expected = as_plain(self.reference(*case.args, **case.kwargs))
                self._cache[i] = (expected, predict_all(self.mistakes, case))
            return self._cache[i]


def judge_all(check: Check, observations: dict[int, Observation]) -> results.CheckResult:
    """Judge the observed calls (case index -> observation) and summarise them."""
    indices = sorted(observations)
    case_results = [judge(check, i, observations[i]) for i in indices]
    case_results = _consistent(case_results, check, _contradicted(check, observations))
    if check.refine is not None:
        case_results = check.refine(tuple(check.cases[i] for i in indices), case_results)
    return results.CheckResult.from_cases(check.name, check.function, case_results)


def _contradicted(check: Check, observations: dict[int, Observation]) -> set[str]:
    """Mistakes whose predictions, on some input, differ from what the function returned there.

    A mistake that predicts one failing input but not another (nor a passing
    one) is not the student's: dividing by 2 sqrt(d_k) equals dividing by d_k
    when d_k = 4, and nowhere else. Only finite numbers on both sides count:
    where nan or inf appear, two codes with the same mistake may differ (a
    guard for rows of -inf), except on an input of finite numbers where the
    function is right and the mistake gives nan or inf: a softmax right on
    large scores does not overflow. A check with its own comparison (only some
    rows graded) is left as it is.
    """
    if check.compare is not None:
        return set()
    contradicted = set()
    variant_matched: set[int] = set()  # positions in check.mistakes of predictions that equal some result
    variant_contradicted: set[int] = set()  # ... and of those that differ from some result
    for i, obs in observations.items():
        if obs.status != calls.RETURNED:
            continue
        predictions, tolerance = check.predictions(i), check.cases[i].tolerance
        if not _finite(obs.value):
            continue
        floats = [a for a in check.cases[i].args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        expected = check.expected(i)
        right = (all(np.isfinite(a).all() for a in floats) and same_values(obs.value, expected, tolerance)
                 and _dtypes(obs.value) == _dtypes(expected))  # widened to float64, a code may not overflow
        outcome: dict[str, bool] = {}  # id -> does some prediction equal what came back?
        for position, mistake in enumerate(check.mistakes):
            predicted = predictions.get(position)
            if predicted is not None and (_finite(predicted) or right):
                same = same_values(obs.value, predicted, tolerance)
                outcome[mistake.id] = outcome.get(mistake.id, False) or same
                (variant_matched if same else variant_contradicted).add(position)
        contradicted |= {m for m, matched in outcome.items() if not matched}
    # One way of making a mistake (one prediction) that reproduces some input and no input contradicts keeps
    # the mistake named: rotating at t - 1 predicts nothing for an empty cache, where only t + 1 is tried.
    consistent = {check.mistakes[p].id for p in variant_matched - variant_contradicted}
    return contradicted - consistent


def _dtypes(value) -> tuple:
    """The dtype of each array of a result (a tuple of them too)."""
    return tuple(getattr(v, "dtype", None) for v in (value if isinstance(value, tuple) else (value,)))


def _finite(value) -> bool:
    """True for numbers that are all finite (a tuple of them too)."""
    if isinstance(value, tuple):
        return all(_finite(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and bool(np.isfinite(value).all())


def _consistent(case_results: list[results.CaseResult], check: Check, contradicted: set[str]) -> list[results.CaseResult]:
    """Name, on each input, the mistake that explains the most inputs and that no input contradicts.

    A nan row may be what three different softmax mistakes return; the one
    that also predicts the other failing inputs is the student's. A mistake
    contradicted elsewhere is dropped, leaving only what was observed.
    """
    counts: dict[str, int] = {}
    for r in case_results:
        for mistake_id in set(r.matches):
            counts[mistake_id] = counts.get(mistake_id, 0) + 1
    hints = {}
    for m in check.mistakes:
        hints.setdefault(m.id, m.hint)
    fixed = []
    for r in case_results:
        if r.matches:
            candidates = [m for m in r.matches if m not in contradicted]
            if candidates:
                best = max(candidates, key=lambda m: (counts[m], -r.matches.index(m)))
                r = dataclasses.replace(r, mistake=best, hint=hints.get(best, r.hint))
            else:
                mistake, hint, message = r.unpredicted
                r = dataclasses.replace(r, mistake=mistake, hint=hint, message=message or r.message, matches=())
        fixed.append(r)
    return fixed


def judge(check: Check, i: int, obs: Observation) -> results.CaseResult:
    """The verdict on one call: compared with the reference, mistake recognised."""
    case = check.cases[i]
    expected = check.expected(i)
    if check.expected_text is not None:
        expected_text = check.expected_text(case, expected)
    else:
        expected_text = format_value(expected, check.output_names)

    def result(status, got, message, hint="", mistake: Mistake | None = None, matches=(), unpredicted=(None, "", "")):
        return results.CaseResult(
            label=case.label, inputs=case.describe(check.params),
            expected=expected_text, got=got, status=status,
            message=message, hint=hint or (mistake.hint if mistake else ""),
            mistake=mistake.id if mistake else None, hidden=case.hidden, matches=tuple(matches),
            unpredicted=unpredicted,
        )

    status = obs.status
    if status == calls.NOT_IMPLEMENTED:
        return result(results.NOT_ATTEMPTED, "raise NotImplementedError()", "not attempted yet")
    if status == calls.MISSING:
        return result(
            results.MISSING, "(no such function)", f"the notebook does not define a function called `{check.function}`",
            f"Keep the name and the parameters of the stub: def {check.function}({', '.join(check.params)}).",
        )
    if status == calls.SKIPPED:
        return result(results.SKIPPED, "(not run)", obs.error or "not tried: an earlier input ran out of time")
    if status == calls.TIMEOUT:
        return result(
            results.TIMEOUT, f"still running after {check.seconds:g} s", f"took longer than {check.seconds:g} s",
            "Look for a loop whose condition never changes, or work that grows much faster than the input.",
        )
    if status == calls.OUT_OF_MEMORY:
        return result(
            results.FAILED, obs.error, "ran out of memory",
            "The function asked for far more memory than this input needs: check the sizes of the arrays it creates.",
        )
    if status == calls.EXITED:
        return result(
            results.FAILED, obs.error, f"{obs.error} instead of returning",
            "A function hands its result back with `return`; sys.exit stops the whole program.",
        )
    if status == calls.CRASHED:
        return result(results.FAILED, obs.error, obs.error, "The process running the notebook ended during this call.")
    if status == calls.RAISED:
        hint = check.error_hint(case, obs.error) if check.error_hint else ""
        return result(
            results.FAILED, obs.error, f"raised {obs.error.splitlines()[0] if obs.error else 'an exception'}",
            hint or "Read the error: which line failed, and what shapes did the arrays have there?",
        )

    got_text = format_value(obs.value, check.output_names)
    changed = modified_arguments(case, obs.args_after, check.params)
    if check.compare is not None:
        verdict = check.compare(case, expected, obs.value, check.predictions(i))
    else:
        verdict = diagnose(case, expected, obs.value, check.predictions(i), check.mistakes,
                           check.output_names, check.specific)
    if changed:
        names = ", ".join(f"`{n}`" for n in changed)
        also = f" (and the result is wrong: {verdict[0]})" if verdict else ""
        return result(results.FAILED, got_text, f"changed its argument {names} in place{also}", mistake=MODIFIES_INPUT)
    if verdict is not None:
        message, mistake = verdict
        matches = ()
        if mistake is not None and any(mistake is m for m in check.mistakes):
            predictions = check.predictions(i)
            matches = tuple(dict.fromkeys(
                m.id for p, m in enumerate(check.mistakes) if same_values(obs.value, predictions.get(p), case.tolerance)))
            matches = matches if mistake.id in matches else ()
        unpredicted = (None, "", "")
        if matches:  # what is said if every matching prediction is contradicted elsewhere
            fallback = diagnose(case, expected, obs.value, {}, (), check.output_names, check.specific)
            if fallback is not None:
                unpredicted = (fallback[1].id, fallback[1].hint, fallback[0]) if fallback[1] else (None, "", fallback[0])
        return result(results.FAILED, got_text, message, mistake=mistake, matches=matches, unpredicted=unpredicted)
    if check.after_pass is not None:
        extra = check.after_pass(case, obs)
        if extra is not None:
            message, mistake = extra
            return result(results.FAILED, got_text, message, mistake=mistake)
    narrowed = precision_lost(expected, obs.value)
    if narrowed:
        return result(results.FAILED, got_text, narrowed, mistake=PRECISION_LOST)
    widened = dtype_changed(expected, obs.value)  # float32 in, float32 out: every chapter's promise
    if widened and check.float32_kept:
        return result(results.FAILED, got_text, widened, mistake=DTYPE_CHANGED)
    if widened:  # said, not marked down: this chapter does not ask for float32 yet
        return result(results.PASSED, got_text, f"note: {widened}")
    return result(results.PASSED, got_text, "")

"""The check engine: try a student's function on several inputs and give each a verdict.

A `Check` bundles everything about one student function: its parameters, the
inputs to try, the package's reference implementation and the mistakes to
recognise, and its optional hooks, grouped by what they do: `Judging` (pass
or fail, which mistake) and `Presenting` (what a student reads).
`case_verdict` gives the verdict on one observed call (a `results.Verdict`,
then worded as the `CaseResult` a student reads), `check_verdict` on a
check's calls: `run.check_in_process` makes the calls in the current process (the
in-notebook checks), the batch grader in a worker process, and both hand the
observations to the same `case_verdict`, so both give the same verdict.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np

from . import calls, results
from .calls import CallOutcome, Observation
from .cases import FLOAT32_TOLERANCE, Case, Rngs, format_value
from .differences import saturated_lines, saturated_slice
from .results import CheckStatus, Verdict
from .shrink import Sizes
from .code import UNKNOWN, Code
from .mistakes import MODIFIES_INPUT, PRECISION_LOST, Mistake, Specific, as_plain, compose, diagnose, dtype_kept, \
    modified_arguments, precision_lost, predict_all, premise_holds, same_values

DEFAULT_SECONDS = 10.0
"""Time limit for one call of a student's function."""

@dataclass(frozen=True)
class Judging:
    """The hooks of a `Check` that decide whether a result passes and which mistake it shows (`Check.judging`).

    Each is the `Check` field of the same name (documented there); None (False for the flags): the standard way.
    """

    compare: Callable[[Case, object, object, dict], tuple[str, Mistake | None] | None] | None = None
    graded: Callable[[Case, object, object], object] | None = None
    specific: Specific | None = None
    after_pass: Callable[[Case, Observation], tuple[str, Mistake] | None] | None = None
    across: Callable[[dict[int, tuple[Case, object]]], dict[int, tuple[str, Mistake]]] | None = None
    refine: Callable[[tuple[Case, ...], list[results.CaseResult]], list[results.CaseResult]] | None = None
    weighed: bool = False
    dtype_graded: bool = True


@dataclass(frozen=True)
class Presenting:
    """The hooks of a `Check` that word what a student reads: the results shown, a note, an error's hint, which
    failures are shown (`Check.presenting`).

    Each is the `Check` field of the same name (documented there); None: the standard wording.
    """

    expected_text: Callable[[Case, object], str] | None = None
    got_text: Callable[[Case, object], str] | None = None
    pass_note: Callable[[Case, object, object], str] | None = None
    error_hint: Callable[[Case, str, Code], str] | None = None
    every_failure_shown: bool = False


@dataclass(frozen=True, eq=False)
class Check:
    """Everything needed to check one student function.

    Its fields come in four groups: what is checked (the function, its inputs, the reference, the mistakes);
    the judging hooks, which decide pass or fail and which mistake (`judging`); the presenting hooks, which word
    what a student reads (`presenting`); and how the calls are run and followed up. Every hook is optional: the
    standard comparison, diagnosis and wording apply without it.
    """

    # --- what is checked ----------------------------------------------------------------------------------------
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
    hidden_rngs: Rngs = Rngs()
    """Where the hidden inputs are drawn from (an assignment's secret); the visible ones always come from `Rngs()`,
    as the notebook shows them."""
    scores: Callable[[Case], tuple[np.ndarray, int] | None] | None = None
    """(scores, axis): the scores whose softmax along `axis` the function takes on a case (-inf where hidden), laid
    out so that their first axis is the result's; an input with a slice made only of nearly one-hot lines is then
    marked `saturated` (`differences.saturated_slice`), a general rule for every input of the check, cut-down ones too.
    None: only the inputs flagged by hand are."""

    # --- judging: whether a result passes, and which mistake (`Judging`) ----------------------------------------
    compare: Callable[[Case, object, object, dict], tuple[str, Mistake | None] | None] | None = None
    """Replaces the standard comparison: (case, expected, got, predictions) -> None if
    right, else (message, mistake or None). For a result judged by a band (a measurement), not by its values."""
    graded: Callable[[Case, object, object], object] | None = None
    """The part of a result that is graded: (case, expected, value) -> the value with what is not graded taken
    from the expected result (the rows of padding queries). Applied to the result and to every prediction."""
    specific: Specific | None = None
    """Check-specific diagnosis of a wrong value that no prediction explains: (case, expected, got, code)."""
    after_pass: Callable[[Case, Observation], tuple[str, Mistake] | None] | None = None
    """A further requirement on a correct value (e.g. a memory budget)."""
    across: Callable[[dict[int, tuple[Case, object]]], dict[int, tuple[str, Mistake]]] | None = None
    """A judgement that needs several inputs' results at once: {index: (case, value)} of the inputs that returned
    -> {index: (message, mistake)} for those that fail together though right alone (the same seed twice must
    give the same number, two seeds two numbers)."""
    refine: Callable[[tuple[Case, ...], list[results.CaseResult]], list[results.CaseResult]] | None = None
    """Improves hints using all the inputs at once (e.g. right on one tile, wrong on several)."""
    weighed: bool = False
    """For a check with `compare` whose predictions are exact (counts): its mistakes are weighed across the inputs
    as a check without `compare`'s are (`_contradicted`, `_consistent`): one that another input contradicts is not
    named, and where two explain an input alike, the input shown is one that separates them. (A band, a
    measurement, cannot be weighed so: False.)"""
    dtype_graded: bool = True
    """The one dtype rule applies to its results (False where the answers are numbers a student wrote by hand,
    which have no dtype to keep)."""

    # --- presenting: what a student reads (`Presenting`) --------------------------------------------------------
    expected_text: Callable[[Case, object], str] | None = None
    """Shows the expected result in words when printing it is not enough."""
    got_text: Callable[[Case, object], str] | None = None
    """Shows what came back (case, value) when NumPy's printing is not how it was written (numbers written by
    hand: 1, not 1.)."""
    pass_note: Callable[[Case, object, object], str] | None = None
    """What a right answer says besides passing (case, expected, value), "" for nothing: a step of an answer sheet
    right only from a wrong earlier answer says it was carried forward. `audit` says it again on the value."""
    error_hint: Callable[[Case, str, Code], str] | None = None
    """A hint for an exception raised on a given input: (case, error, code); it names an operation only if the
    failing line (`calls.error_line`) shows it."""
    every_failure_shown: bool = False
    """Each input is a question of its own (the steps of an answer sheet): the result shows every failing one with
    its own hint, not only the first (`results.CheckResult.every_failure`)."""

    # --- running the calls and following a failure up -----------------------------------------------------------
    seconds: float = DEFAULT_SECONDS
    """Time limit for one call."""
    sizes: Sizes | None = None
    """Which axis of which argument is which size: lets a failure be shown on the smallest input that fails."""
    helpers: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    """Name -> the course's version of each exercise function the student's may call (their own `softmax`, say):
    a failing function is re-run with these in place of the student's, to find a helper at fault. Given by the
    exercise, which knows the functions its students write."""

    @cached_property
    def judging(self) -> Judging:
        """The hooks that decide whether a result passes and which mistake it shows."""
        return Judging(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Judging)})

    @cached_property
    def presenting(self) -> Presenting:
        """The hooks that word what a student reads."""
        return Presenting(**{f.name: getattr(self, f.name) for f in dataclasses.fields(Presenting)})

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
        return tuple(self._saturation(c) for c in visible + hidden)

    def _saturation(self, case: Case) -> Case:
        """`case` with its saturated softmax lines, if the check's scores show any, and marked saturated if a slice
        is made only of them."""
        if case.saturated or self.scores is None:
            return case
        try:
            found = self.scores(case)
        except Exception:  # noqa: BLE001 -- an input the scores cannot be read from (a wrong shape, on purpose)
            return case
        lines = None if found is None else saturated_lines(*found)
        if lines is None:
            return case
        return dataclasses.replace(case, saturated=saturated_slice(*found), saturated_lines=lines)

    def __post_init__(self):
        # Inputs, expected results and predictions are computed once per process, when first needed, and shared
        # by the batch's threads.
        object.__setattr__(self, "_lock", threading.Lock())
        object.__setattr__(self, "_expected", {})
        object.__setattr__(self, "_predicted", {})

    def indices(self, hidden: bool) -> list[int]:
        """Indices of the cases to try: visible ones, plus hidden ones if `hidden`."""
        return [i for i, c in enumerate(self.cases) if hidden or not c.hidden]

    def expected(self, i: int) -> object:
        """The reference result for case `i` (computed once, in this process)."""
        with self._lock:
            if i not in self._expected:
                case = self.cases[i]
                with np.errstate(all="ignore"):
                    self._expected[i] = as_plain(self.reference(*case.args, **case.kwargs))
            return self._expected[i]

    def predictions(self, i: int) -> dict[int, object]:
        """What each recognised mistake (by position in `mistakes`) returns for case `i` (computed once, when a
        verdict first needs it: a right answer never does)."""
        with self._lock:
            if i not in self._predicted:
                self._predicted[i] = predict_all(self.mistakes, self.cases[i])
            return self._predicted[i]

    def prepare(self) -> None:
        """Draw the inputs and compute every expected result now, once, whichever of the batch's threads asks
        first (the others wait for it); the predictions wait for a wrong answer."""
        with self._lock:
            count = len(self.cases)
        for i in range(count):
            self.expected(i)


def check_verdict(check: Check, observations: dict[int, Observation], code: Code = UNKNOWN) -> results.CheckResult:
    """Judge the observed calls (case index -> observation) and summarise them.

    `code`: the words of the student's function (`code.code_of` in a notebook, `code.code_in_cells` in the batch),
    so that a hint offers only the possibilities that can apply to it.
    """
    indices = sorted(observations)
    case_results = [case_verdict(check, i, observations[i], code) for i in indices]
    if any(r.matches for r in case_results):  # a mistake was named: weigh it against every input's prediction
        case_results = _consistent(case_results, indices, check, _contradicted(check, observations), code)
    case_results = _across(check, indices, case_results, observations, code)
    if check.judging.refine is not None:
        case_results = check.judging.refine(tuple(check.cases[i] for i in indices), case_results)
    return results.CheckResult.from_cases(check.name, check.function, case_results,
                                          check.presenting.every_failure_shown)


def graded_part(check: Check, i: int, value):
    """What of `value` the check grades on case `i` (all of it, unless the check says otherwise)."""
    if check.judging.graded is None or value is None:
        return value
    return check.judging.graded(check.cases[i], check.expected(i), value)


def prediction_matches(check: Check, i: int, value, position: int) -> bool:
    """True if what mistake number `position` predicts for case `i` is `value`, in the part the check grades."""
    predicted = check.predictions(i).get(position)
    if predicted is None:
        return False
    return same_values(graded_part(check, i, value), graded_part(check, i, predicted), check.cases[i].tolerance)


def _contradicted(check: Check, observations: dict[int, Observation]) -> set[str]:
    """Mistakes whose predictions, on some input, differ from what the function returned there.

    A mistake that predicts one failing input but not another (nor a passing
    one) is not the student's: dividing by 2 sqrt(d_k) equals dividing by d_k
    when d_k = 4, and nowhere else. A mistake whose prediction is right on an
    input of finite numbers that the function fails does not explain that
    failure (a loop that gives nan everywhere is not one that overflows on
    large scores only). Otherwise
    only finite numbers on both sides count:
    where nan or inf appear, two codes with the same mistake may differ (a
    guard for rows of -inf), except on an input of finite numbers where the
    function is right and the mistake gives nan or inf: a softmax right on
    large scores does not overflow. A check judged by a band (`compare`) is
    left as it is unless its predictions are exact (`weighed`: compared by its
    own `compare`); one that grades part of a result (`graded`) compares that
    part.
    """
    compare = check.judging.compare
    if compare is not None and not check.judging.weighed:
        return set()

    def same_values(value, other, tolerance):  # by the check's own comparison, where it has one
        if compare is None:
            return _same_values(value, other, tolerance)
        return other is not None and value is not None and compare(case, as_plain(other), value, {}) is None
    contradicted = set()
    right_where_wrong: set[str] = set()  # mistakes that give the right result on an input the function fails
    variant_matched: set[int] = set()  # positions in check.mistakes of predictions that equal some result
    variant_contradicted: set[int] = set()  # ... and of those that differ from some result
    for i, obs in observations.items():
        if obs.status != CallOutcome.RETURNED:
            continue
        case = check.cases[i]
        predictions, tolerance = check.predictions(i), check.cases[i].tolerance
        value = graded_part(check, i, obs.value)
        expected = check.expected(i)
        finite_input = all(np.isfinite(a).all() for a in check.cases[i].args
                           if isinstance(a, np.ndarray) and a.dtype.kind == "f")
        if finite_input and not same_values(value, expected, tolerance):  # a mistake right here, every way of it,
            right_here: dict[str, bool] = {}  # explains nothing of this failure: id -> is each prediction right?
            for position, mistake in enumerate(check.mistakes):
                predicted = graded_part(check, i, predictions.get(position))
                if predicted is not None:
                    right_here[mistake.id] = right_here.get(mistake.id, True) and _finite(predicted) and same_values(
                        predicted, expected, tolerance)
            right_where_wrong |= {m for m, right in right_here.items() if right}
        if not _finite(value):
            continue
        floats = [a for a in check.cases[i].args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        right = (all(np.isfinite(a).all() for a in floats) and same_values(value, expected, tolerance)
                 and _dtypes(value) == _dtypes(expected))  # widened to float64, a code may not overflow
        outcome: dict[str, bool] = {}  # id -> does some prediction equal what came back?
        for position, mistake in enumerate(check.mistakes):
            predicted = graded_part(check, i, predictions.get(position))
            if predicted is not None and (_finite(predicted) or right):
                same = same_values(value, predicted, tolerance)
                outcome[mistake.id] = outcome.get(mistake.id, False) or same
                (variant_matched if same else variant_contradicted).add(position)
        contradicted |= {m for m, matched in outcome.items() if not matched}
    # One way of making a mistake (one prediction) that reproduces some input and no input contradicts keeps
    # the mistake named: rotating at t - 1 predicts nothing for an empty cache, where only t + 1 is tried.
    consistent = {check.mistakes[p].id for p in variant_matched - variant_contradicted}
    return (contradicted - consistent) | right_where_wrong


_same_values = same_values


def _dtypes(value) -> tuple:
    """The dtype of each array of a result (a tuple of them too)."""
    return tuple(getattr(v, "dtype", None) for v in (value if isinstance(value, tuple) else (value,)))


def _finite(value) -> bool:
    """True for numbers that are all finite (a tuple of them too)."""
    if isinstance(value, tuple):
        return all(_finite(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind in "biuf" and bool(np.isfinite(value).all())


def _consistent(case_results: list[results.CaseResult], indices: list[int], check: Check, contradicted: set[str],
                code: Code) -> list[results.CaseResult]:
    """Name, on each input, the mistake that explains the most inputs and that no input contradicts.

    A nan row may be what three different softmax mistakes return; the one
    that also predicts the other failing inputs is the student's. A mistake
    contradicted elsewhere is dropped, leaving only what was observed. An input
    where another mistake explains the result as well is marked `ambiguous`:
    the input shown is one where the named mistake alone does.
    """
    counts: dict[str, int] = {}
    for r in case_results:
        for mistake_id in set(r.matches):
            counts[mistake_id] = counts.get(mistake_id, 0) + 1
    first = {}
    for m in check.mistakes:
        first.setdefault(m.id, m)
    fixed = []
    for i, r in zip(indices, case_results):
        if r.matches:
            candidates = [m for m in r.matches if m not in contradicted]
            # a mistake whose hint says of this input what is not so (its premise) is not named here: the next
            # one that explains it is, and the input is marked ambiguous, so another one is shown
            stated = [m for m in candidates if _stated_truly(check, m, check.cases[i])]
            if stated:
                best = max(stated, key=lambda m: (counts[m], -r.matches.index(m)))
                hint, leads = compose(first[best], check.cases[i], code)
                r = dataclasses.replace(r, mistake=best, hint=hint, leads=leads, facts=first[best].facts,
                                        ambiguous=len(set(candidates)) > 1 or best != max(
                                            candidates, key=lambda m: (counts[m], -r.matches.index(m))))
            else:  # ambiguous if a mistake explains it whose hint is untrue here: an input where it is true is shown
                said = r.unpredicted or Verdict(r.status, "")  # none: the message stands alone
                r = r.judged(dataclasses.replace(said, status=r.status, message=said.message or r.message),
                             matches=(), ambiguous=bool(candidates))
        fixed.append(r)
    return fixed


def _stated_truly(check: Check, mistake_id: str, case: Case) -> bool:
    """True if the hint of the mistake named `mistake_id` states only what holds of `case` (its premise)."""
    return all(premise_holds(m, case) for m in check.mistakes if m.id == mistake_id)


def _across(check: Check, indices: list[int], case_results: list[results.CaseResult],
            observations: dict[int, Observation], code: Code) -> list[results.CaseResult]:
    """Fail the inputs that are right alone but not together with the others (`Check.across`)."""
    if check.judging.across is None:
        return case_results
    returned = {i: (check.cases[i], observations[i].value) for i in indices
                if observations[i].status == CallOutcome.RETURNED}
    verdicts = check.judging.across(returned)
    fixed = []
    for i, r in zip(indices, case_results):
        if i in verdicts and r.passed:
            r = r.judged(_named(*verdicts[i], check.cases[i], code))
        fixed.append(r)
    return fixed


def case_verdict(check: Check, i: int, obs: Observation, code: Code = UNKNOWN) -> results.CaseResult:
    """The verdict on one call, compared with the reference, its mistake recognised, shown as a student reads it."""
    case, expected = check.cases[i], check.expected(i)
    if obs.status != CallOutcome.RETURNED:
        got, verdict = _not_returned(check, case, obs, code)
        return _presented(check, case, expected, got, verdict)
    value = as_expected(expected, obs.value)
    got = _got_text(check, case, value)
    verdict, matches, unpredicted = _judged_value(check, i, value, obs, code)
    return _presented(check, case, expected, got, verdict, matches, unpredicted)


def _not_returned(check: Check, case: Case, obs: Observation, code: Code) -> tuple[str, Verdict]:
    """(what is shown as what came back, the verdict) for a call that returned nothing."""
    seconds = f"{check.seconds:g} s"
    match obs.status:
        case CallOutcome.NOT_IMPLEMENTED:
            return "raise NotImplementedError()", Verdict(CheckStatus.NOT_ATTEMPTED, "not attempted yet")
        case CallOutcome.MISSING:
            return "(no such function)", Verdict(
                CheckStatus.MISSING, f"the notebook does not define a function called `{check.function}`",
                f"Keep the name and the parameters of the stub: def {check.function}({', '.join(check.params)}).")
        case CallOutcome.SKIPPED:
            return "(not run)", Verdict(CheckStatus.SKIPPED, obs.error or "not tried: an earlier input ran out of time")
        case CallOutcome.TIMEOUT:
            return f"still running after {seconds}", Verdict(
                CheckStatus.TIMEOUT, f"took longer than {seconds}",
                "Look for a loop whose condition never changes, or work that grows much faster than the input.")
        case CallOutcome.OUT_OF_MEMORY:
            return obs.error, Verdict(
                CheckStatus.FAILED, "ran out of memory",
                "The function asked for far more memory than this input needs: check the sizes of the arrays it creates.")
        case CallOutcome.EXITED:
            return obs.error, Verdict(
                CheckStatus.FAILED, f"{obs.error} instead of returning",
                "A function hands its result back with `return`; sys.exit stops the whole program.")
        case CallOutcome.CRASHED:
            return obs.error, Verdict(CheckStatus.FAILED, obs.error,
                                      "The process running the notebook ended during this call.")
    error_hint = check.presenting.error_hint  # it raised
    hint = error_hint(case, obs.error, code) if error_hint else ""
    return obs.error, Verdict(CheckStatus.FAILED, f"raised {obs.error.splitlines()[0] if obs.error else 'an exception'}",
                              hint or _error_seen(check, case, obs.error))


def _judged_value(check: Check, i: int, value, obs: Observation,
                  code: Code) -> tuple[Verdict, tuple[str, ...], Verdict | None]:
    """The verdict on what a call returned, the ids of every mistake whose prediction equals it, and what is said
    if each of those is contradicted elsewhere (`_unpredicted`)."""
    case, expected, judging = check.cases[i], check.expected(i), check.judging
    predictions = _Predictions(check, i)
    wrong = _wrong(check, i, value, predictions, code)
    changed = modified_arguments(case, obs.args_after, check.params)
    if changed:  # said first, with what else is wrong
        names = ", ".join(f"`{n}`" for n in changed)
        also = f" (and the result is wrong: {wrong[0]})" if wrong else ""
        return _named(f"changed its argument {names} in place{also}", MODIFIES_INPUT, case, code), (), None
    if wrong is not None:
        message, mistake = wrong
        matches = _matches(check, i, value, mistake, predictions)
        unpredicted = _unpredicted(check, i, value, message, code) if matches else None
        return _named(message, mistake, case, code), matches, unpredicted
    further = judging.after_pass(case, obs) if judging.after_pass is not None else None
    if further is None and judging.dtype_graded:  # float32 in, float32 out; float64 in, float64 out
        further = dtype_kept(expected, value)
    if further is not None:
        return _named(*further, case, code), (), None
    pass_note = check.presenting.pass_note
    note = pass_note(case, expected, value) if pass_note else ""
    return Verdict(CheckStatus.PASSED, note), (), None


def _wrong(check: Check, i: int, value, predictions: _Predictions, code: Code) -> tuple[str, Mistake | None] | None:
    """(message, the mistake recognised or None) if `value` is wrong on case `i`, by the check's comparison or the
    standard one; a float64 result right to float32's digits only is said to be so."""
    case, expected, judging = check.cases[i], check.expected(i), check.judging
    if judging.compare is not None:
        wrong = judging.compare(case, expected, value, predictions)
    else:
        graded = graded_part(check, i, value)
        projected = predictions if judging.graded is None else _Predictions(check, i, graded=True)
        wrong = diagnose(case, expected, graded, projected, check.mistakes, check.output_names, judging.specific, code)
    narrowed = precision_lost(expected, value)
    if wrong is not None and narrowed and same_values(graded_part(check, i, value), _in_dtype_of(expected, value),
                                                      FLOAT32_TOLERANCE):
        return narrowed.replace("right values", "values right to float32's digits only"), PRECISION_LOST
    return wrong


def _unpredicted(check: Check, i: int, value, message: str, code: Code) -> Verdict | None:
    """What is said of a wrong value if every prediction that matches it is contradicted by another input: the
    check's own comparison's message alone, or the diagnosis made without predictions (None: none)."""
    case, expected, judging = check.cases[i], check.expected(i), check.judging
    if judging.compare is not None:
        plain = judging.compare(case, expected, value, {})
        return Verdict(CheckStatus.FAILED, plain[0] if plain else message)
    fallback = diagnose(case, expected, graded_part(check, i, value), {}, (), check.output_names, judging.specific, code)
    return None if fallback is None else _named(*fallback, case, code)


def _named(message: str, mistake: Mistake | None, case: Case, code: Code) -> Verdict:
    """A failure's verdict: its message, and the mistake it names with the hint a student reads for it on `case`
    (`compose`: the leads that can apply to this input and this code)."""
    if mistake is None:
        return Verdict(CheckStatus.FAILED, message)
    hint, leads = compose(mistake, case, code)
    return Verdict(CheckStatus.FAILED, message, hint, mistake.id, leads, mistake.facts)


def _got_text(check: Check, case: Case, value) -> str:
    """What came back, as a student reads it."""
    got_text = check.presenting.got_text
    return got_text(case, value) if got_text is not None else format_value(value, check.output_names)


def _presented(check: Check, case: Case, expected, got: str, verdict: Verdict, matches: tuple[str, ...] = (),
               unpredicted: Verdict | None = None) -> results.CaseResult:
    """The verdict with the input it was reached on, what was expected and what came back, as a student reads them."""
    presenting = check.presenting
    if presenting.expected_text is not None:
        expected_text = presenting.expected_text(case, expected)
    else:
        expected_text = format_value(expected, check.output_names)
    return results.CaseResult(
        label=case.label, inputs=case.describe(check.params), expected=expected_text, got=got, status=verdict.status,
        message=verdict.message, hint=verdict.hint, mistake=verdict.mistake, hidden=case.hidden, matches=matches,
        unpredicted=unpredicted, leads=verdict.leads, facts=verdict.facts,
    )


def _matches(check: Check, i: int, value, mistake: Mistake | None, predictions) -> tuple[str, ...]:
    """The ids of every mistake whose prediction equals `value` on case i, when the one named is recognised by
    prediction (compared as the check compares: by values, or by its `compare` where its predictions are exact)."""
    if mistake is None or not any(mistake is m for m in check.mistakes):
        return ()
    case, expected, compare = check.cases[i], check.expected(i), check.judging.compare
    if compare is None:
        found = [m.id for p, m in enumerate(check.mistakes) if prediction_matches(check, i, value, p)]
    elif check.judging.weighed:
        found = [m.id for p, m in enumerate(check.mistakes)
                 if (lambda v, m=m: v is not None and v[1] is m)(compare(case, expected, value, {p: predictions[p]}))]
    else:
        return ()
    matches = tuple(dict.fromkeys(found))
    return matches if mistake.id in matches else ()


def _error_seen(check: Check, case: Case, error: str) -> str:
    """What is known of an error no hint of the exercise explains: the student's line that raised it and the shapes
    of the arguments on this input."""
    line = calls.error_line(error)
    shapes = ", ".join(f"{name} {np.shape(arg)}" for name, arg in zip(check.params, case.args)
                       if isinstance(arg, np.ndarray))
    said = [f"The line that failed, `{line}`, raised it."] if line else []
    if shapes:
        said.append(f"On this input the arguments have the shapes {shapes}: print the shape of each array on that "
                    "line to see which one is not what the line expects.")
    return " ".join(said) or "Read the error: which line failed, and what shapes did the arrays have there?"


def _in_dtype_of(expected, value):
    """The expected result as the narrower dtype of `value` holds it (inf beyond float32's range), item by item."""
    if isinstance(expected, tuple) and isinstance(value, tuple) and len(expected) == len(value):
        return tuple(_in_dtype_of(e, v) for e, v in zip(expected, value))
    if isinstance(expected, np.ndarray) and isinstance(value, np.ndarray) and value.dtype.kind == "f":
        with np.errstate(over="ignore"):
            return expected.astype(value.dtype)
    return expected


def as_expected(expected, value):
    """`value`, with a tuple of arrays (a list of them, as `calls.to_plain` keeps it) stacked into one array where
    one array is expected and they stack into its shape (a list of rows is an array to NumPy too)."""
    if not (isinstance(expected, np.ndarray) and isinstance(value, tuple) and value):
        return value
    if not all(isinstance(v, np.ndarray) for v in value):
        return value
    try:
        stacked = np.stack(value)
    except ValueError:  # arrays of different shapes
        return value
    return stacked if stacked.shape == expected.shape else value


class _Predictions(Mapping):
    """`check.predictions(i)`, computed on the first look: a verdict looks only at a wrong answer. With `graded`,
    each prediction is cut to the part the check grades (`graded_part`)."""

    def __init__(self, check: Check, i: int, graded: bool = False):
        self._check, self._i, self._graded = check, i, graded

    def __getitem__(self, position: int) -> object:
        predicted = self._check.predictions(self._i)[position]
        return graded_part(self._check, self._i, predicted) if self._graded else predicted

    def __iter__(self):
        return iter(self._check.predictions(self._i))

    def __len__(self) -> int:
        return len(self._check.predictions(self._i))

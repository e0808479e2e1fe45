"""The smallest failing input: cut a failing input down until it can be followed by hand.

A check that recognises no mistake shows the student an input small enough to
work through on paper: fewer tokens, a smaller d_k, one head. `Sizes` says
which axis of which argument is which size; `smallest_failing` cuts one size
at a time (to 1, 2, half, or one less), keeps a cut when the student's
function still fails in the same way, and stops when no cut does, or when
its time is up. `follow_up` runs it after a check, with the one cause the
engine can check by itself: a helper of the student's that is at fault.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import calls, observe, results
from .cases import Case

SECONDS = 0.5
"""Time the search for a smaller input may take, on top of the check itself."""
MAX_CALLS = 40
"""Calls of the student's function the search may make."""


OBSERVED_ONLY = (None, "wrong_shape", "not_finite", "returns_none", "not_a_tuple")
"""Results whose mistake, if any, only says what was observed: a smaller input is worth showing."""


def observational(mistake: str | None) -> bool:
    """True for a diagnosis that only says what was observed on its input (no mistake recognised by prediction)."""
    return mistake in OBSERVED_ONLY or (mistake or "").startswith("observed_")


@dataclass(frozen=True)
class Sizes:
    """Which axis of which argument is which size, so that an input can be cut down consistently."""

    axes: dict[str, tuple[str | None, ...]]
    """Parameter -> names of its last axes, e.g. {"Q": ("n_q", "d_k")}; None for an axis never cut, "*" in
    place of the tuple for an array whose every axis is its own size. Axes before the named ones are
    shared leading axes (heads, batch), named "lead1", "lead2", ... from the right."""
    scalars: dict[str, str] = field(default_factory=dict)
    """Parameter -> the size it equals (causal_mask's n, a tiled loop's block_size)."""
    rebuild: Callable[[dict], dict] | None = None
    """Makes cut arguments consistent again (lengths no longer than n; O and lse recomputed)."""
    more: Callable[[dict], Iterator[dict]] | None = None
    """Further smaller inputs that slicing cannot make (fewer heads in the columns of a projection)."""


def _names(spec: Sizes, param: str, ndim: int) -> tuple[str | None, ...]:
    named = spec.axes[param]
    if named == "*":
        return tuple(f"{param}{a}" for a in range(ndim))
    named = named[-ndim:] if ndim < len(named) else named
    return tuple(f"lead{j}" for j in range(ndim - len(named), 0, -1)) + tuple(named)


def sizes_of(spec: Sizes, args: dict) -> dict[str, int]:
    """Each named size of these arguments (the largest axis of that name)."""
    sizes: dict[str, int] = {}
    for param in spec.axes:
        value = args.get(param)
        if isinstance(value, np.ndarray):
            for name, n in zip(_names(spec, param, value.ndim), value.shape):
                if name is not None:
                    sizes[name] = max(sizes.get(name, 0), n)
    for param, name in spec.scalars.items():
        sizes.setdefault(name, int(args[param]))
    return sizes


def cut(spec: Sizes, args: dict, name: str, old: int, new: int) -> dict:
    """The arguments with size `name` cut from `old` to its first `new` entries (axes of size 1 broadcast: kept)."""
    out = dict(args)
    for param in spec.axes:
        value = args.get(param)
        if isinstance(value, np.ndarray):
            index = tuple(slice(0, new) if n == name and size == old else slice(None)
                          for n, size in zip(_names(spec, param, value.ndim), value.shape))
            out[param] = np.ascontiguousarray(value[index])
    for param, size_name in spec.scalars.items():
        if size_name == name and int(args[param]) == old:
            out[param] = new
    return spec.rebuild(out) if spec.rebuild else out


def candidates(spec: Sizes, args: dict) -> Iterator[dict]:
    """Smaller versions of `args`, one size cut at a time, the smallest cut first."""
    for name, size in sizes_of(spec, args).items():
        for new in sorted({1, 2, size // 2, size - 1}):
            if 1 <= new < size:
                yield cut(spec, args, name, size, new)
    if spec.more is not None:
        yield from spec.more(args)


def smallest_failing(check, fn, case: Case, kind: str, deadline: float) -> Case | None:
    """A smaller input on which `fn` fails as it did on `case` (same kind of difference), or None."""
    from .check import judge  # the check module runs this module: imported here

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
            one = dataclasses.replace(check, make_cases=lambda small=small: [small], refine=None, mistakes=())
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


def failure_kind(expected, obs: calls.Observation, case: Case) -> str:
    """What kind of failure a call was: the exception's type, or the kind of difference in its value."""
    if obs.status == calls.RAISED:
        return re.sub(r"\d+", "#", obs.error.splitlines()[0] if obs.error else "")  # the same error, whatever the sizes
    if obs.status != calls.RETURNED:
        return obs.status
    return observe.kind(expected, obs.value, case.tolerance)


def follow_up(check, fn, result: results.CheckResult, observations: dict) -> results.CheckResult:
    """After a failed check: say when a helper of the student's is at fault, else show a smaller failing input."""
    from .check import judge

    if result.status != results.FAILED or not callable(fn):
        return result
    failing = [i for i, r in zip(sorted(observations), result.cases) if r.status == results.FAILED]
    if not failing:
        return result

    def call(f, i):
        case = check.cases[i]
        return calls.observe_call(f, case.args, case.kwargs, seconds=check.seconds, measure_memory=case.measure_memory)

    helper = observe.helper_at_fault(fn, failing, call, lambda i, obs: judge(check, i, obs).passed)
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

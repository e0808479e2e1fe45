"""The smallest failing input: cut a failing input down until it can be followed by hand.

A check that recognises no mistake shows the student an input small enough to
work through on paper: fewer tokens, a smaller d_k, one head. `Sizes` says
which axis of which argument is which size; `smallest_failing` cuts one size
at a time (to 1, 2, half, or one less), keeps a cut when the student's
function still fails in the same way, and stops when no cut does, or when
its time is up (`run.smallest_failing`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import differences
from .calls import CallOutcome, Observation
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


def failure_kind(expected, obs: Observation, case: Case) -> str:
    """What kind of failure a call was: the exception's type, or the kind of difference in its value."""
    if obs.status == CallOutcome.RAISED:
        return re.sub(r"\d+", "#", obs.error.splitlines()[0] if obs.error else "")  # the same error, whatever the sizes
    if obs.status != CallOutcome.RETURNED:
        return obs.status
    return differences.kind(expected, obs.value, case.tolerance)

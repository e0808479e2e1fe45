"""What kind of difference a wrong answer shows, said only as what was observed.

When no recognised mistake explains a wrong result, the student still
deserves more than "expected 1, got 0.41". `describe` compares the result
with the expected one and names the kind of difference it sees: values off
by one constant factor (exactly 2, or 1/sqrt(8)), the right values in
another order (sorted, transposed, slices reordered), right on the first
rows or slices and wrong after, a dtype that changed, values that agree to
a few digits only. It never names a cause: that is for a recognised
mistake, whose prediction reproduces the student's output.

`helper_at_fault` is the one cause checked here, on the student's own
function: re-run it with the course's version of another exercise function
it calls (a padded attention calling the student's `padding_mask`); if it
then gives the expected result, the fault is in that helper.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

FACTOR_LIMIT = 1024
"""Constant factors are named as k, 1/k, sqrt(k) or 1/sqrt(k) for whole numbers k up to this."""
SATURATED_WEIGHT = 1 - 1e-3
"""A softmax line whose largest weight is above this is saturated: nearly one-hot, it comes out right (or nearly)
whatever scale, shift or temperature the code applies, so its being right says nothing about the code."""


def saturated_lines(scores, axis: int = -1) -> np.ndarray | None:
    """For each score, whether its softmax line along `axis` is saturated (nearly one-hot), as a boolean array of
    the scores' shape; None for scores of one line (no slices to call right or wrong) or with no saturated line.

    A line with nothing to attend to (all -inf) has weights 0, which is not saturated: a wrong fill shows there.
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim < 2 or x.size == 0:
        return None
    with np.errstate(all="ignore"):
        top = np.max(x, axis=axis, keepdims=True)
        shifted = np.exp(x - np.where(np.isfinite(top), top, 0.0))
        total = np.sum(shifted, axis=axis, keepdims=True)
        largest = np.max(shifted, axis=axis, keepdims=True) / np.where(total > 0, total, np.inf)
    line = np.broadcast_to(largest > SATURATED_WEIGHT, x.shape)  # each entry: does its line saturate?
    return np.array(line) if line.any() else None


def saturated_slice(scores, axis: int = -1) -> bool:
    """True if some slice of `scores` along its first axis (a row, a head, a sequence) is made only of saturated
    softmax lines along `axis`: such a slice may be right whatever the code does, so no observation names it right."""
    lines = saturated_lines(scores, axis)
    return lines is not None and bool(Saturation(lines).quiet(0, lines.shape[0], lines.ndim))


@dataclass(frozen=True, eq=False)
class Saturation:
    """Which slices of a result lie only on saturated softmax lines: right there whatever the code does, so no
    observation names them right. The other slices may be named."""

    lines: np.ndarray | None = None
    """For each score, whether its line is saturated (`saturated_lines`), laid out as the result's leading axes;
    None: no line known to be saturated."""
    every: bool = False
    """Which lines are saturated is not known, only that some slice is (an input marked by hand): no slice is named."""

    def quiet(self, axis: int, size: int, ndim: int) -> frozenset[int]:
        """The slices along `axis` (of `size`) of a result of `ndim` axes that no observation may name right."""
        if self.every:
            return frozenset(range(size))
        lines = self.lines
        if lines is None:
            return frozenset()
        if (axis == 0 or lines.ndim == ndim) and lines.shape[axis] == size:  # the scores' first axis is the result's
            flat = np.moveaxis(lines, axis, 0).reshape(size, -1).all(axis=1)
            return frozenset(int(i) for i in np.flatnonzero(flat))
        return frozenset(range(size))  # an axis the scores do not lay out: none is named


NOT_SATURATED = Saturation()
"""No saturated line: every slice may be named."""


def describe(expected: np.ndarray, got: np.ndarray, tolerance: tuple[float, float], *,
             saturation: Saturation = NOT_SATURATED) -> str:
    """Clauses ("; ...") naming the kind of difference between two arrays of one shape; "" if none is seen.

    `saturation`: the slices that lie only on saturated softmax lines, which are never named right (a row can be
    right there whatever the code does).
    """
    exp, val = expected.astype(np.float64), got.astype(np.float64)
    seen = _kind_of_values(exp, val, tolerance)[1]
    clauses = [seen, _first_wrong(exp, val, tolerance, saturation), _dtype(expected, got)]
    return "".join(f"; {c}" for c in clauses if c)


def kind(expected, got, tolerance: tuple[float, float]) -> str:
    """A short tag for the kind of difference (shape, non-finite, factor, order, values), to compare two failures."""
    if isinstance(expected, tuple) or isinstance(got, tuple):
        if not (isinstance(expected, tuple) and isinstance(got, tuple)) or len(expected) != len(got):
            return "structure"
        return ",".join(kind(e, g, tolerance) for e, g in zip(expected, got))
    if not isinstance(expected, np.ndarray) or not isinstance(got, np.ndarray):
        return "not an array"
    if got.shape != expected.shape:
        return "shape"
    if got.dtype.kind not in "fiub" or expected.dtype.kind not in "fiub":
        return "dtype"
    exp, val = expected.astype(np.float64), got.astype(np.float64)
    if np.allclose(val, exp, rtol=tolerance[0], atol=tolerance[1], equal_nan=True):
        return "right"
    if not np.isfinite(val).all() and np.isfinite(exp).all():
        return "non-finite"
    return _kind_of_values(exp, val, tolerance)[0]


def _kind_of_values(exp: np.ndarray, val: np.ndarray, tolerance) -> tuple[str, str]:
    """(tag, clause): a constant factor or offset, a permutation, or agreement to a few digits only."""
    rtol, atol = tolerance
    appeared = ~np.isfinite(val) & np.isfinite(exp)
    if appeared.any():
        first = tuple(int(i) for i in np.argwhere(appeared)[0])
        wrong = tuple(int(i) for i in np.argwhere(~np.isclose(val, exp, rtol=rtol, atol=atol, equal_nan=True))[0])
        if first == wrong:  # the message already points at it
            return "non-finite", ""
        return "non-finite", f"the first nan or inf where a finite value was expected is at index {_index(first)}"
    if not (np.isfinite(exp) & np.isfinite(val)).all():
        return "values", ""
    if exp.size < 2:  # one number: any factor or offset would fit it
        return "values", ""
    worst = float(np.max(np.abs(val - exp) / np.maximum(np.abs(exp), 1e-300)))
    if worst < 1e-2:  # before factors and offsets: rounding can look like a tiny one
        return "digits", f"the values agree to about {max(1, int(-np.log10(worst) + 1e-6))} significant digits only"
    every = not np.any(np.isclose(val, exp, rtol=rtol, atol=atol))  # "every entry" only where every one differs
    big = np.abs(exp) > max(atol, 1e-12) * 10
    if every and big.sum() >= 2:
        factor = float(np.median(val[big] / exp[big]))
        if factor != 0 and abs(factor - 1) > 1e-3 and np.allclose(val, exp * factor, rtol=rtol, atol=atol):
            return f"factor {_factor(factor)}", f"every entry is the expected one times {_factor(factor)}"
    offset = float(np.median(val - exp))
    if every and offset != 0 and np.allclose(val, exp + offset, rtol=rtol, atol=atol):
        return "offset", f"every entry is the expected one plus {offset:.4g}"
    order = _order(exp, val, tolerance)
    if order:
        return "order", order
    return "values", ""


def _order(exp: np.ndarray, val: np.ndarray, tolerance) -> str:
    """The right values in another order: transposed, sorted, slices along the first axis reordered."""
    rtol, atol = tolerance

    def same(a, b):
        return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)

    if exp.size < 2 or not same(np.sort(val, axis=None), np.sort(exp, axis=None)):
        return ""
    if exp.ndim >= 2 and exp.shape[-1] == exp.shape[-2] and same(val, np.swapaxes(exp, -1, -2)):
        return "the right values in another order: the expected array with its last two axes swapped"
    if same(val, np.sort(exp, axis=-1)):
        return "the right values in another order: sorted along the last axis"
    if exp.ndim >= 2 and exp.shape[0] > 1:
        used: list[int] = []
        for g in val:
            match = next((j for j in range(exp.shape[0]) if j not in used and same(g, exp[j])), None)
            if match is None:
                break
            used.append(match)
        else:
            return f"the right values in another order: slices along axis 0 in the order {used} instead of {sorted(used)}"
    return "the right values in another order"


def _first_wrong(exp: np.ndarray, val: np.ndarray, tolerance, saturation: Saturation = NOT_SATURATED) -> str:
    """Right on the first slices along an axis (heads, rows, tiles), wrong from some slice on; none of those named
    right lies only on saturated lines."""
    if exp.ndim == 0:  # one number (a count): no slices
        return ""
    rtol, atol = tolerance
    close = np.isclose(val, exp, rtol=rtol, atol=atol, equal_nan=True)
    for axis in range(max(exp.ndim - 1, 1)):  # the leading axes (heads, batch), then the rows
        size = exp.shape[axis]
        right = np.moveaxis(close, axis, 0).reshape(size, -1).all(axis=1)  # one flag per slice
        k = int(np.argmin(right)) if not right.all() else size
        if 0 < k < size and not saturation.quiet(axis, size, exp.ndim) & set(range(k)):
            one, many = ("entry", "entries") if exp.ndim == 1 else ("row", "rows") if axis == exp.ndim - 2 else (
                "slice", "slices")
            where = "" if one in ("entry", "row") else f" along axis {axis}"
            right_part = f"{one} 0{where} is right" if k == 1 else f"{many} 0 to {k - 1}{where} are right"
            return f"{right_part}, {one} {k} is the first that differs"
    return ""


def _dtype(expected: np.ndarray, got: np.ndarray) -> str:
    if got.dtype != expected.dtype and got.dtype.kind == "f" and expected.dtype.kind == "f":
        return f"the result has dtype {got.dtype} where {expected.dtype} was expected"
    if got.dtype.kind in "iu" and expected.dtype.kind == "f":
        return f"the result has the integer dtype {got.dtype} where {expected.dtype} was expected (integers hold no fractions)"
    return ""


def _factor(f: float) -> str:
    """2, 1/2, sqrt(8), 1/sqrt(8) or the number itself."""
    sign, a = ("-" if f < 0 else ""), abs(f)
    if np.isclose(a, 1.0):
        return f"{sign}1"
    for value, form in ((a, "{k}"), (1 / a, "1/{k}"), (a * a, "sqrt({k})"), (1 / (a * a), "1/sqrt({k})")):
        k = round(value)
        if 2 <= k <= FACTOR_LIMIT and abs(value - k) <= 1e-6 * k:
            return sign + form.format(k=k) + ("" if form == "{k}" else f" = {f:.4g}")
    return f"{f:.4g}"


def _index(i) -> str:
    return str(i[0]) if len(i) == 1 else str(i)


def helper_at_fault(fn, failing: list, call, passes, course: Mapping[str, Callable]) -> str | None:
    """The other exercise function `fn` calls whose course version makes every failing input pass, if any.

    `failing` are the failing cases; `call(fn, case)` calls a function on a
    case and `passes(case, observation)` judges it; `course` maps each helper's
    name to the course's version of it (the check's `helpers`, given by its
    exercise). Only names `fn` reads from its globals are tried, and only when
    they hold the student's own function.
    """
    globals_ = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if globals_ is None or code is None or not failing:
        return None
    for name, reference in course.items():
        own = globals_.get(name)
        if name not in code.co_names or not isinstance(own, types.FunctionType) or own is fn:
            continue
        if (getattr(own, "__module__", "") or "").startswith("attention_course"):
            continue  # the course's own function: nothing to substitute
        swapped = types.FunctionType(code, {**globals_, name: reference}, fn.__name__, fn.__defaults__, fn.__closure__)
        swapped.__kwdefaults__ = fn.__kwdefaults__
        if all(passes(case, call(swapped, case)) for case in failing):
            return name
    return None

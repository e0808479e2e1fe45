"""Diagnosing a wrong answer: name the likely mistake, not the fix in code.

A `Mistake` knows what a function with that mistake returns (`predict`), so a
wrong answer that equals the prediction is recognised exactly: "softmax over
the wrong axis" is diagnosed because the student's numbers *are* the softmax
over the other axis, not because they look odd. What no prediction explains
gets a description of how it differs (shape, nan, largest difference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .calls import Opaque
from .cases import Case, shape_of


@dataclass(frozen=True)
class Mistake:
    """A common mistake, recognised by what it makes the function return."""

    id: str
    """A stable identifier, e.g. "no_max_subtraction" (used by tests and the gradebook)."""
    hint: str
    """What to think about, written for the student; never the code itself."""
    predict: Callable[..., object] | None = None
    """Returns what a function with this mistake returns for the same arguments
    (None when the mistake does not apply to those arguments)."""


MODIFIES_INPUT = Mistake(
    "modifies_input",
    "The function changed an argument it was given (an in-place operation such as `x -= ...`, "
    "`x[...] = ...` or `out=x` writes into the caller's array). Work on a new array instead: "
    "the caller may still need the original.",
)
RETURNS_NONE = Mistake(
    "returns_none",
    "The function returned None: is a `return` statement missing at the end?",
)
NOT_A_TUPLE = Mistake(
    "not_a_tuple",
    "This function must return several values as a tuple, in the order the task states.",
)
WRONG_SHAPE = Mistake(
    "wrong_shape",
    "Compare the shape you return with the shape the task asks for. Which axis is which? "
    "Print the shape of each intermediate result to see where it changes.",
)
NOT_FINITE = Mistake(
    "not_finite",
    "nan or inf appeared where every expected value is finite: something overflowed or divided by zero.",
)


DTYPE_CHANGED = Mistake(
    "dtype_changed",
    "The inputs are float32, and a float32 input must give a float32 result: the values are right, but "
    "somewhere the numbers became float64. If your function creates an array (np.zeros, np.full, np.empty "
    "default to float64) or mixes in a float64 array, give it the input's dtype (for example "
    "dtype=Q.dtype), then nothing is widened.",
)


def dtype_changed(expected, got) -> str | None:
    """A sentence if a float32 result came back as float64 (or another float type), else None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return None
        return next((m for m in (dtype_changed(e, g) for e, g in zip(expected, got)) if m), None)
    if (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and expected.dtype == np.float32
            and got.dtype.kind == "f" and got.dtype != np.float32):
        return f"right values, but the float32 inputs gave a result of dtype {got.dtype} (expected float32)"
    return None


def modified_arguments(case: Case, args_after: tuple, params: tuple[str, ...]) -> list[str]:
    """Names of the array arguments whose contents the call changed."""
    changed = []
    for name, before, after in zip(params, case.args, args_after):
        if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
            if before.shape != after.shape or not np.array_equal(before, after, equal_nan=True):
                changed.append(name)
    return changed


def difference(expected, got, tolerance: tuple[float, float], names: tuple[str, ...] | None = None) -> str | None:
    """None if `got` matches `expected`, else one sentence saying how it differs."""
    if isinstance(expected, tuple):
        names = names or tuple(f"item {i}" for i in range(len(expected)))
        if not isinstance(got, tuple):
            return f"expected a tuple ({', '.join(names)}), got {_kind(got)}"
        if len(got) != len(expected):
            return f"expected a tuple of {len(expected)} ({', '.join(names)}), got a tuple of {len(got)}"
        for name, e, g in zip(names, expected, got):
            msg = difference(e, g, tolerance)
            if msg:
                return f"{name}: {msg}"
        return None
    if not isinstance(got, np.ndarray):
        return f"expected an array of shape {expected.shape}, got {_kind(got)}"
    if got.shape != expected.shape:
        return f"expected shape {expected.shape}, got shape {got.shape}"
    if expected.dtype == bool:
        if got.dtype != bool:
            return f"expected booleans (True/False), got dtype {got.dtype}"
        wrong = np.argwhere(got != expected)
        if wrong.size:
            i = tuple(int(j) for j in wrong[0])
            return f"at index {_index(i)} expected {expected[i]}, got {got[i]} ({len(wrong)} entries differ)"
        return None
    if got.dtype == bool:
        return f"expected numbers, got booleans (dtype bool)"
    rtol, atol = tolerance
    exp = expected.astype(np.float64)
    val = got.astype(np.float64)
    close = np.isclose(val, exp, rtol=rtol, atol=atol, equal_nan=True)
    if close.all():
        return None
    bad = np.argwhere(~close)
    i = tuple(int(j) for j in bad[0]) if val.ndim else ()
    n_nan = int(np.isnan(val).sum() - np.isnan(exp).sum())
    others = f" ({len(bad)} of {val.size} entries differ)" if val.size > 1 else ""
    if n_nan > 0:
        return f"got nan at index {_index(i)} where {exp[i]:.4g} was expected{others}"
    return f"at index {_index(i)} expected {exp[i]:.4g}, got {val[i]:.4g}{others}"


def same_values(got, predicted, tolerance: tuple[float, float]) -> bool:
    """True if `got` equals `predicted` (same structure and shapes, nan where nan)."""
    if predicted is None:
        return False
    if isinstance(predicted, tuple):
        return (
            isinstance(got, tuple)
            and len(got) == len(predicted)
            and all(same_values(g, p, tolerance) for g, p in zip(got, predicted))
        )
    if not isinstance(got, np.ndarray) or not isinstance(predicted, np.ndarray):
        return False
    if got.shape != predicted.shape:
        return False
    if predicted.dtype == bool or got.dtype == bool:
        return got.dtype == predicted.dtype and bool(np.array_equal(got, predicted))
    rtol, atol = tolerance
    return bool(np.allclose(got.astype(np.float64), predicted.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))


def predict_all(mistakes: tuple[Mistake, ...], case: Case) -> dict[int, object]:
    """What each mistake (by position: several may share an id) would return for this input."""
    out = {}
    for position, mistake in enumerate(mistakes):
        if mistake.predict is None:
            continue
        with np.errstate(all="ignore"):
            try:
                out[position] = as_plain(mistake.predict(*case.args, **case.kwargs))
            except (ValueError, IndexError, TypeError, ZeroDivisionError):
                out[position] = None  # the mistake cannot even run on this input
    return out


def as_plain(value):
    """Predictions and references in the plain form of student results."""
    if isinstance(value, tuple):
        return tuple(as_plain(v) for v in value)
    return None if value is None else np.asarray(value)


def diagnose(case: Case, expected, got, predictions: dict[int, object], mistakes: tuple[Mistake, ...],
             names: tuple[str, ...] | None = None,
             specific: Callable[[Case, object, object], Mistake | None] | None = None) -> tuple[str, Mistake | None] | None:
    """Why `got` is wrong: (message, recognised mistake or None); None if it is right."""
    message = difference(expected, got, case.tolerance, names)
    if message is None:
        return None
    for position, mistake in enumerate(mistakes):
        if same_values(got, predictions.get(position), case.tolerance):
            return message, mistake
    if got is None:
        return message, RETURNS_NONE
    if specific is not None:
        found = specific(case, expected, got)
        if found is not None:
            return message, found
    if isinstance(expected, tuple) and not isinstance(got, tuple):
        return message, NOT_A_TUPLE
    if shape_of(got) != shape_of(expected) and not isinstance(expected, tuple):
        return message, WRONG_SHAPE
    if _has_non_finite(got) and not _has_non_finite(expected):
        return message, NOT_FINITE
    return message, None


def _has_non_finite(value) -> bool:
    if isinstance(value, tuple):
        return any(_has_non_finite(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all()


def _kind(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, Opaque):
        return str(value)
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    return f"an array of shape {value.shape}"


def _index(i: tuple) -> str:
    return str(i[0]) if len(i) == 1 else str(i)

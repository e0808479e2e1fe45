"""Diagnosing a wrong answer: name the likely mistake, not the fix in code.

A `Mistake` knows what a function with that mistake returns (`predict`), so a
wrong answer that equals the prediction is recognised exactly: "softmax over
the wrong axis" is diagnosed because the student's numbers *are* the softmax
over the other axis, not because they look odd. What no prediction explains
gets a description of how it differs (shape, nan, largest difference).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .calls import Opaque
from .cases import Case, shape_of
from .code import UNKNOWN, Code
from .differences import NOT_SATURATED, Saturation, describe


@dataclass(frozen=True)
class Lead:
    """A possibility a hint may offer ("if ..., that is why"), and when it can apply.

    A lead names a cause the grader did not check; it is offered only where it
    can be the cause: `applies(case, code)` looks at the input tried and at the
    words of the student's code (`code.Code`): no `-inf` lead for code and input
    without infinity, no mask lead for a function without a mask.
    """

    id: str
    """A stable identifier, e.g. "inf_minus_inf" (kept in the case's result, for `audit`)."""
    text: str
    """The sentence offered, an "if ..." that says what to look at."""
    applies: Callable[[Case, Code], bool] = lambda case, code: True
    """True where the possibility can apply to this input and this code."""


@dataclass(frozen=True)
class Premise:
    """What a hint states about the input it is shown with ("a hidden key scores far above", "scores above exp's
    limit"), as a condition checked on that input's numbers.

    A prediction can equal a function's output on an input where the story its hint tells does not hold (a nan
    row of an input with small scores is what a mask applied after exp gives, and what a guard-less softmax
    gives too): there the mistake is not named, and the input shown is one where it is. `audit` checks each
    premise again with its own evidence (`PREMISES` in tests/support/audit.py, by id).
    """

    id: str
    """A stable identifier, e.g. "hidden_key_far_above" (the key of its evidence in `audit.PREMISES`)."""
    holds: Callable[[Case], bool]
    """True where the input's numbers make the hint's statement about them true."""


@dataclass(frozen=True)
class Mistake:
    """A common mistake, recognised by what it makes the function return."""

    id: str
    """A stable identifier, e.g. "no_max_subtraction" (used by tests and the gradebook)."""
    hint: str
    """What to think about, written for the student; never the code itself. It states only what its prediction
    (or, for a diagnosis without one, what was observed) shows: a cause it did not check goes in `leads`."""
    predict: Callable[..., object] | None = None
    """Returns what a function with this mistake returns for the same arguments
    (None when the mistake does not apply to those arguments)."""
    leads: tuple[Lead, ...] = ()
    """Possibilities added after the hint, each only where it can apply (see `compose`)."""
    facts: tuple[tuple[str, object], ...] = ()
    """What the hint says it observed on this input, as data (("slice", (1,)), ("sum", 0.0)): `audit` checks them
    on the result."""
    premise: Premise | None = None
    """What the hint states about the input, checked: where it does not hold, the mistake is not named on that
    input (`premise_holds`), though its prediction still counts as evidence across the inputs."""


def compose(mistake: Mistake, case: Case, code: Code = UNKNOWN) -> tuple[str, tuple[str, ...]]:
    """The hint a student reads for `mistake` on `case`: its statement, then the leads that can apply to `code`.

    Returns (text, ids of the leads offered).
    """
    offered = [lead for lead in mistake.leads if lead.applies(case, code)]
    text = " ".join([mistake.hint] + [lead.text for lead in offered]).strip()
    return text, tuple(lead.id for lead in offered)


def code_uses_infinity(case: Case, code: Code) -> bool:
    """A lead about -inf applies: the input holds infinity, or the code writes it."""
    return code.infinity or any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and np.isinf(a).any()
                                for a in case.args)


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
    "nan or inf appeared where every expected value is finite. Print the intermediate arrays for this input "
    "to see which step first makes one.",
)


DTYPE_CHANGED = Mistake(
    "dtype_changed",
    "The values are right, but a result keeps the floating dtype of its input: float32 in gives float32 out, "
    "float64 in gives float64 out, as the package's own functions do. Somewhere your numbers changed type.",
    leads=(
        Lead("array_created", "If your function creates an array (np.zeros, np.full, np.empty default to float64) or "
             "mixes in a float64 array, give it the input's dtype (for example dtype=Q.dtype).",
             lambda case, code: code.uses("zeros", "full", "empty", "ones", "array", "zeros_like", "full_like",
                                          "empty_like", "ones_like", "asarray", "eye", "tri", "arange")),
        Lead("numpy_sqrt", "If it divides by np.sqrt(d_k), a NumPy float64 number: that widens float32 to float64 "
             "(since NumPy 2), where math.sqrt(d_k), a Python float, does not.",
             lambda case, code: case.float32 and code.uses("sqrt")),
        Lead("cast", "If it casts with astype, cast to the input's dtype.", lambda case, code: code.uses("astype")),
    ),
)


PRECISION_LOST = Mistake(
    "precision_lost",
    "The inputs are float64 and the result came back in a narrower type, so most of its digits were "
    "thrown away: a result keeps the floating dtype of its input.",
    leads=(Lead("float32_in_code", "If your function casts (astype(np.float32)) or creates its arrays with a smaller "
                "dtype, keep the input's dtype instead.", lambda case, code: code.float32),),
)


def precision_lost(expected, got) -> str | None:
    """A sentence if a float64 result came back as float32 or narrower, else None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return None
        return next((m for m in (precision_lost(e, g) for e, g in zip(expected, got)) if m), None)
    if (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and expected.dtype == np.float64
            and got.dtype.kind == "f" and got.dtype.itemsize < 8):
        return f"right values, but the float64 inputs gave a result of dtype {got.dtype} (expected float64)"
    return None


def dtype_changed(expected, got) -> str | None:
    """A sentence if a floating result came back in another dtype that is not narrower (float32 widened, a float
    returned as integers), else None."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return None
        return next((m for m in (dtype_changed(e, g) for e, g in zip(expected, got)) if m), None)
    if not (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray) and expected.dtype.kind == "f"):
        return None
    if got.dtype == expected.dtype or precision_lost(expected, got):
        return None
    inputs = "float32 inputs" if expected.dtype == np.float32 else "inputs"
    return f"right values, but the {inputs} gave a result of dtype {got.dtype} (expected {expected.dtype})"


def dtype_kept(expected, got) -> tuple[str, Mistake] | None:
    """The one dtype rule of every exercise: a right result keeps its input's floating dtype (float32 in, float32
    out; float64 in, float64 out; integers in, float64 out), as the package's own functions do.

    (message, mistake) when a result with the right values breaks it, else None.
    """
    narrowed = precision_lost(expected, got)
    if narrowed:
        return narrowed, PRECISION_LOST
    changed = dtype_changed(expected, got)
    if changed:
        return changed, DTYPE_CHANGED
    return None


def modified_arguments(case: Case, args_after: tuple, params: tuple[str, ...]) -> list[str]:
    """Names of the array arguments whose contents the call changed."""
    changed = []
    for name, before, after in zip(params, case.args, args_after):
        if isinstance(before, np.ndarray) and isinstance(after, np.ndarray):
            if before.shape != after.shape or not np.array_equal(before, after, equal_nan=True):
                changed.append(name)
    return changed


def difference(expected, got, tolerance: tuple[float, float], names: tuple[str, ...] | None = None, *,
               seen: bool = False, saturation: Saturation = NOT_SATURATED) -> str | None:
    """None if `got` matches `expected`, else one sentence saying how it differs.

    With `seen`, the sentence also names the kind of difference observed (a factor, another order, the first
    wrong row, a few digits only): for a failure whose hint does not already describe it. `saturation` (the
    input's, `Case.saturation`): the slices lying only on saturated softmax lines, never named right.
    """
    if isinstance(expected, tuple):
        names = names or tuple(f"item {i}" for i in range(len(expected)))
        if not isinstance(got, tuple):
            return f"expected a tuple ({', '.join(names)}), got {_kind(got)}"
        if len(got) != len(expected):
            return f"expected a tuple of {len(expected)} ({', '.join(names)}), got a tuple of {len(got)}"
        for name, e, g in zip(names, expected, got):
            msg = difference(e, g, tolerance, seen=seen, saturation=saturation)
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
    kind = describe(expected, got, tolerance, saturation=saturation) if seen else ""  # a factor, an order, the first wrong row
    if n_nan > 0:
        return f"got nan at index {_index(i)} where {exp[i]:.4g} was expected{others}{kind}"
    digits = next(d for d in (4, 6, 8, 10, 12, 17) if f"{exp[i]:.{d}g}" != f"{val[i]:.{d}g}" or d == 17)
    return f"at index {_index(i)} expected {exp[i]:.{digits}g}, got {val[i]:.{digits}g}{others}{kind}"


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


def premise_holds(mistake: Mistake, case: Case) -> bool:
    """True if what `mistake`'s hint states about its input holds on `case` (always, for a hint with no premise):
    only then may it be named there, whatever its prediction matched."""
    if mistake.premise is None:
        return True
    with np.errstate(all="ignore"):
        try:
            return bool(mistake.premise.holds(case))
        except (ValueError, IndexError, TypeError):
            return False


def as_plain(value):
    """Predictions and references in the plain form of student results."""
    if isinstance(value, tuple):
        return tuple(as_plain(v) for v in value)
    return None if value is None else np.asarray(value)


Specific = Callable[[Case, object, object, Code], "Mistake | None"]
"""A check's own diagnosis of a wrong value no prediction explains: (case, expected, got, code) -> a Mistake whose
hint says what was observed, or None."""


def diagnose(case: Case, expected, got, predictions: dict[int, object], mistakes: tuple[Mistake, ...],
             names: tuple[str, ...] | None = None, specific: Specific | None = None,
             code: Code = UNKNOWN) -> tuple[str, Mistake | None] | None:
    """Why `got` is wrong: (message, recognised mistake or None); None if it is right."""
    message = difference(expected, got, case.tolerance, names)
    if message is None:
        return None
    for position, mistake in enumerate(mistakes):
        if same_values(got, predictions.get(position), case.tolerance) and premise_holds(mistake, case):
            return message, mistake
    if got is None:
        return message, RETURNS_NONE
    if specific is not None:
        found = specific(case, expected, got, code)
        if found is not None:
            return message, found
    if isinstance(expected, tuple) and not isinstance(got, tuple):
        return message, NOT_A_TUPLE
    if shape_of(got) != shape_of(expected) and not isinstance(expected, tuple):
        return message, WRONG_SHAPE
    found = seen_difference(expected, got, case.tolerance, names, saturation=case.saturation)
    if found is None:  # no hint describes the difference: the message says what kind of difference it is
        message = difference(expected, got, case.tolerance, names, seen=True, saturation=case.saturation)
    return message, found


def _tuple_order(expected: tuple, got: tuple, tolerance) -> list[int] | None:
    """For results that are the expected items in another order: got[i] is expected[order[i]]; else None."""
    order: list[int] = []
    for g in got:
        j = next((j for j, e in enumerate(expected) if j not in order and same_values(g, e, tolerance)), None)
        if j is None:
            return None
        order.append(j)
    return order if order != sorted(order) else None


def _rows(indices: list[int], what: str, noun: str = "row", axis: bool = True) -> str:
    """"Row 3 is right" or "Rows 0, 2 and 5 are right" (the first eight, then "..."); `noun` "slice" names the
    slices along axis 0 of an array of 3 or more axes (heads, sequences), which are not its rows."""
    where = " along axis 0" if noun == "slice" and axis else ""
    if len(indices) == 1:
        return f"{noun.capitalize()} {indices[0]}{where} is {what}"
    shown = [str(i) for i in indices[:8]] + (["..."] if len(indices) > 8 else [])
    return f"{noun.capitalize()}s {', '.join(shown[:-1])} and {shown[-1]}{where} are {what}"


def seen_difference(expected, got, tolerance: tuple[float, float], names: tuple[str, ...] | None = None, *,
                    saturation: Saturation = NOT_SATURATED) -> Mistake | None:
    """What kind of difference a wrong result shows, when one is observed: a Mistake whose hint says only that.

    nan or inf and where it first appears; every value the same constant times
    (or plus) the expected one; the right values in another order (transposed,
    reversed, rows swapped); right up to some row and wrong after it, naming
    right no row that lies only on saturated softmax lines (`saturation`: a
    query that sees one key is right whatever the code does, and saying so
    would mislead; its other rows may be named); right to about float32's
    digits only. Values right to a few digits otherwise get no hint: the message
    says how many digits. Nothing is guessed: each is checked on the numbers,
    and `audit` checks it again.
    """
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return None
        names = names or tuple(f"item {i}" for i in range(len(expected)))
        order = _tuple_order(expected, got, tolerance)
        if order:
            moved = ", ".join(f"`{names[i]}` holds what `{names[j]}` should" for i, j in enumerate(order) if i != j)
            return Mistake("observed_items_reordered", f"The right results in another order: {moved}. Return them "
                           f"in the order ({', '.join(names)}).")
        for name, e, g in zip(names, expected, got):
            if difference(e, g, tolerance) is not None:
                found = seen_difference(e, g, tolerance, saturation=saturation)
                return None if found is None else dataclasses.replace(found, hint=f"In `{name}`: {found.hint}",
                                                                      facts=(("item", name),) + found.facts)
        return None
    if not (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray)) or got.shape != expected.shape:
        return None
    if expected.dtype.kind not in "fiu" or got.dtype.kind not in "fiu" or got.size == 0:
        return None
    exp, val = expected.astype(np.float64), got.astype(np.float64)
    rtol, atol = tolerance
    close = lambda a, b: bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))  # noqa: E731
    bad = ~np.isfinite(val) & np.isfinite(exp)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        # a row is axis 0 of a matrix only: axis 0 of (h, n, d) holds heads or sequences
        where = f"index {first[0]}" if len(first) == 1 else f"index {first}" + (f" (row {first[0]})" if len(first) == 2 else "")
        return Mistake("not_finite", f"nan or inf appears where every expected value is finite: the first at {where}, "
                       f"{int(bad.sum())} of {val.size} entries in all. Print the intermediate results for that "
                       "entry to see which step makes it.", facts=(("index", first), ("count", int(bad.sum()))))
    if not (np.isfinite(exp).all() and np.isfinite(val).all()):
        return None
    worst = float(np.max(np.abs(val - exp) / np.maximum(np.abs(exp), 1e-300)))
    if worst < 1e-2:  # right to a few digits: rounding, not a factor or a row gone wrong (the message says how many)
        return _float32_digits(expected, got)
    if val.size < 2:  # one number: any factor or offset would fit it
        return None
    every = not np.any(np.isclose(val, exp, rtol=rtol, atol=atol))  # "every value" only where every one differs
    scale = float(np.dot(val.ravel(), exp.ravel()) / np.dot(exp.ravel(), exp.ravel())) if np.any(exp) else 0.0
    if every and np.any(exp) and abs(scale - 1) > 1e-6 and scale != 0 and close(val, scale * exp):
        return Mistake("observed_constant_factor", f"Every value is {_constant(scale)} times the expected one. "
                       "Look for a factor your code applies once too often, or not at all.")
    shift = float(np.mean(val - exp))
    if every and abs(shift) > atol and close(val, exp + shift):
        return Mistake("observed_constant_offset", f"Every value is the expected one plus {shift:.6g}. Look for a "
                       "term your code adds (or subtracts) to every entry.")
    if close(np.sort(val.ravel()), np.sort(exp.ravel())):
        how = _rearranged(exp, val, close)
        return Mistake("observed_permutation", "The right numbers, in another order" + (f": {how}." if how else ".")
                       + " Check which axis is which at each step.")
    if val.ndim >= 2 and val.shape[0] > 1:
        right = [close(val[i], exp[i]) for i in range(val.shape[0])]
        noun = "row" if val.ndim == 2 else "slice"  # axis 0 of (h, n, d) holds heads or sequences, not rows
        quiet = saturation.quiet(0, val.shape[0], val.ndim)  # right whatever the code does: never named right
        free = [i for i in range(val.shape[0]) if i not in quiet]
        if free and right[free[0]] and not all(right):
            k = right.index(False)
            named = [i for i in free if right[i]]
            if any(right[k:]) or named != list(range(k)):  # not a pattern of named rows that ends at row k
                return Mistake("observed_some_rows_right",
                               f"{_rows(named, 'right', noun)} and "
                               f"{_rows([i for i, r in enumerate(right) if not r], 'wrong', noun, axis=False).lower()}. Compare the "
                               f"inputs of a right {noun} with those of a wrong one: what do the wrong ones have in "
                               "common?")
            right_rows = _rows(list(range(k)), "right", noun) if k <= 2 else (
                f"{noun.capitalize()}s 0 to {k - 1}{' along axis 0' if noun == 'slice' else ''} are right")
            return Mistake("observed_right_until", f"{right_rows}; {noun} {k} is the first wrong one. "
                           f"Look at what changes from one {noun} (query, tile or head) to the next in your code.")
    return None


FLOAT32_DIGITS = (6, 8)
"""Significant digits that float32 arithmetic leaves a result (its epsilon is 1.2e-7)."""


def digits_agreeing(expected: np.ndarray, got: np.ndarray) -> int:
    """How many significant digits `got` shares with `expected`, measured against the largest expected value."""
    exp, val = expected.astype(np.float64), got.astype(np.float64)
    scale = float(np.max(np.abs(exp))) or 1.0
    worst = float(np.max(np.abs(val - exp))) / scale
    return 17 if worst == 0 else max(0, int(np.floor(-np.log10(worst))))


def _float32_digits(expected: np.ndarray, got: np.ndarray) -> Mistake | None:
    """A float64 result right to about float32's digits only (a step computed in float32), observed; else None."""
    if expected.dtype != np.float64 or got.dtype != np.float64 or got.size == 0:
        return None
    digits = digits_agreeing(expected, got)
    low, high = FLOAT32_DIGITS
    if not low <= digits <= high:
        return None
    return Mistake(
        "observed_float32_digits",
        f"The values agree with the expected ones to about {digits} significant digits, about what float32 holds; "
        "float64, the dtype of these inputs and of your result, holds about 16.",
        leads=(Lead("float32_in_code", "If a step of your code computes in float32 (an astype(np.float32), an array "
                    "created as float32), that is where the digits go: keep the input's dtype throughout.",
                    lambda case, code: code.float32),),
        facts=(("digits", digits),))


def _constant(c: float) -> str:
    """c, and the simple number it is when it is one: 2, 1/2, √8, 1/√8."""
    for k in range(2, 4097):
        for value, text in ((k, f"exactly {k}"), (1 / k, f"exactly 1/{k}"), (np.sqrt(k), f"√{k}"), (1 / np.sqrt(k), f"1/√{k}")):
            if abs(c - value) <= 1e-9 * max(1.0, abs(value)):
                return f"{c:.6g} ({text})" if "√" in text else text
    return f"{c:.6g}"


def _rearranged(exp: np.ndarray, val: np.ndarray, close) -> str:
    """How `val` rearranges `exp`, when it is one of the simple ways, else ""."""
    if exp.ndim >= 2 and exp.shape[-1] == exp.shape[-2] and close(val, np.swapaxes(exp, -1, -2)):
        return "the expected array transposed (its last two axes swapped)"
    for axis in range(exp.ndim):
        if close(val, np.flip(exp, axis=axis)):
            return f"the expected array reversed along axis {axis}"
    if exp.ndim >= 1:
        order = [next((j for j in range(exp.shape[0]) if close(val[i], exp[j])), None) for i in range(exp.shape[0])]
        if None not in order and sorted(order) == list(range(exp.shape[0])):
            return f"the expected rows, in the order {order}"
    return ""


def _has_non_finite(value) -> bool:
    if isinstance(value, tuple):
        return any(_has_non_finite(v) for v in value)
    return isinstance(value, np.ndarray) and value.dtype.kind == "f" and not np.isfinite(value).all()


def _kind(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, Opaque):
        return str(value)
    if isinstance(value, tuple):  # a tuple, or a list of arrays (calls.to_plain keeps both as tuples)
        return f"{len(value)} separate items (a tuple or a list)"
    return f"an array of shape {value.shape}"


def _index(i: tuple) -> str:
    return str(i[0]) if len(i) == 1 else str(i)

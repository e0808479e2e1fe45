"""The numbers and rows a sentence of feedback states about a result, read back from its words and recomputed.

A hint or a message may say what the student's numbers show: "row 2 is
right", "rows 0 to 3 are right, row 4 is the first that differs", "slice 1
sums to 1.3", "the first at index (0, 2)", "every value is exactly 2 times
the expected one", "agree to about 7 significant digits". Each such claim is
found in the text here, whatever diagnosis wrote it, and checked on the value
the function returned and the expected one: a right row must be right and
must not lie only on saturated softmax lines (right there whatever the code
does), a wrong row wrong, a sum must be the sum, a factor the factor. `audit`
reports every claim that fails, and every number-bearing claim it cannot read
back is left to the diagnosis's own evidence (`audit.EVIDENCE`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from attention_course.grading.checks.engine.mistakes import digits_agreeing
from attention_course.grading.checks.engine.differences import NOT_SATURATED, Saturation

_NUMBER = r"(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|-?inf|nan)"
_INDICES = r"(\d+ to \d+|\d+(?:, (?:\d+|\.\.\.))*(?: and (?:\d+|\.\.\.))?)"
_ROWS = re.compile(r"\b(rows?|slices?|entry|entries) " + _INDICES + r"( along axis \d+)? (?:is|are) (right|wrong)\b",
                   re.IGNORECASE)
_FIRST = re.compile(r"\b(row|slice|entry) (\d+)( along axis \d+)? is the first (?:wrong one|that differs)\b",
                    re.IGNORECASE)
_SUM = re.compile(r"do not sum to " + _NUMBER + r" along the softmax axis: (?:slice (\d+|\([\d, ]+\))|the slice) "
                  r"sums to " + _NUMBER)
_NON_FINITE = re.compile(r"nan or inf appears where every expected value is finite: the first at index "
                         r"(\d+|\([\d, ]+\))(?: \(row (\d+)\))?, (\d+) of (\d+) entries")
_FACTOR = re.compile(r"[Ee]very (?:value is (?:exactly (\d+)|exactly 1/(\d+)|" + _NUMBER + r"(?: \([^)]*\))?) times the "
                     r"expected|entry is the expected one times (?:(\d+)(?![\d./])|1/(\d+)))")
_OFFSET = re.compile(r"[Ee]very (?:value|entry) is the expected one plus " + _NUMBER)
_DIGITS = re.compile(r"agree with the expected ones to about (\d+) significant digits")


@dataclass(frozen=True)
class Numbers:
    """What a claim is checked on: the returned array and the expected one (one item of a tuple result)."""

    value: np.ndarray
    expected: np.ndarray
    tolerance: tuple[float, float]
    saturation: Saturation = NOT_SATURATED
    """The slices that lie only on saturated softmax lines, recomputed from the input's scores."""
    weights_axis: int = -1
    """The axis a softmax's weights sum to 1 along (a sum's claim)."""


_ITEM = re.compile(r"^(?:In `(\w+)`: |(\w+): )")


def untrue_in_result(text: str, value, expected, names: tuple[str, ...] | None, tolerance: tuple[float, float],
                     saturation: Saturation = NOT_SATURATED, axis: int = -1) -> list[str]:
    """`untrue` on the item of a result a sentence is about: the one it names ("In `output`: ...", "weights: ..."),
    the weights for a sum, else the first item that differs; the result itself when it is one array."""
    def pick(wanted: str | None):
        if not isinstance(value, tuple):
            return value, expected
        if not isinstance(expected, tuple) or len(value) != len(expected):
            return None, None
        labels = names or tuple(f"item {i}" for i in range(len(expected)))
        if wanted in labels:
            return value[labels.index(wanted)], expected[labels.index(wanted)]
        for v, e in zip(value, expected):
            if not (isinstance(v, np.ndarray) and isinstance(e, np.ndarray) and v.shape == e.shape
                    and np.allclose(v, e, rtol=tolerance[0], atol=tolerance[1], equal_nan=True)):
                return v, e
        return None, None

    problems = []
    for sentence in re.split(r"(?<=\.) (?=[A-Z])", text):
        named = _ITEM.match(sentence)
        wanted = named and (named.group(1) or named.group(2))
        v, e = pick("weights" if _SUM.search(sentence) and names and "weights" in names else wanted)
        if not (isinstance(v, np.ndarray) and isinstance(e, np.ndarray) and v.shape == e.shape
                and v.dtype.kind in "fiu" and e.dtype.kind in "fiu"):
            continue  # a shape, a type: no rows or numbers of it to read back
        problems += untrue(sentence, Numbers(v, e, tolerance, saturation, axis))
    return problems


def untrue(text: str, numbers: Numbers) -> list[str]:
    """Every claim about rows and numbers in `text` that does not hold on `numbers` (empty if all hold)."""
    problems = []
    for match in _ROWS.finditer(text):
        problems += _rows_claim(match, numbers)
    for match in _FIRST.finditer(text):
        axis = _axis(match.group(1), match.group(3), numbers.value.ndim)
        k = int(match.group(2))
        right = _right_slices(numbers, axis)
        if axis is None or k >= len(right) or right[k] or not all(right[:k]):
            problems.append(f"{match.group(0)!r}: {match.group(1)} {k} is not the first that differs")
    for check in (_sum_claim, _non_finite_claim, _factor_claim, _offset_claim, _digits_claim):
        problems += check(text, numbers)
    return problems


def _axis(noun: str, along: str | None, ndim: int) -> int | None:
    """The axis a noun names: a row is along the second-to-last axis, an entry along the only one, a slice along
    the axis named (axis 0 when none is)."""
    noun = noun.lower()
    if noun.startswith("entr"):
        return 0 if ndim == 1 else None
    if noun.startswith("row"):
        return ndim - 2 if ndim >= 2 else None
    return int(along.split()[-1]) if along else 0


def _indices(text: str) -> list[int]:
    if " to " in text:
        first, last = (int(t) for t in text.split(" to "))
        return list(range(first, last + 1))
    return [int(t) for t in re.findall(r"\d+", text)]


def _right_slices(numbers: Numbers, axis: int | None) -> list[bool]:
    if axis is None or axis >= numbers.value.ndim:
        return []
    rtol, atol = numbers.tolerance
    close = np.isclose(numbers.value.astype(np.float64), numbers.expected.astype(np.float64), rtol=rtol, atol=atol,
                       equal_nan=True)
    return [bool(c) for c in np.moveaxis(close, axis, 0).reshape(close.shape[axis], -1).all(axis=1)]


def _rows_claim(match: re.Match, numbers: Numbers) -> list[str]:
    noun, indices, along, verdict = match.group(1), _indices(match.group(2)), match.group(3), match.group(4).lower()
    noun = {"rows": "row", "slices": "slice", "entries": "entry"}.get(noun.lower(), noun.lower())  # one at a time
    axis = _axis(noun, along, numbers.value.ndim)
    right = _right_slices(numbers, axis)
    if axis is None or any(i >= len(right) for i in indices):
        return [f"{match.group(0)!r}: the result has no such {noun.lower()}"]
    if verdict == "wrong":
        return [f"{match.group(0)!r}: {noun.lower()} {i} is right" for i in indices if right[i]]
    quiet = numbers.saturation.quiet(axis, len(right), numbers.value.ndim)
    return ([f"{match.group(0)!r}: {noun.lower()} {i} is wrong" for i in indices if not right[i]]
            + [f"{match.group(0)!r}: {noun.lower()} {i} lies only on saturated softmax rows, right whatever the code "
               "does" for i in indices if i in quiet])


def _index(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in re.findall(r"\d+", text))


def _sum_claim(text: str, numbers: Numbers) -> list[str]:
    problems = []
    for match in _SUM.finditer(text):
        meant, where, total = match.group(1), match.group(2), match.group(3)
        with np.errstate(all="ignore"):
            got = numbers.value.astype(np.float64).sum(axis=numbers.weights_axis)
            want = numbers.expected.astype(np.float64).sum(axis=numbers.weights_axis)
        at = _index(where) if where else ()
        if len(at) != got.ndim or any(i >= n for i, n in zip(at, got.shape)):
            problems.append(f"{match.group(0)!r}: the weights have no such slice")
        elif f"{float(got[at]):.4g}" != total or f"{float(want[at]):.4g}" != meant:
            problems.append(f"{match.group(0)!r}: that slice sums to {float(got[at]):.4g}, and should to "
                            f"{float(want[at]):.4g}")
    return problems


def _non_finite_claim(text: str, numbers: Numbers) -> list[str]:
    problems = []
    for match in _NON_FINITE.finditer(text):
        at, row, count, size = _index(match.group(1)), match.group(2), int(match.group(3)), int(match.group(4))
        bad = ~np.isfinite(numbers.value.astype(np.float64)) & np.isfinite(numbers.expected.astype(np.float64))
        first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else None
        if row is not None and (numbers.value.ndim != 2 or int(row) != at[0]):  # a row is an index of a matrix
            problems.append(f"{match.group(0)!r}: the result has no row {row} there (it has {numbers.value.ndim} axes)")
        if first != at or int(bad.sum()) != count or numbers.value.size != size:
            problems.append(f"{match.group(0)!r}: the first nan or inf is at {first}, {int(bad.sum())} in all")
    return problems


def _factor_claim(text: str, numbers: Numbers) -> list[str]:
    problems = []
    for match in _FACTOR.finditer(text):
        groups = match.groups()  # "Every value is ... times the expected", or "every entry is ... times k (1/k)"
        whole, inverse, written = groups[:3] if any(groups[:3]) else (groups[3], groups[4], None)
        factor = float(whole) if whole else 1 / float(inverse) if inverse else float(written)
        rtol, atol = numbers.tolerance
        if not np.allclose(numbers.value.astype(np.float64), factor * numbers.expected.astype(np.float64),
                           rtol=max(rtol, 1e-5), atol=atol):
            problems.append(f"{match.group(0)!r}: the values are not the expected ones times {factor:.6g}")
        elif _some_right(numbers):
            problems.append(f"{match.group(0)!r}: some entries are right, which 'every' denies")
    return problems


def _some_right(numbers: Numbers) -> bool:
    """Some entries equal the expected ones within the tolerance (the message counts them as not differing)."""
    rtol, atol = numbers.tolerance
    return bool(np.any(np.isclose(numbers.value.astype(np.float64), numbers.expected.astype(np.float64), rtol=rtol,
                                  atol=atol, equal_nan=True)))


def _offset_claim(text: str, numbers: Numbers) -> list[str]:
    problems = []
    for match in _OFFSET.finditer(text):
        shift = float(match.group(1))
        rtol, atol = numbers.tolerance
        exp = numbers.expected.astype(np.float64)
        if not np.allclose(numbers.value.astype(np.float64), exp + shift, rtol=rtol, atol=max(atol, 1e-5 * abs(shift))):
            problems.append(f"{match.group(0)!r}: the values are not the expected ones plus {shift:.6g}")
        elif _some_right(numbers):
            problems.append(f"{match.group(0)!r}: some entries are right, which 'every' denies")
    return problems


def _digits_claim(text: str, numbers: Numbers) -> list[str]:
    return [f"{m.group(0)!r}: they agree to {digits_agreeing(numbers.expected, numbers.value)} digits"
            for m in _DIGITS.finditer(text) if digits_agreeing(numbers.expected, numbers.value) != int(m.group(1))]

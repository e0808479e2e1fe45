"""Answer sheets of exercise 0 as a student with one mistake writes them, for the tests of the hand-worked check.

`sheet_with(example, mistake)` is the right sheet up to the step where the
mistake happens, that step as the mistake makes it, and every later step
computed right from those wrong numbers and rounded as asked (carried
forward): the sheet on which a marker takes off that one step's mark.
"""

from __future__ import annotations

import numpy as np

from attention_course.chapters.worked_example import WorkedExample
from attention_course.grading.checks.exercises.by_hand import DECIMALS, ENTRIES, StepMistake, rounded_answers


def _plain(value: np.ndarray, entry: str):
    rounded = np.round(np.asarray(value, dtype=np.float64), DECIMALS[entry]) if entry in DECIMALS else np.asarray(value)
    if entry not in DECIMALS:
        return [int(x) for x in rounded.ravel()] if rounded.ndim else int(rounded)
    return [float(x) for x in rounded.ravel()] if rounded.ndim else float(rounded)


def carried_forward(example: WorkedExample, sheet: dict, after: str) -> dict:
    """`sheet` with every numeric step after `after` computed from the sheet's own (rounded) numbers."""
    out = dict(sheet)
    later = {
        "scaled_scores": lambda s: np.asarray(s["dot_products"]) / np.sqrt(example.d_k),
        "exponentials": lambda s: np.exp(np.asarray(s["scaled_scores"])),
        "exp_sum": lambda s: np.sum(s["exponentials"]),
        "weights": lambda s: np.asarray(s["exponentials"]) / s["exp_sum"],
        "output": lambda s: np.asarray(s["weights"]) @ example.values,  # (n,) x (n, d_v) -> (d_v,)
    }
    for entry in ENTRIES[ENTRIES.index(after) + 1:]:
        if entry in later:
            out[entry] = _plain(later[entry](out), entry)
    return out


def sheet_with(example: WorkedExample, mistake: StepMistake) -> dict | None:
    """The sheet of a student who makes only `mistake` (None if it cannot show in this example's numbers)."""
    wrong = mistake.predict()
    if wrong is None:
        return None
    sheet = rounded_answers(example)
    sheet[mistake.step] = _plain(wrong, mistake.step)
    return carried_forward(example, sheet, mistake.step)

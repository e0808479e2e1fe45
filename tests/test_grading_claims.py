"""Tests for tests/support/claims.py: the rows and numbers a sentence states, read back."""

import dataclasses

import numpy as np

from attention_course.core.softmax import softmax
from support import claims
from support.audit import audit
from attention_course.grading.checks.engine.mistakes import Lead, Mistake
from attention_course.grading.checks.engine.differences import Saturation, saturated_lines
from attention_course.grading.checks.exercises.softmax import SOFTMAX

TOLERANCE = (1e-9, 1e-12)


def numbers(value, expected, **kwargs):
    return claims.Numbers(np.asarray(value, dtype=float), np.asarray(expected, dtype=float), TOLERANCE, **kwargs)


def test_a_row_named_right_or_wrong_is_checked_on_the_numbers():
    expected = np.arange(12.0).reshape(4, 3)
    got = expected.copy()
    got[2:] += 1.0  # rows 0 and 1 right, rows 2 and 3 wrong
    seen = numbers(got, expected)
    for true in ("Rows 0 and 1 are right and rows 2 and 3 are wrong.", "Rows 0 to 1 are right; row 2 is the first wrong one.",
                 "rows 0 to 1 are right, row 2 is the first that differs"):
        assert claims.untrue(true, seen) == [], true
    for false in ("Row 2 is right.", "Rows 0, 1 and 2 are right", "row 1 is wrong", "row 3 is the first wrong one",
                  "Row 7 is right."):
        assert claims.untrue(false, seen), false


def test_a_row_that_sees_one_key_is_never_named_right_even_when_it_is():
    scores = np.array([[0.5, -np.inf, -np.inf], [0.1, 0.2, -np.inf], [0.3, 0.1, 0.2]])  # causal: row 0 one-hot
    expected = softmax(scores)
    got = expected.copy()
    got[2] = got[2][::-1]
    seen = numbers(got, expected, saturation=Saturation(saturated_lines(scores)))
    assert claims.untrue("Row 1 is right and row 2 is wrong.", seen) == []
    assert claims.untrue("Rows 0 and 1 are right and row 2 is wrong.", seen)  # row 0: right whatever the code does


def test_a_sum_a_factor_an_offset_and_digits_are_recomputed():
    expected = softmax(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]))
    scaled = numbers(expected * 1.3, expected)
    assert claims.untrue("The weights do not sum to 1 along the softmax axis: slice 1 sums to 1.3.", scaled) == []
    assert claims.untrue("The weights do not sum to 1 along the softmax axis: slice 1 sums to 1.2.", scaled)
    doubled = numbers(expected * 2, expected)
    assert claims.untrue("Every value is exactly 2 times the expected one.", doubled) == []
    assert claims.untrue("Every value is exactly 1/2 times the expected one.", doubled)
    shifted = numbers(expected + 0.25, expected)
    assert claims.untrue("Every value is the expected one plus 0.25. Look", shifted) == []
    assert claims.untrue("Every value is the expected one plus 0.5. Look", shifted)
    rounded = numbers(expected.astype(np.float32).astype(np.float64), expected)
    assert claims.untrue("The values agree with the expected ones to about 3 significant digits", rounded)


def test_the_audit_catches_a_hint_whose_words_state_a_wrong_sum_though_its_facts_are_right():
    def scaled(x, axis=-1):
        return softmax(x, axis=axis) * 1.3  # every slice sums to 1.3

    def lying(case, expected, got, code):  # the facts say 1.3, the words 1.2
        axis = case.kwargs.get("axis", -1)
        return Mistake("does_not_sum_to_1", "The weights do not sum to 1 along the softmax axis: slice 0 sums to 1.2.",
                       facts=(("slice", (0,)), ("sum", float(got.sum(axis=axis)[0])), ("axis", axis)))

    check = dataclasses.replace(SOFTMAX, mistakes=(), specific=lying,
                                make_cases=lambda rngs: [c for c in SOFTMAX.make_cases(rngs) if c.label ==
                                                         "three rows of five scores"])
    problems = audit(check, scaled)
    assert problems and all("sums to 1.2" in p for p in problems), problems
    honest = dataclasses.replace(check, specific=lambda case, expected, got, code: Mistake(
        "does_not_sum_to_1", "The weights do not sum to 1 along the softmax axis: slice 0 sums to 1.3.",
        facts=(("slice", (0,)), ("sum", 1.3), ("axis", -1))))
    assert audit(honest, scaled) == []


def test_the_audit_catches_a_lead_that_names_a_wrong_row_right():
    def last_row_doubled(x, axis=-1):
        w = softmax(x, axis=axis)
        w[-1] *= 2
        return w

    row_lead = Lead("tiles_skipped", "Row 2 is right: look at the last one.")  # a lead the audit otherwise trusts
    check = dataclasses.replace(SOFTMAX, mistakes=(), specific=lambda case, expected, got, code: Mistake(
        "does_not_sum_to_1", "Some slices do not sum to 1.", leads=(row_lead,)),
        make_cases=lambda rngs: [c for c in SOFTMAX.make_cases(rngs) if c.label == "three rows of five scores"])
    problems = audit(check, last_row_doubled)
    assert any("'Row 2 is right'" in p and "row 2 is wrong" in p for p in problems), problems


def test_every_entry_shifted_is_untrue_beside_entries_that_are_right():
    """"every entry is the expected one plus 1" beside "1 of 3 entries differ": the large entries are within the
    tolerance of the expected ones, and 'every' would deny it."""
    expected = np.array([1e6, 2e6, 3.0])
    shifted = expected + 1.0
    tolerance = (1e-6, 1e-9)
    said = "every entry is the expected one plus 1"
    assert claims.untrue_in_result(said, shifted, expected, None, tolerance)
    assert not claims.untrue_in_result(said, np.array([2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0]), None, tolerance)
    from attention_course.grading.checks.engine.mistakes import difference, seen_difference
    assert "every entry" not in difference(expected, shifted, tolerance, seen=True)
    assert seen_difference(expected, shifted, tolerance) is None or "Every value" not in seen_difference(expected, shifted, tolerance).hint

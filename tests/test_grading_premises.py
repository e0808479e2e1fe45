"""Tests for attention_course/grading/checks/engine/premises.py: a hint states of its input only what holds there.

Every mistake of the registry whose hint says something of its input (a score above exp's limit, a hidden key far
above the visible ones, a query with nothing to attend to) carries that as a `Premise`; on every input where the
premise does not hold but the mistake's numbers still differ from the right ones (its symptom without its cause),
a function that returns exactly those numbers is not told that mistake, and the audit checks each premise with
evidence of its own.
"""

import numpy as np
import pytest

from attention_course.grading.checks.engine import calls
from support.audit import PREMISES
from attention_course.grading.checks.engine.check import case_verdict
from attention_course.grading.checks.engine.mistakes import as_plain, premise_holds, same_values
from attention_course.grading.checks.exercises import EXERCISES

CHECKS = [check for exercise in EXERCISES for check in exercise.checks]
WITH_PREMISES = [check for check in CHECKS if any(m.premise is not None for m in check.mistakes)]


def test_every_premise_of_the_registry_has_the_audits_evidence():
    used = {m.premise.id for check in CHECKS for m in check.mistakes if m.premise is not None}
    assert used and used <= set(PREMISES), used - set(PREMISES)


def test_the_premises_of_the_canned_hints_are_there():
    """The hints that tell a story about their input: each states it as a premise, not in words alone."""
    stated = {(check.name, m.id) for check in CHECKS for m in check.mistakes if m.premise is not None}
    for name, mistake in (("masked_attention", "masked_after_exp"), ("padded_attention", "masked_after_exp"),
                          ("backward_query_tile", "masked_after_exp"), ("flash_attention", "no_running_max"),
                          ("flash_attention", "running_max_starts_at_zero"), ("flash_attention", "running_max_per_tile"),
                          ("softmax", "no_max_subtraction"), ("softmax", "nan_for_empty_row"),
                          ("softmax", "global_max"), ("sink_attention", "sink_share_overflows")):
        assert (name, mistake) in stated, (name, mistake)


@pytest.mark.parametrize("check", WITH_PREMISES, ids=[c.name for c in WITH_PREMISES])
def test_a_symptom_without_its_premise_is_not_told_that_mistake(check):
    shown = 0
    for i, case in enumerate(check.cases):
        expected = check.expected(i)
        for position, mistake in enumerate(check.mistakes):
            predicted = check.predictions(i).get(position)
            if mistake.premise is None or predicted is None or premise_holds(mistake, case):
                continue
            if same_values(as_plain(predicted), as_plain(expected), case.tolerance):
                continue  # no symptom here either
            shown += 1
            result = case_verdict(check, i, calls.Observation(calls.CallOutcome.RETURNED, value=predicted,
                                                       args_after=tuple(a if isinstance(a, np.ndarray) else None
                                                                        for a in case.args)))
            assert result.mistake != mistake.id, (case.label, mistake.id, result.hint)
    # where a premise matters: the inputs with nothing to see, small scores beside a nan, are in these checks
    assert shown > 0 or check.name in {"attention", "padded_attention", "rope_attention", "decode_step"}, check.name

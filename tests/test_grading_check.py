"""Tests for attention_course/grading/checks/engine/check.py and run.py: the engine shared by notebook and batch."""

import dataclasses

import numpy as np

from attention_course.grading.checks.engine import calls, results
from attention_course.grading.checks.engine.calls import Observation
from attention_course.grading.checks.engine.check import case_verdict
from attention_course.grading.checks.engine.run import checks_left_to_the_grader, check_in_process
from attention_course.grading.checks.exercises.scores import SCALE_SCORES
from attention_course.grading.checks.exercises.softmax import SOFTMAX


def good_softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0.0))  # a slice of -inf only: shifted by 0
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def test_visible_and_hidden_inputs():
    visible = check_in_process(SOFTMAX, good_softmax)
    everything = check_in_process(SOFTMAX, good_softmax, hidden=True)
    assert visible.passed and everything.passed
    assert visible.max_score == len(SOFTMAX.indices(False)) < everything.max_score == len(SOFTMAX.cases)
    assert not any(c.hidden for c in visible.cases) and any(c.hidden for c in everything.cases)


def test_not_a_function():
    r = check_in_process(SOFTMAX, 3)
    assert r.status == results.CheckStatus.FAILED and "check_softmax(softmax)" in r.hint


def test_a_right_value_that_modifies_its_input_fails():
    def in_place(x, axis=-1):
        out = good_softmax(x, axis)
        x[...] = 0
        return out

    r = check_in_process(SOFTMAX, in_place)
    assert not r.passed and r.mistake == "modifies_input" and "in place" in r.message


def test_after_a_timeout_the_other_inputs_are_skipped():
    def slow(scores, d_k):
        while True:
            pass

    r = check_in_process(dataclasses.replace(SCALE_SCORES, seconds=0.2), slow)  # the check's limit, shortened
    statuses = [c.status for c in r.cases]
    assert statuses[0] == results.CheckStatus.TIMEOUT and set(statuses[1:]) == {results.CheckStatus.SKIPPED}


def test_inside_the_batch_worker_notebook_checks_step_aside():
    with checks_left_to_the_grader():
        r = check_in_process(SOFTMAX, good_softmax)
    assert r.status == results.CheckStatus.SKIPPED
    assert check_in_process(SOFTMAX, good_softmax).status == results.CheckStatus.PASSED  # and only inside the context


def test_judge_reads_every_kind_of_observation():
    kinds = {
        Observation(calls.CallOutcome.NOT_IMPLEMENTED): results.CheckStatus.NOT_ATTEMPTED,
        Observation(calls.CallOutcome.MISSING): results.CheckStatus.MISSING,
        Observation(calls.CallOutcome.TIMEOUT): results.CheckStatus.TIMEOUT,
        Observation(calls.CallOutcome.OUT_OF_MEMORY, error="MemoryError"): results.CheckStatus.FAILED,
        Observation(calls.CallOutcome.EXITED, error="called sys.exit(1)"): results.CheckStatus.FAILED,
        Observation(calls.CallOutcome.CRASHED, error="crashed (segmentation fault)"): results.CheckStatus.FAILED,
        Observation(calls.CallOutcome.RAISED, error="ValueError: operands could not be broadcast"): results.CheckStatus.FAILED,
        Observation(calls.CallOutcome.SKIPPED): results.CheckStatus.SKIPPED,
    }
    for obs, status in kinds.items():
        assert case_verdict(SOFTMAX, 1, obs).status == status, obs
    broadcast = case_verdict(SOFTMAX, 1, Observation(calls.CallOutcome.RAISED, error="ValueError: operands could not be broadcast"))
    assert "keepdims" not in broadcast.hint  # the line that failed is not known: no operation is named
    seen = case_verdict(SOFTMAX, 1, Observation(calls.CallOutcome.RAISED, error="ValueError: operands could not be broadcast"
                                          + calls.AT_LINE + "e = np.exp(x - np.max(x, axis=axis))"))
    assert "keepdims" in seen.hint


def test_judge_of_a_returned_value_matches_the_in_process_check():
    x = SOFTMAX.cases[3].args[0]  # large scores
    naive = np.full(x.shape, np.nan)  # what exp(x) / exp(x).sum() gives: inf / inf
    r = case_verdict(SOFTMAX, 3, Observation(calls.CallOutcome.RETURNED, value=naive, args_after=(x.copy(),)))
    assert r.mistake == "no_max_subtraction" and r.status == results.CheckStatus.FAILED
    # what is said instead if another input contradicts the prediction: the diagnosis without predictions, a
    # verdict of its own, which names only what it observed
    fallback = r.unpredicted
    assert isinstance(fallback, results.Verdict) and r.matches == ("no_max_subtraction",)
    assert fallback.status == results.CheckStatus.FAILED and fallback.mistake == "not_finite"
    assert "nan" in fallback.message and fallback.hint and fallback.leads == ("overflow",)
    assert r.verdict.mistake == "no_max_subtraction" and r.judged(r.verdict) == r


def test_the_hooks_of_a_check_are_grouped_by_what_they_do():
    from attention_course.grading.checks.engine.check import Check, Judging, Presenting
    from attention_course.grading.checks.exercises import BY_ID

    judging = [f.name for f in dataclasses.fields(Judging)]
    presenting = [f.name for f in dataclasses.fields(Presenting)]
    fields = {f.name: f for f in dataclasses.fields(Check)}
    assert set(judging) <= set(fields) and set(presenting) <= set(fields) and not set(judging) & set(presenting)
    # a group's defaults are the check's: a check built without a hook judges and words the standard way
    assert all(fields[f.name].default == f.default for f in dataclasses.fields(Judging) + dataclasses.fields(Presenting))
    checks = [check for exercise in BY_ID.values() for check in exercise.checks]
    assert any(c.judging.compare for c in checks) and any(c.presenting.pass_note for c in checks)
    for check in checks:
        assert all(getattr(check.judging, name) is getattr(check, name) for name in judging), check.name
        assert all(getattr(check.presenting, name) is getattr(check, name) for name in presenting), check.name
    # the groups follow the check they were read from (`dataclasses.replace`, as the follow-up makes its own)
    bare = dataclasses.replace(SOFTMAX, refine=lambda cases, found: found, every_failure_shown=True)
    assert bare.judging.refine is not None and bare.presenting.every_failure_shown
    assert SOFTMAX.judging.refine is None and not SOFTMAX.presenting.every_failure_shown


def test_an_input_is_saturated_when_a_slice_of_its_softmax_rows_is_nearly_one_hot():
    from attention_course.grading.checks.engine.differences import saturated_slice

    assert saturated_slice(np.array([[50.0, 0.0, -3.0], [0.1, 0.2, 0.3]]))  # row 0: weight 1 on one key
    assert not saturated_slice(np.array([[1.0, 0.0, -3.0], [0.1, 0.2, 0.3]]))
    assert not saturated_slice(np.array([[-np.inf, -np.inf], [0.1, 0.2]]))  # nothing to attend to: weights 0
    assert saturated_slice(np.array([[0.0, -np.inf], [0.1, 0.2]]))  # a query that sees one key
    heads = np.zeros((2, 3, 4))
    heads[0, :, 0] = 100.0  # head 0: every row one-hot
    heads[1, 0, 0] = 100.0  # head 1: one row only
    assert saturated_slice(heads)
    heads[0, 2, 0] = 0.0
    assert not saturated_slice(heads)  # no head made only of one-hot rows
    assert not saturated_slice(np.array([100.0, 0.0]))  # one row: no slices to name right


def test_only_the_rows_of_a_causal_input_that_see_one_key_are_kept_from_being_named_right():
    from attention_course.core.masks import causal_mask
    from attention_course.grading.checks.engine.differences import Saturation, saturated_lines

    rng = np.random.default_rng(0)
    causal = np.where(causal_mask(4), rng.standard_normal((4, 4)), -np.inf)  # row 0 sees key 0 alone
    assert Saturation(saturated_lines(causal)).quiet(0, 4, 2) == {0}
    large = rng.standard_normal((3, 5)) * 1000  # every row one-hot
    assert Saturation(saturated_lines(large)).quiet(0, 3, 2) == {0, 1, 2}
    assert saturated_lines(rng.standard_normal((3, 5))) is None  # nothing saturated: every row may be named
    heads = np.stack([causal, causal])  # (h, n_q, n_k): no head is all one-hot, row 0 of every head is
    lines = Saturation(saturated_lines(heads))
    assert lines.quiet(0, 2, 3) == set() and lines.quiet(1, 4, 3) == {0}
    assert Saturation(every=True).quiet(0, 3, 2) == {0, 1, 2}  # marked by hand: no row is named


def test_a_causal_input_names_its_unsaturated_rows_and_never_its_one_key_row():
    from attention_course.grading.checks.engine.mistakes import seen_difference
    from attention_course.grading.checks.exercises.masks import MASKED_ATTENTION

    case = next(c for c in MASKED_ATTENTION.cases if c.label == "causal, four tokens")
    assert case.saturated and case.saturation.quiet(0, 4, 2) == {0}
    expected = MASKED_ATTENTION.expected(MASKED_ATTENTION.cases.index(case))[0]
    got = expected.copy()
    got[3] += 1.0  # rows 0 to 2 right, row 3 wrong
    seen = seen_difference(expected, got, case.tolerance, saturation=case.saturation)
    assert seen.id == "observed_some_rows_right" and seen.hint.startswith("Rows 1 and 2 are right and row 3 is wrong")


def test_a_check_with_scores_marks_its_saturated_inputs_itself():
    from attention_course.grading.checks.exercises.attention import ATTENTION
    from attention_course.grading.checks.exercises.decoding import DECODE_STEP

    marked = {c.label for c in ATTENTION.cases if c.saturated}
    assert "large scores" in marked and "four queries, four keys" not in marked
    assert "a single key" in marked  # one key: its weight is 1 whatever the scores
    assert {c.label for c in DECODE_STEP.cases if c.saturated} >= {
        "large scores, 2 query heads sharing 1, 3 cached tokens", "an empty cache: the first token"}

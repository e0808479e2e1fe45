"""Tests for attention_course/grading/checks/engine/results.py: summaries and their text and HTML forms."""

from attention_course.grading.checks.engine import results
from attention_course.grading.checks.engine.results import CaseResult, CheckResult


def case(status, label="an input", message="", hint="", mistake=None, got="[1.0]", hidden=False):
    return CaseResult(label, "x = [1.0, 2.0]", "[0.5, 0.5]", got, status, message, hint, mistake, hidden)


def test_all_passed_is_passed_with_full_score():
    r = CheckResult.from_cases("softmax", "softmax", [case(results.CheckStatus.PASSED), case(results.CheckStatus.PASSED)])
    assert (r.passed, r.score, r.max_score, r.status) == (True, 2, 2, results.CheckStatus.PASSED)
    assert r.first_failure is None


def test_first_failure_gives_message_hint_and_mistake():
    cases = [
        case(results.CheckStatus.PASSED),
        case(results.CheckStatus.FAILED, "large scores", "got nan", "subtract the max", "no_max_subtraction"),
        case(results.CheckStatus.FAILED, "other", "differs", "another hint", "other_mistake"),
    ]
    r = CheckResult.from_cases("softmax", "softmax", cases)
    assert not r.passed and r.status == results.CheckStatus.FAILED and r.score == 1 and r.max_score == 3
    assert (r.message, r.hint, r.mistake) == ("got nan", "subtract the max", "no_max_subtraction")


def test_message_hint_and_shown_input_come_from_the_same_failure():
    unrecognised = case(results.CheckStatus.FAILED, "first", message="differs")
    recognised = case(results.CheckStatus.FAILED, "second", message="nan at index 2", hint="later hint", mistake="m")
    r = CheckResult.from_cases("f", "f", [unrecognised, recognised])
    assert (r.message, r.hint, r.mistake) == ("nan at index 2", "later hint", "m")
    assert r.first_failure is recognised and "first failing input: second" in str(r)
    alone = CheckResult.from_cases("f", "f", [unrecognised, case(results.CheckStatus.FAILED, "third", message="also")])
    assert (alone.message, alone.hint, alone.mistake) == ("differs", "", None)


def test_headline_says_passed_failed_or_not_attempted_per_function():
    assert CheckResult.from_cases("f", "softmax", [case(results.CheckStatus.PASSED), case(results.CheckStatus.FAILED)]).headline() == (
        "✗ softmax failed; 1/2 inputs passed")
    assert "softmax passed; 1/1" in CheckResult.from_cases("f", "softmax", [case(results.CheckStatus.PASSED)]).headline()
    assert "softmax not attempted; 0/1" in CheckResult.from_cases("f", "softmax", [case(results.CheckStatus.NOT_ATTEMPTED)]).headline()


def test_a_note_on_a_right_answer_is_said_without_losing_the_mark():
    r = CheckResult.from_cases("f", "f", [case(results.CheckStatus.PASSED, message="note: dtype float64"), case(results.CheckStatus.PASSED)])
    assert r.passed and r.score == 2 and "(note: dtype float64)" in r.message


def test_stub_is_not_attempted_and_says_so():
    r = CheckResult.from_cases("softmax", "softmax", [case(results.CheckStatus.NOT_ATTEMPTED)] * 3)
    assert r.status == results.CheckStatus.NOT_ATTEMPTED and r.score == 0 and not r.passed
    assert "NotImplementedError" in r.message
    assert "not attempted" in str(r)


def test_missing_function_status():
    r = CheckResult.from_cases("f", "f", [case(results.CheckStatus.MISSING, message="no function called `f`")])
    assert r.status == results.CheckStatus.MISSING and r.message == "no function called `f`"


def test_timeout_then_skipped_is_a_failure():
    r = CheckResult.from_cases("f", "f", [case(results.CheckStatus.TIMEOUT, message="took longer than 10 s"), case(results.CheckStatus.SKIPPED)])
    assert r.status == results.CheckStatus.FAILED and r.message == "took longer than 10 s" and r.score == 0


def test_text_shows_input_expected_got_and_hint():
    r = CheckResult.from_cases("softmax", "softmax",
                               [case(results.CheckStatus.FAILED, "large scores", "got nan", "subtract the max", got="[nan, nan]", hidden=True)])
    text = str(r)
    for needed in ("✗ softmax failed; 0/1 inputs passed", "large scores", "x = [1.0, 2.0]", "expected: [0.5, 0.5]", "got: [nan, nan]",
                   "hint: subtract the max", "only the batch grader"):
        assert needed in text, needed
    assert repr(r).startswith("CheckResult(")


def test_passed_text_lists_short_results_like_a_measurement():
    r = CheckResult.from_cases("spread", "spread", [case(results.CheckStatus.PASSED, "d_k = 128", got="11.29")])
    assert "d_k = 128: got 11.29" in str(r)


def test_html_escapes_and_shows_the_table():
    r = CheckResult.from_cases("f", "f", [case(results.CheckStatus.FAILED, "<b>", "a < b", "use <", got="<script>")])
    page = r._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    for needed in ("input", "expected", "got", "hint", "&lt;b&gt;"):
        assert needed in page


def test_skipped_result_for_batch_mode():
    r = CheckResult.skipped("f", "f", "checked by the batch grader")
    assert r.status == results.CheckStatus.SKIPPED and r.max_score == 0 and not r.passed

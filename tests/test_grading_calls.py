"""Tests for attention_course/grading/checks/engine/calls.py: calling a student's function safely."""

import time

import numpy as np
import pytest

from attention_course.grading.checks.engine import calls
from attention_course.grading.checks.engine.calls import Opaque, observe_call, to_plain


def test_to_plain_keeps_numbers_only():
    assert isinstance(to_plain([1, 2, 3]), np.ndarray)
    assert to_plain(None) is None
    assert to_plain(3.5).shape == ()
    pair = to_plain((np.zeros(2), [1.0, 2.0]))
    assert isinstance(pair, tuple) and all(isinstance(p, np.ndarray) for p in pair)
    assert to_plain({"a": 1}) == Opaque("a dict")
    assert to_plain("text") == Opaque("a str")
    assert to_plain(np.array(["a"])) == Opaque("an array of dtype <U1")
    assert isinstance(to_plain([np.zeros(2), np.zeros(3)]), tuple)  # ragged: a list of items


def test_to_plain_copies():
    arr = np.zeros(3)
    plain = to_plain(arr)
    arr[0] = 1
    assert plain[0] == 0


def test_returned_value_and_untouched_arguments():
    x = np.array([1.0, 2.0])
    obs = observe_call(lambda a: a * 2, (x,))
    assert obs.status == calls.CallOutcome.RETURNED
    np.testing.assert_array_equal(obs.value, [2.0, 4.0])
    np.testing.assert_array_equal(obs.args_after[0], [1.0, 2.0])


def test_in_place_changes_are_seen_but_never_reach_the_caller():
    x = np.array([1.0, 2.0])

    def halve(a):
        a /= 2
        return a

    obs = observe_call(halve, (x,))
    np.testing.assert_array_equal(obs.args_after[0], [0.5, 1.0])
    np.testing.assert_array_equal(x, [1.0, 2.0])


def test_stub_is_not_implemented():
    def stub(x):
        raise NotImplementedError()

    assert observe_call(stub, (1,)).status == calls.CallOutcome.NOT_IMPLEMENTED


def test_exceptions_are_results():
    obs = observe_call(lambda: 1 / 0, ())
    assert obs.status == calls.CallOutcome.RAISED and obs.error.splitlines()[0] == "ZeroDivisionError: division by zero"
    assert calls.error_line(obs.error) == "obs = observe_call(lambda: 1 / 0, ())"  # the caller's own line


def test_sys_exit_and_memory_error_are_named():
    def leave():
        raise SystemExit(3)

    def hog():
        raise MemoryError()

    assert observe_call(leave, ()).status == calls.CallOutcome.EXITED
    assert observe_call(hog, ()).status == calls.CallOutcome.OUT_OF_MEMORY


def test_time_limit_stops_a_loop():
    def loop():
        while True:
            pass

    start = time.monotonic()
    obs = observe_call(loop, (), seconds=0.2)
    assert obs.status == calls.CallOutcome.TIMEOUT and time.monotonic() - start < 2


def test_keyboard_interrupt_reaches_the_student():
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        observe_call(interrupted, ())
    assert observe_call(interrupted, (), reraise_interrupt=False).status == calls.CallOutcome.RAISED


def test_peak_memory_is_measured():
    obs = observe_call(lambda n: np.ones((n, n)).sum(), (500,), measure_memory=True)
    assert obs.peak_bytes >= 500 * 500 * 8
    assert observe_call(lambda: 1, (), measure_memory=False).peak_bytes is None


def test_numpy_warnings_do_not_escape():
    obs = observe_call(lambda x: np.exp(x), (np.array([1000.0]),))  # overflow: a RuntimeWarning normally
    assert obs.status == calls.CallOutcome.RETURNED and np.isinf(obs.value[0])


def test_an_answer_sheet_is_read_not_called():
    sheet = {"a": [1, 2], "b": np.float32(0.5), "c": "card", "d": ..., "e": [1, ...]}
    obs = observe_call(sheet, ("a", "b", "c", "d", "e", "missing"))
    assert obs.status == calls.CallOutcome.RETURNED
    a, b, c, d, e, missing = obs.value
    assert a.dtype == np.float64 and a.tolist() == [1.0, 2.0] and b.dtype == np.float64 and float(b[0]) == 0.5
    assert str(c) == "a str" and d is None and missing is None and isinstance(e, calls.Opaque)
    assert sheet["b"].dtype == np.float32 and sheet["d"] is ...  # read, never changed


def test_a_sheet_with_nothing_filled_in_is_not_attempted():
    assert observe_call({"a": ..., "b": None}, ("a", "b")).status == calls.CallOutcome.NOT_IMPLEMENTED
    assert observe_call({}, ("a",)).status == calls.CallOutcome.NOT_IMPLEMENTED

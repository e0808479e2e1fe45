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
    assert obs.status == calls.RETURNED
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

    assert observe_call(stub, (1,)).status == calls.NOT_IMPLEMENTED


def test_exceptions_are_results():
    obs = observe_call(lambda: 1 / 0, ())
    assert obs.status == calls.RAISED and obs.error.splitlines()[0] == "ZeroDivisionError: division by zero"
    assert calls.error_line(obs.error) == "obs = observe_call(lambda: 1 / 0, ())"  # the caller's own line


def test_sys_exit_and_memory_error_are_named():
    def leave():
        raise SystemExit(3)

    def hog():
        raise MemoryError()

    assert observe_call(leave, ()).status == calls.EXITED
    assert observe_call(hog, ()).status == calls.OUT_OF_MEMORY


def test_time_limit_stops_a_loop():
    def loop():
        while True:
            pass

    start = time.monotonic()
    obs = observe_call(loop, (), seconds=0.2)
    assert obs.status == calls.TIMEOUT and time.monotonic() - start < 2


def test_keyboard_interrupt_reaches_the_student():
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        observe_call(interrupted, ())
    assert observe_call(interrupted, (), reraise_interrupt=False).status == calls.RAISED


def test_peak_memory_is_measured():
    obs = observe_call(lambda n: np.ones((n, n)).sum(), (500,), measure_memory=True)
    assert obs.peak_bytes >= 500 * 500 * 8
    assert observe_call(lambda: 1, (), measure_memory=False).peak_bytes is None


def test_numpy_warnings_do_not_escape():
    obs = observe_call(lambda x: np.exp(x), (np.array([1000.0]),))  # overflow: a RuntimeWarning normally
    assert obs.status == calls.RETURNED and np.isinf(obs.value[0])

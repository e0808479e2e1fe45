"""Tests for attention_course/grading/checks/engine/cases.py: inputs, where their random values come from, how they are shown."""

import dataclasses
import threading

import numpy as np

from attention_course.grading.checks.engine.calls import Opaque
from attention_course.grading.checks.engine.cases import Case, Rngs, format_value, generated, shape_of
from attention_course.grading.checks.exercises import EXERCISES


def test_small_arrays_are_printed_with_their_shape():
    text = format_value(np.array([[1.0, 2.0], [3.0, 4.5]]))
    assert "4.5" in text and "shape (2, 2)" in text


def test_large_arrays_are_summarised():
    text = format_value(np.arange(1000.0).reshape(100, 10))
    assert text == "array of shape (100, 10), values from 0 to 999"


def test_nan_in_a_large_array_is_mentioned():
    arr = np.zeros(100)
    arr[3] = np.nan
    assert "contains nan" in format_value(arr)


def test_float32_is_named_and_scalars_are_short():
    assert "float32" in format_value(np.ones(2, dtype=np.float32))
    assert format_value(np.asarray(11.313708498984761)) == "11.3137"
    assert format_value(None) == "None" and format_value(Opaque("a dict")) == "a dict"


def test_tuples_name_their_items():
    text = format_value((np.zeros(2), np.ones(2)), ("output", "weights"))
    assert text.startswith("a tuple of 2") and "output = " in text and "weights = " in text


def test_describe_names_every_argument():
    c = Case("x", (np.array([1.0, 2.0]), 4), {"axis": 0}, note="made up")
    assert c.describe(("scores", "d_k")) == "scores = np.array([1.0, 2.0])\nd_k = 4\naxis = 0\n(made up)"


def test_small_inputs_are_copyable_code_that_rebuilds_them_exactly():
    arrays = (np.array([[0.1, -np.inf], [1 / 3, 2.0]]), np.array([True, False]),
              np.random.default_rng(0).standard_normal(5).astype(np.float32), np.arange(3))
    text = Case("c", arrays).describe(("a", "b", "c", "d"))
    namespace = {"np": np}
    exec(text, namespace)
    for name, arr in zip("abcd", arrays):
        assert namespace[name].dtype == arr.dtype and np.array_equal(namespace[name], arr), name


def test_generated_inputs_show_the_code_that_made_them():
    c = generated("big", "rng = np.random.default_rng(5)\nx = rng.standard_normal((10, 10))", ("x",))
    assert c.describe(("x",)).startswith("rng = np.random.default_rng(5)")
    assert np.array_equal(c.args[0], np.random.default_rng(5).standard_normal((10, 10)))


def test_generated_inputs_draw_from_the_generators_given():
    code = "rng = np.random.default_rng(5)\nx = rng.standard_normal(3)"
    mine = generated("secret", code, ("x",), Rngs(81273), hidden=True)
    assert np.array_equal(mine.args[0], np.random.default_rng([81273, 5]).standard_normal(3))
    assert np.array_equal(generated("big", code, ("x",), Rngs()).args[0], np.random.default_rng(5).standard_normal(3))


def _arguments(check, secret):
    """The arguments of every input of `check`, with its hidden inputs drawn from `Rngs(secret)`, built afresh."""
    built = dataclasses.replace(check, hidden_rngs=Rngs(secret)) if secret is not None else dataclasses.replace(check)
    return [[(np.asarray(a).dtype.str, np.shape(a), np.asarray(a).tobytes()) for a in case.args] for case in built.cases]


def test_threads_building_cases_with_different_secrets_at_once_get_their_own_inputs():
    checks = [check for exercise in EXERCISES for check in exercise.checks]
    secrets = (None, 5, 6)  # the package's own inputs beside two assignments' redrawn ones
    expected = {s: [_arguments(check, s) for check in checks] for s in secrets}  # one at a time
    assert expected[5] != expected[6]
    start, found, errors = threading.Barrier(len(secrets)), {}, []

    def build(secret):
        try:
            start.wait()
            found[secret] = [[_arguments(check, secret) for check in checks] for _ in range(2)]
        except Exception as err:  # noqa: BLE001 -- reported below, with the thread's secret
            errors.append((secret, err))

    threads = [threading.Thread(target=build, args=(s,)) for s in secrets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    for secret in secrets:
        for attempt in found[secret]:
            for check, mine, wanted in zip(checks, attempt, expected[secret]):
                assert mine == wanted, (check.name, secret)


def test_hidden_inputs_are_described_never_shown():
    c = Case("a secret", (np.array([123.456, 7.0]),), hidden=True)
    text = c.describe(("x",))
    assert "a secret" in text and "shape (2,)" in text and "123" not in text


def test_float32_inputs_are_compared_more_loosely():
    assert Case("a", (np.ones(2, dtype=np.float32),)).tolerance > Case("b", (np.ones(2),)).tolerance


def test_shape_of():
    assert shape_of(np.zeros((2, 3))) == "shape (2, 3)"
    assert shape_of((1, 2)) == "a tuple of 2"

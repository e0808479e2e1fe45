import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attention_course import softmax
from reference import softmax_row

finite = st.floats(-1e4, 1e4, allow_nan=False, width=64)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6), elements=finite))
def test_matches_naive_rows_and_sums_to_one(x):
    got = softmax(x)
    want = np.array([softmax_row(row) for row in x.reshape(-1, x.shape[-1])]).reshape(x.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(got.sum(axis=-1), 1.0, rtol=1e-12)


def test_huge_scores_do_not_overflow():
    x = np.array([1e4, 1e4 - 1.0, -1e4])
    with np.errstate(over="raise", invalid="raise"):
        got = softmax(x)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, [1 / (1 + math.exp(-1)), math.exp(-1) / (1 + math.exp(-1)), 0.0])


def test_shift_invariance():
    x = np.array([[0.5, 3.0, 0.2, 1.0]])
    np.testing.assert_allclose(softmax(x + 700.0), softmax(x), rtol=1e-12)


def test_minus_inf_gets_exactly_zero_and_all_minus_inf_row_gives_zeros():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]])
    got = softmax(x)
    assert got[0, 1] == 0.0
    assert np.array_equal(got[1], np.zeros(3))
    assert not np.isnan(got).any()


def test_nan_propagates_to_its_row_only():
    got = softmax(np.array([[0.0, np.nan], [0.0, 1.0]]))
    assert np.isnan(got[0]).all()
    assert np.isfinite(got[1]).all()


@pytest.mark.parametrize("axis", [0, 1, -2])
def test_axis(axis):
    x = np.arange(12.0).reshape(3, 4)
    got = softmax(x, axis=axis)
    np.testing.assert_allclose(got.sum(axis=axis), 1.0)
    np.testing.assert_allclose(np.moveaxis(got, axis, -1), softmax(np.moveaxis(x, axis, -1)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept(dtype):
    assert softmax(np.ones((2, 3), dtype=dtype)).dtype == dtype


def test_integers_become_float64_and_input_is_not_modified():
    x = np.array([1, 6, 2])
    before = x.copy()
    assert softmax(x).dtype == np.float64
    assert np.array_equal(x, before)
    y = np.array([1.0, 2.0])
    softmax(y)
    assert np.array_equal(y, [1.0, 2.0])


def test_bad_input():
    with pytest.raises(TypeError, match="x must hold real numbers"):
        softmax(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="scalar"):
        softmax(3.0)
    with pytest.raises(ValueError, match="axis 2 is out of range for x with shape \\(2, 3\\)"):
        softmax(np.ones((2, 3)), axis=2)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_16_bit_scores_are_computed_in_float32_and_returned_in_their_dtype(dtype):
    rng = np.random.default_rng(40)
    x = (rng.standard_normal((3, 4096)) * 4).astype(dtype)
    x[1, 7:] = -np.inf  # few keys
    x[2] = -np.inf  # nothing to attend to
    w = softmax(x)
    assert w.dtype == dtype
    want = softmax(x.astype(np.float32)).astype(dtype)  # the float32 weights, rounded once
    np.testing.assert_array_equal(w, want)
    assert np.all(w[2] == 0) and np.all(w[1, 7:] == 0)
    # summed in float32, a row of 4096 weights still sums to 1 to within the rounding of each weight
    assert abs(float(np.sum(w[0].astype(np.float64))) - 1) < 4096 * float(ml_dtypes.finfo(dtype).eps) * w[0].astype(np.float64).max() + 1e-2


def test_8_bit_floats_are_refused_with_the_dtypes_that_are_taken():
    with pytest.raises(TypeError, match=r"x must hold real numbers \(float16, bfloat16.*float8_e4m3fn"):
        softmax(np.zeros(3, dtype=ml_dtypes.float8_e4m3fn))

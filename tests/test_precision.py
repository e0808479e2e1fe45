"""Tests for attention_course/chapters/precision.py: sums and attention in a chosen precision."""

import ml_dtypes
import numpy as np
import pytest

from attention_course import scaled_dot_product_attention, softmax
from attention_course.chapters.precision import (
    attention_with_accumulation,
    matmul_accumulated,
    relative_error,
    running_sum,
    softmax_accumulated,
)

BF16 = ml_dtypes.bfloat16


def test_running_sum_rounds_every_partial_sum():
    # In bfloat16, 256 + 1 is 256 (8 significant bits): a sum of ones stops at 256.
    assert float(running_sum(np.ones(1000), BF16)) == 256.0
    assert float(running_sum(np.ones(1000), np.float16)) == 1000.0  # 11 bits: exact up to 2048
    assert float(running_sum(np.ones(3000), np.float16)) == 2048.0
    partial = running_sum(np.ones((2, 5)), np.float32, cumulative=True)
    np.testing.assert_array_equal(partial, [[1, 2, 3, 4, 5]] * 2)
    np.testing.assert_array_equal(running_sum(np.ones((3, 4)), np.float64, axis=0), [3, 3, 3, 3])


def test_matmul_accumulated_is_a_matmul_in_float64_and_rounds_in_16_bits():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 5)), rng.standard_normal((5, 4))
    np.testing.assert_allclose(matmul_accumulated(a, b, np.float64), a @ b, rtol=1e-14)
    assert matmul_accumulated(a, b, BF16).dtype == BF16
    assert float(matmul_accumulated(np.ones((1, 600)), np.ones((600, 1)), BF16)[0, 0]) == 256.0


def test_softmax_accumulated_in_float64_is_the_softmax_and_in_16_bits_drifts():
    rng = np.random.default_rng(1)
    s = rng.standard_normal((2, 4096))
    np.testing.assert_allclose(softmax_accumulated(s, np.float64), softmax(s), rtol=1e-12)
    w = softmax_accumulated(s, BF16).astype(np.float64)
    assert w.sum(axis=-1).min() > 1.5  # the sum of 4096 exponentials stalled far below its value


def test_attention_with_float64_accumulation_is_plain_attention():
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((4, 8)), rng.standard_normal((30, 8)), rng.standard_normal((30, 3))
    got = attention_with_accumulation(q, k, v, np.float64, np.float64)
    np.testing.assert_allclose(got, scaled_dot_product_attention(q, k, v), rtol=1e-12)
    bf = attention_with_accumulation(q, k, v, BF16, np.float32)
    assert bf.dtype == BF16 and relative_error(bf, got) < 0.02


def test_relative_error_and_bad_dtypes():
    assert relative_error([1.0, 2.0], [1.0, 2.0]) == 0
    assert relative_error([1.0, 3.0], [1.0, 2.0]) == 0.5
    with pytest.raises(ValueError, match="same shape"):
        relative_error([1.0], [1.0, 2.0])
    with pytest.raises(TypeError, match="dtype must be a float dtype"):
        running_sum([1.0], np.int32)
    with pytest.raises(ValueError, match="one head"):
        attention_with_accumulation(np.ones((2, 2, 2)), np.ones((2, 2)), np.ones((2, 2)), BF16, np.float32)

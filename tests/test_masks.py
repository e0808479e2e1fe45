import ml_dtypes
import numpy as np
import pytest

from attention_course import causal_mask, padding_mask
from attention_course.core.masks import check_attn_mask, mask_to_bias
from reference import causal_allowed


@pytest.mark.parametrize("n_q, n_k", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask_is_top_left_lower_triangle(n_q, n_k):
    got = causal_mask(n_q, n_k)
    assert got.dtype == bool and got.shape == (n_q, n_k)
    assert np.array_equal(got, causal_allowed(n_q, n_k))


def test_causal_mask_square_by_default():
    assert np.array_equal(causal_mask(3), causal_mask(3, 3))


def test_causal_mask_of_the_seed_sentence_hides_the_future_from_card():
    card = 1  # "my card was blocked"
    assert causal_mask(4)[card].tolist() == [True, True, False, False]


@pytest.mark.parametrize("bad", [0, -2, 2.5, True, "3"])
def test_causal_mask_rejects_bad_sizes(bad):
    with pytest.raises((TypeError, ValueError), match="n_q"):
        causal_mask(bad)


def test_padding_mask():
    got = padding_mask([3, 1, 0], 4)
    assert got.shape == (3, 1, 4) and got.dtype == bool
    assert got[:, 0].tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [False, False, False, False],
    ]


@pytest.mark.parametrize(
    "lengths, match",
    [([5], "between 0 and n_k=4"), ([-1], "between 0 and n_k=4"), ([[1, 2]], "shape \\(B,\\)"), ([1.5], "integers")],
)
def test_padding_mask_rejects_bad_lengths(lengths, match):
    with pytest.raises((TypeError, ValueError), match=match):
        padding_mask(lengths, 4)


def test_check_attn_mask_errors_name_the_problem():
    with pytest.raises(ValueError, match="not both"):
        check_attn_mask(np.ones((2, 2), bool), True, 2, 2)
    with pytest.raises(ValueError, match=r"broadcastable to \(\.\.\., n_q, n_k\) = \(\.\.\., 2, 3\); got shape \(2, 2\)"):
        check_attn_mask(np.ones((2, 2), bool), False, 2, 3)
    with pytest.raises(TypeError, match="astype\\(bool\\)"):
        check_attn_mask(np.ones((2, 3), int), False, 2, 3)
    with pytest.raises(TypeError, match="is_causal must be True or False"):
        check_attn_mask(None, "yes", 2, 3)


def test_check_attn_mask_accepts_broadcastable_shapes():
    for shape in [(3,), (1, 3), (2, 1), (5, 2, 3), (5, 1, 1, 3)]:
        assert check_attn_mask(np.ones(shape, bool), False, 2, 3).shape == shape


def test_mask_to_bias():
    bias = mask_to_bias(np.array([True, False]), np.float32)
    assert bias.dtype == np.float32
    assert bias.tolist() == [0.0, -np.inf]
    float_mask = np.array([0.5, -1.0])
    assert mask_to_bias(float_mask, np.float64).tolist() == [0.5, -1.0]


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_16_bit_masks_fill_minus_infinity_and_float_masks_are_taken(dtype):
    bias = mask_to_bias(np.array([True, False, True]), dtype)
    assert bias.dtype == dtype
    np.testing.assert_array_equal(bias.astype(np.float32), [0.0, -np.inf, 0.0])
    float_mask = np.array([[0.0, -np.inf]], dtype=dtype)
    assert check_attn_mask(float_mask, False, 3, 2).dtype == dtype

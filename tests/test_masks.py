import ml_dtypes
import numpy as np
import pytest

from attention_course import causal_mask, padding_mask, sliding_window_mask
from attention_course.core.masks import check_attn_mask, chunked_causal_mask, mask_to_bias
from reference import causal_allowed, lower_right_causal_allowed, sliding_window_allowed


@pytest.mark.parametrize("n_q, n_k", [(1, 1), (4, 4), (3, 5), (5, 3)])
def test_causal_mask_is_top_left_lower_triangle(n_q, n_k):
    got = causal_mask(n_q, n_k)
    assert got.dtype == bool and got.shape == (n_q, n_k)
    assert np.array_equal(got, causal_allowed(n_q, n_k))


@pytest.mark.parametrize("n_q, n_k", [(1, 1), (4, 4), (1, 6), (3, 5), (5, 3)])
def test_lower_right_causal_mask_puts_the_queries_last(n_q, n_k):
    got = causal_mask(n_q, n_k, lower_right=True)
    assert got.dtype == bool and got.shape == (n_q, n_k)
    assert np.array_equal(got, lower_right_causal_allowed(n_q, n_k))
    assert got[-1].all()  # the newest query sees every key


def test_one_new_query_against_a_cache_sees_every_key_only_lower_right():
    assert causal_mask(1, 5, lower_right=True).tolist() == [[True] * 5]
    assert causal_mask(1, 5).tolist() == [[True, False, False, False, False]]  # the top-left trap


def test_more_queries_than_keys_lower_right_leaves_the_first_queries_nothing():
    mask = causal_mask(5, 3, lower_right=True)
    assert not mask[:2].any() and mask[2:].any(axis=1).all()


def test_both_alignments_agree_on_square_masks():
    assert np.array_equal(causal_mask(6, lower_right=True), causal_mask(6))


@pytest.mark.parametrize("lower_right", [True, False])
@pytest.mark.parametrize("n_q, n_k, window", [(6, 6, 3), (1, 9, 4), (3, 9, 4), (4, 4, 1), (5, 5, 10), (7, 4, 2)])
def test_sliding_window_mask_sees_the_last_window_positions(n_q, n_k, window, lower_right):
    got = sliding_window_mask(n_q, n_k, window, lower_right=lower_right)
    assert got.dtype == bool and got.shape == (n_q, n_k)
    assert np.array_equal(got, sliding_window_allowed(n_q, n_k, window, lower_right))
    assert (got.sum(axis=1) <= window).all()


def test_a_window_as_long_as_the_keys_is_the_causal_mask():
    assert np.array_equal(sliding_window_mask(4, 9, 9), causal_mask(4, 9, lower_right=True))
    assert np.array_equal(sliding_window_mask(4, 9, 9, lower_right=False), causal_mask(4, 9))
    assert np.array_equal(sliding_window_mask(5, None, 2), causal_mask(5) & ~np.tri(5, k=-2, dtype=bool))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"window": 0}, ValueError, "window"), ({"window": 2.0}, TypeError, "window"),
    ({"window": 2, "lower_right": "yes"}, TypeError, "lower_right"), ({"window": 2, "n_k": 0}, ValueError, "n_k"),
])
def test_sliding_window_mask_rejects_bad_arguments(kwargs, error, match):
    args = {"n_q": 3, "n_k": 4, **kwargs}
    with pytest.raises(error, match=match):
        sliding_window_mask(**args)


def _chunked_allowed(n_q, n_k, chunk, lower_right=True, first_position=0):
    """Query i at position p, key j at position s (both from first_position): s <= p and s // chunk == p // chunk."""
    offset = n_k - n_q if lower_right else 0
    pos_q = [first_position + offset + i for i in range(n_q)]
    return np.array([[first_position + j <= p and (first_position + j) // chunk == p // chunk for j in range(n_k)]
                     for p in pos_q])


@pytest.mark.parametrize("lower_right", [True, False])
@pytest.mark.parametrize("first_position", [0, 1, 7])
@pytest.mark.parametrize("n_q, n_k, chunk", [(1, 1, 1), (6, 6, 3), (13, 13, 5), (1, 9, 4), (3, 11, 4), (7, 4, 2),
                                             (5, 5, 10), (9, 9, 1)])
def test_chunked_mask_sees_the_earlier_keys_of_its_own_chunk(n_q, n_k, chunk, first_position, lower_right):
    got = chunked_causal_mask(n_q, n_k, chunk, lower_right=lower_right, first_position=first_position)
    assert got.dtype == bool and got.shape == (n_q, n_k)
    assert np.array_equal(got, _chunked_allowed(n_q, n_k, chunk, lower_right, first_position))
    assert (got.sum(axis=1) <= chunk).all()


def test_chunked_mask_differs_from_a_window_at_a_chunk_start():
    """Query 5 with chunks of 5 starts a chunk and sees only itself; a window of 5 would show it keys 1..5."""
    mask = chunked_causal_mask(8, None, 5)
    assert mask[5].tolist() == [False] * 5 + [True, False, False]
    assert mask[4].tolist() == [True] * 5 + [False] * 3
    assert np.array_equal(chunked_causal_mask(8, None, 8), causal_mask(8))  # one chunk: the causal mask
    assert np.array_equal(chunked_causal_mask(3, 3, 1), np.eye(3, dtype=bool))  # chunks of 1: only itself


@pytest.mark.parametrize("kwargs, error, match", [
    ({"chunk_size": 0}, ValueError, "chunk_size"), ({"chunk_size": 2.0}, TypeError, "chunk_size"),
    ({"chunk_size": 2, "first_position": -1}, ValueError, "first_position"),
    ({"chunk_size": 2, "first_position": 1.5}, ValueError, "first_position"),
    ({"chunk_size": 2, "lower_right": 1}, TypeError, "lower_right"),
])
def test_chunked_mask_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        chunked_causal_mask(**{"n_q": 3, "n_k": 4, **kwargs})


def test_lower_right_must_be_a_bool():
    with pytest.raises(TypeError, match="lower_right"):
        causal_mask(2, 3, lower_right=1)


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

"""Tests for attention_course.tiled.online_softmax: one step, the readable tiled loop, and its trace."""

import numpy as np
import pytest

from attention_course import flash_attention, scaled_dot_product_attention, softmax
from attention_course.tiled.online_softmax import (
    OnlineSoftmaxState,
    online_softmax_update,
    tiled_attention,
    trace_online_softmax,
)
from reference import attention_2d


@pytest.mark.parametrize("n_q, n_k, d, block", [(8, 8, 4, 4), (3, 10, 5, 4), (5, 7, 2, 3), (4, 4, 3, 1), (6, 5, 3, 9)])
def test_final_output_is_plain_attention(n_q, n_k, d, block):
    rng = np.random.default_rng(n_q * 100 + n_k)
    q, k, v = rng.normal(size=(n_q, d)), rng.normal(size=(n_k, d)), rng.normal(size=(n_k, d + 1))
    tr = trace_online_softmax(q, k, v, block)
    _, expected = attention_2d(q, k, v)
    np.testing.assert_allclose(tr.output, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tr.output, flash_attention(q, k, v, block_size=block, backend="numpy"), rtol=1e-12, atol=1e-14)
    assert len(tr.steps) == -(-n_k // block)


def test_after_each_tile_the_estimate_is_attention_over_the_keys_so_far():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(8, 4)), rng.normal(size=(8, 4)), rng.normal(size=(8, 2))
    tr = trace_online_softmax(q, k, v, block_size=3)
    for st in tr.steps:
        stop = st.keys[1]
        np.testing.assert_allclose(st.output, scaled_dot_product_attention(q, k[:stop], v[:stop]), rtol=1e-12)


def test_running_max_rescale_and_denominator():
    # One query, keys chosen so the second tile raises the max from 1 to 3.
    q = np.array([[1.0]])
    k = np.array([[1.0], [0.0], [3.0], [2.0]])
    v = np.arange(4.0)[:, None]
    tr = trace_online_softmax(q, k, v, block_size=2, scale=1.0)
    first, second = tr.steps
    assert first.m_before[0] == -np.inf and first.m[0] == 1.0 and first.alpha[0] == 0.0
    assert first.l[0] == pytest.approx(1 + np.exp(-1))
    assert second.tile_max[0] == 3.0 and second.m[0] == 3.0
    assert second.alpha[0] == pytest.approx(np.exp(1.0 - 3.0))
    assert second.l[0] == pytest.approx(np.exp(-2) + np.exp(-3) + 1 + np.exp(-1))  # all on the base exp(3)


def test_large_scores_do_not_overflow():
    q = np.array([[1.0]])
    k = np.array([[800.0], [1000.0], [900.0]])
    v = np.array([[1.0], [2.0], [3.0]])
    tr = trace_online_softmax(q, k, v, block_size=1, scale=1.0)
    assert np.all(np.isfinite(tr.output))
    np.testing.assert_allclose(tr.output, [[2.0]])


def test_tables_show_every_tile():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 3)), rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    tr = trace_online_softmax(q, k, v, block_size=4)
    text = tr.table(query=1)
    assert len(text.splitlines()) == 3 and "-inf" in text and "4..7" in text
    assert tr.html_table(query=0).count("<tr>") == 3


def test_rejects_batched_input_and_bad_block():
    with pytest.raises(ValueError, match="one head"):
        trace_online_softmax(np.ones((2, 3, 4)), np.ones((2, 3, 4)), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match="block_size"):
        trace_online_softmax(np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 4)), block_size=0)
    with pytest.raises(ValueError, match="d_k"):
        trace_online_softmax(np.ones((2, 4)), np.ones((3, 5)), np.ones((3, 4)))


def test_one_update_is_the_softmax_of_the_keys_seen_so_far():
    rng = np.random.default_rng(2)
    scores, values = rng.normal(size=(3, 5)) * 4, rng.normal(size=(5, 2))
    state = OnlineSoftmaxState.start(3, 2)
    after_two = online_softmax_update(state, scores[:, :2], values[:2])
    after_all = online_softmax_update(after_two, scores[:, 2:], values[2:])
    np.testing.assert_allclose(after_two.output, softmax(scores[:, :2]) @ values[:2], rtol=1e-12)
    np.testing.assert_allclose(after_all.output, softmax(scores) @ values, rtol=1e-12)
    np.testing.assert_allclose(after_all.m, scores.max(axis=1))
    np.testing.assert_allclose(after_all.alpha, np.exp(after_two.m - after_all.m))
    assert np.all(state.m == -np.inf) and np.all(state.l == 0)  # the state it was given is unchanged


def test_rows_that_see_only_minus_inf_stay_empty_and_output_zeros():
    state = OnlineSoftmaxState.start(2, 3)
    scores = np.array([[-np.inf, -np.inf], [0.0, -np.inf]])
    new = online_softmax_update(state, scores, np.ones((2, 3)))
    assert new.l[0] == 0 and new.m[0] == -np.inf and not np.isnan(new.acc).any()
    np.testing.assert_array_equal(new.output, [[0, 0, 0], [1, 1, 1]])


@pytest.mark.parametrize("block_q, block_k", [(1, 1), (3, 4), (16, 2), (5, 16)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_the_readable_loop_is_plain_attention(block_q, block_k, is_causal):
    rng = np.random.default_rng(block_q * 10 + block_k)
    q, k, v = rng.normal(size=(9, 4)), rng.normal(size=(11, 4)), rng.normal(size=(11, 3))
    mask = rng.random((9, 11)) < 0.7
    out = np.empty((9, 3))
    got = tiled_attention(q, k, v, block_q, block_k, scale=0.5, mask=mask, is_causal=False, out=out)
    assert got is out
    np.testing.assert_allclose(got, scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=0.5), rtol=1e-12, atol=1e-14)
    got = tiled_attention(q, k, v, block_q, block_k, scale=0.5, is_causal=is_causal)
    np.testing.assert_allclose(got, scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=0.5), rtol=1e-12, atol=1e-14)


def test_the_loop_runs_the_update_it_is_given():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(4, 2)), rng.normal(size=(7, 2)), rng.normal(size=(7, 2))
    seen = []

    def update(state, scores, values):
        seen.append(scores.shape)
        return online_softmax_update(state, scores, values)

    tiled_attention(q, k, v, 2, 3, scale=1.0, update=update)
    assert seen == [(2, 3), (2, 3), (2, 1)] * 2  # two query tiles, each over keys 0..2, 3..5, 6


def test_the_trace_keeps_float32():
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3))
    tr = trace_online_softmax(q, k, v, block_size=2)
    assert tr.output.dtype == np.float32 and tr.steps[0].scores.dtype == np.float32

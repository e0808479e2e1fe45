"""Tests for attention_course/core/sinks.py: a sink logit per head takes weight from the keys and gives nothing back."""

import numpy as np
import pytest

from attention_course.core import causal_mask, scaled_dot_product_attention, softmax
from attention_course.core.sinks import sink_attention, sink_softmax


def test_the_weights_are_a_softmax_with_the_sink_column_then_dropped():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((3, 4, 5)) * 3  # (h, n_q, n_k)
    sinks = np.array([0.0, 2.0, -1.0])
    w = sink_softmax(scores, sinks)
    joined = np.concatenate([scores, np.broadcast_to(sinks[:, None, None], (3, 4, 1))], axis=-1)
    full = softmax(joined)
    np.testing.assert_allclose(w, full[..., :-1], rtol=1e-15)
    np.testing.assert_allclose(w.sum(axis=-1), 1 - full[..., -1], rtol=1e-14)  # what is missing is the sink's share
    assert np.all(w.sum(axis=-1) < 1)
    # the keys keep their ratios: the sink only scales each row down
    np.testing.assert_allclose(w / w.sum(axis=-1, keepdims=True), softmax(scores), rtol=1e-13)


def test_a_sink_at_minus_infinity_is_no_sink_and_a_huge_sink_takes_everything_without_overflow():
    scores = np.random.default_rng(1).standard_normal((2, 3, 4))
    np.testing.assert_allclose(sink_softmax(scores, np.full(2, -np.inf)), softmax(scores), rtol=1e-15)
    w = sink_softmax(scores, np.full(2, 1e4))
    assert np.all(np.isfinite(w)) and w.max() < 1e-300


def test_shifting_every_logit_and_the_sink_together_changes_nothing():
    rng = np.random.default_rng(2)
    scores, sinks = rng.standard_normal((2, 3, 4)), rng.standard_normal(2)
    np.testing.assert_allclose(sink_softmax(scores + 700.0, sinks + 700.0), sink_softmax(scores, sinks), rtol=1e-12)


def test_masked_keys_get_zero_and_a_row_with_no_key_gets_zeros():
    scores = np.array([[[0.5, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf]]])  # (1, 2, 3)
    w = sink_softmax(scores, np.array([0.0]))
    assert w[0, 0, 1] == 0 and np.all(w[0, 1] == 0)
    assert w.dtype == scores.dtype and sink_softmax(scores.astype(np.float32), np.zeros(1)).dtype == np.float32


def test_sink_attention_with_gqa_and_a_mask():
    rng = np.random.default_rng(3)
    q, k, v = rng.standard_normal((4, 5, 8)), rng.standard_normal((2, 5, 8)), rng.standard_normal((2, 5, 6))
    out, w = sink_attention(q, k, v, np.full(4, -np.inf), attn_mask=causal_mask(5), enable_gqa=True)
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True), rtol=1e-13)
    out, w = sink_attention(q, k, v, np.zeros(4), attn_mask=causal_mask(5), enable_gqa=True)
    assert np.all(w.sum(axis=-1) < 1) and np.all(np.triu(w[0], 1) == 0)
    np.testing.assert_allclose(out, w @ np.repeat(v, 2, axis=0), rtol=1e-13)


def test_sinks_of_the_wrong_shape_are_refused():
    with pytest.raises(ValueError, match=r"sinks must have shape \(h,\) = \(3,\)"):
        sink_softmax(np.zeros((3, 2, 2)), np.zeros(2))

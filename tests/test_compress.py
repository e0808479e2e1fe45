"""core.compress: windows of tokens pooled into one key by a per-coordinate softmax gate, checked against the formula."""

import numpy as np
import pytest

from attention_course.core.compress import gated_pool, overlapping_gated_pool


def _softmax_average(kv: np.ndarray, logits: np.ndarray) -> np.ndarray:
    """(s, d) candidates and gate logits -> (d,): sum_s softmax_s(logits[s, i]) kv[s, i], written out."""
    p = np.exp(logits - logits.max(axis=0))
    return (p / p.sum(axis=0) * kv).sum(axis=0)


def test_gated_pool_is_a_softmax_average_of_each_window_per_coordinate():
    rng = np.random.default_rng(0)
    m, d = 3, 4
    kv, gate, bias = rng.standard_normal((2, 9, d)), rng.standard_normal((2, 9, d)), rng.standard_normal((m, d))
    pooled = gated_pool(kv, gate, m, bias)
    assert pooled.shape == (2, 3, d)
    for b in range(2):
        for w in range(3):
            rows = slice(w * m, (w + 1) * m)
            np.testing.assert_allclose(pooled[b, w], _softmax_average(kv[b, rows], gate[b, rows] + bias), rtol=1e-12)
    lo, hi = kv.reshape(2, 3, m, d).min(axis=2), kv.reshape(2, 3, m, d).max(axis=2)
    assert ((pooled >= lo - 1e-12) & (pooled <= hi + 1e-12)).all()  # a convex mix, coordinate by coordinate
    big = gate.copy()
    big[:, 1] += 100.0  # token 1 of window 0 dominates every coordinate of its entry
    np.testing.assert_allclose(gated_pool(kv, big, m, bias)[:, 0], kv[:, 1], atol=1e-12)


def test_overlapping_pool_mixes_the_previous_window_s_first_halves_with_the_window_s_second_halves():
    rng = np.random.default_rng(1)
    m, d = 3, 2
    kv, gate, bias = rng.standard_normal((12, 2 * d)), rng.standard_normal((12, 2 * d)), rng.standard_normal((m, 2 * d))
    pooled = overlapping_gated_pool(kv, gate, m, bias)
    assert pooled.shape == (4, d)
    np.testing.assert_allclose(pooled[0], _softmax_average(kv[0:3, d:], gate[0:3, d:] + bias[:, d:]), rtol=1e-12)
    for w in range(1, 4):
        before, own = slice((w - 1) * m, w * m), slice(w * m, (w + 1) * m)
        slots = np.concatenate([kv[before, :d], kv[own, d:]])  # (2m, d)
        logits = np.concatenate([gate[before, :d] + bias[:, :d], gate[own, d:] + bias[:, d:]])
        np.testing.assert_allclose(pooled[w], _softmax_average(slots, logits), rtol=1e-12)


@pytest.mark.parametrize("cut", [3, 6, 9])
def test_overlapping_pool_in_two_calls_equals_one_with_the_previous_halves_carried(cut):
    rng = np.random.default_rng(2)
    m, d = 3, 2
    kv, gate, bias = rng.standard_normal((12, 2 * d)), rng.standard_normal((12, 2 * d)), rng.standard_normal((m, 2 * d))
    whole = overlapping_gated_pool(kv, gate, m, bias)
    first = overlapping_gated_pool(kv[:cut], gate[:cut], m, bias)
    carried = (kv[cut - m:cut, :d], gate[cut - m:cut, :d] + bias[:, :d])  # the last window's first halves, biased
    rest = overlapping_gated_pool(kv[cut:], gate[cut:], m, bias, previous=carried)
    np.testing.assert_allclose(np.concatenate([first, rest]), whole, rtol=1e-12)


def test_bad_inputs_are_refused_with_their_shapes():
    kv = np.zeros((6, 4))
    with pytest.raises(ValueError, match="multiple of ratio"):
        gated_pool(kv[:5], kv[:5], 3, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="position_bias must have shape"):
        gated_pool(kv, kv, 3, np.zeros((2, 4)))
    with pytest.raises(ValueError, match="gate must have the shape of kv"):
        gated_pool(kv, kv[:, :2], 3, np.zeros((3, 4)))
    with pytest.raises(ValueError, match="halves"):
        overlapping_gated_pool(kv[:, :3], kv[:, :3], 3, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="previous must be two arrays"):
        overlapping_gated_pool(kv, kv, 3, np.zeros((3, 4)), previous=(np.zeros((2, 2)), np.zeros((2, 2))))
    with pytest.raises(ValueError, match="ratio"):
        gated_pool(kv, kv, 0, np.zeros((0, 4)))

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import attention_weights, causal_mask, padding_mask, repeat_kv, scaled_dot_product_attention
from reference import attention_2d, causal_allowed


@st.composite
def attention_problems(draw):
    """Random (q, k, v, mask kind, mask) with broadcasting batch dims and n_q != n_k."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_q, n_k = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    # Each argument either has the batch dims or broadcasts over them (size-1 or missing dims).
    def lead():
        return tuple(b if draw(st.booleans()) else 1 for b in batch)
    magnitude = draw(st.sampled_from([1.0, 30.0, 1e4]))  # 1e4 would overflow a naive exp
    q = rng.normal(size=lead() + (n_q, d_k)) * magnitude
    k = rng.normal(size=lead() + (n_k, d_k))
    v = rng.normal(size=lead() + (n_k, d_v))
    kind = draw(st.sampled_from(["none", "causal", "bool", "float"]))
    mask = None
    if kind == "bool":
        mask = rng.random(lead() + (n_q, n_k)) < 0.6  # some rows may be fully masked
    elif kind == "float":
        mask = rng.normal(size=lead() + (n_q, n_k))
        mask[rng.random(mask.shape) < 0.3] = -np.inf
    return q, k, v, kind, mask


def reference(q, k, v, kind, mask):
    """Loop the naive 2-D reference over the broadcast batch dims."""
    shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], () if mask is None else mask.shape[:-2])
    n_q, n_k = q.shape[-2], k.shape[-2]
    qb = np.broadcast_to(q, shape + q.shape[-2:])
    kb = np.broadcast_to(k, shape + k.shape[-2:])
    vb = np.broadcast_to(v, shape + v.shape[-2:])
    mb = None if mask is None else np.broadcast_to(mask, shape + (n_q, n_k))
    weights = np.zeros(shape + (n_q, n_k))
    out = np.zeros(shape + (n_q, v.shape[-1]))
    for idx in np.ndindex(*shape):
        allowed = bias = None
        if kind == "causal":
            allowed = causal_allowed(n_q, n_k)
        elif kind == "bool":
            allowed = mb[idx]
        elif kind == "float":
            bias = mb[idx]
        weights[idx], out[idx] = attention_2d(qb[idx], kb[idx], vb[idx], allowed=allowed, bias=bias)
    return weights, out


@settings(max_examples=150, deadline=None)
@given(attention_problems())
def test_matches_naive_reference(problem):
    q, k, v, kind, mask = problem
    want_w, want_out = reference(q, k, v, kind, mask)
    kwargs = {"is_causal": True} if kind == "causal" else {"attn_mask": mask}
    got_w = attention_weights(q, k, **kwargs)  # value's batch dims do not enter the weights
    np.testing.assert_allclose(np.broadcast_to(got_w, want_w.shape), want_w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, **kwargs), want_out, rtol=1e-9, atol=1e-12)


def test_rows_sum_to_one():
    rng = np.random.default_rng(0)
    w = attention_weights(rng.normal(size=(3, 5, 4)), rng.normal(size=(3, 7, 4)))
    assert w.shape == (3, 5, 7)
    np.testing.assert_allclose(w.sum(-1), 1.0)


def test_fully_masked_row_returns_zeros():
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    mask = np.array([[True, False, True, False], [False, False, False, False]])
    out = scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert np.array_equal(out[1], np.zeros(2))
    assert np.isfinite(out).all()


def test_causal_with_fewer_queries_than_keys_is_aligned_top_left():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 3)), rng.normal(size=(5, 3))
    w = attention_weights(q, k, is_causal=True)
    assert np.array_equal(w > 0, causal_mask(2, 5))


def test_padding_mask_broadcasts_over_queries():
    rng = np.random.default_rng(3)
    q, k, v = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 4, 2))
    w = attention_weights(q, k, attn_mask=padding_mask([4, 2], 4))
    assert np.all(w[1, :, 2:] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0)


def test_scale_argument():
    q, k = np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(attention_weights(q, k, scale=0.0), [[0.5, 0.5]])
    e1, e2 = np.exp(1.0), np.exp(2.0)
    np.testing.assert_allclose(attention_weights(q, k, scale=1.0), [[e1 / (e1 + e2), e2 / (e1 + e2)]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_in_is_dtype_out(dtype):
    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=s).astype(dtype) for s in [(3, 4), (5, 4), (5, 2)])
    assert scaled_dot_product_attention(q, k, v).dtype == dtype
    assert scaled_dot_product_attention(q, k, v, is_causal=True).dtype == dtype
    assert attention_weights(q, k, attn_mask=np.ones((3, 5), bool)).dtype == dtype


def test_inputs_are_not_modified():
    rng = np.random.default_rng(5)
    q, k, v = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    mask = rng.normal(size=(3, 5))
    copies = [a.copy() for a in (q, k, v, mask)]
    scaled_dot_product_attention(q, k, v, attn_mask=mask)
    for a, c in zip((q, k, v, mask), copies):
        assert np.array_equal(a, c)


def test_nan_propagates():
    q = np.array([[np.nan, 1.0], [1.0, 1.0]])
    k = v = np.eye(2)
    out = scaled_dot_product_attention(q, k, v)
    assert np.isnan(out[0]).all() and np.isfinite(out[1]).all()


def test_lists_are_accepted():
    out = scaled_dot_product_attention([[1, 0]], [[1, 0], [0, 1]], [[1.0], [0.0]])
    assert out.shape == (1, 1) and out.dtype == np.float64


@pytest.mark.parametrize(
    "q_shape, k_shape, v_shape, error, match",
    [
        ((2, 4), (3, 5), (3, 2), ValueError, r"d_k .*query has shape \(2, 4\) and key has shape \(3, 5\)"),
        ((2, 4), (3, 4), (6, 2), ValueError, r"n_k .*key has shape \(3, 4\) and value has shape \(6, 2\)"),
        ((4,), (3, 4), (3, 2), ValueError, r"query must have shape \(\.\.\., n_q, d_k\); got shape \(4,\).*q\[None, :\]"),
        ((2, 2, 4), (3, 3, 4), (3, 3, 2), ValueError, r"do not broadcast.*query \(2, 2, 4\), key \(3, 3, 4\)"),
        ((2, 0), (3, 0), (3, 2), ValueError, "d_k must be at least 1"),
        ((2, 4), (0, 4), (0, 2), ValueError, "at least one key"),
    ],
)
def test_shape_errors_name_the_argument(q_shape, k_shape, v_shape, error, match):
    with pytest.raises(error, match=match):
        scaled_dot_product_attention(np.ones(q_shape), np.ones(k_shape), np.ones(v_shape))


def test_type_and_mask_errors():
    q, k, v = np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2))
    with pytest.raises(TypeError, match="query must hold real numbers"):
        scaled_dot_product_attention(np.array([["a"] * 4] * 2), k, v)
    with pytest.raises(TypeError, match="value must hold real numbers.*complex"):
        scaled_dot_product_attention(q, k, v.astype(complex))
    with pytest.raises(ValueError, match=r"attn_mask .* \(\.\.\., 2, 3\); got shape \(3, 2\)"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((3, 2), bool))
    with pytest.raises(ValueError, match="not both"):
        scaled_dot_product_attention(q, k, v, attn_mask=np.ones((2, 3), bool), is_causal=True)
    with pytest.raises(TypeError, match="scale must be a real number"):
        scaled_dot_product_attention(q, k, v, scale="0.5")
    with pytest.raises(ValueError, match="scale must be finite"):
        attention_weights(q, k, scale=np.inf)


# --- grouped-query attention ----------------------------------------------------------------


def gqa_reference(q, k, v, allowed=None):
    """Loop the naive reference over query heads, query head i reading key/value head i // g."""
    h_q, h_kv = q.shape[-3], k.shape[-3]
    g = h_q // h_kv
    weights = np.zeros(q.shape[:-1] + (k.shape[-2],))
    out = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for idx in np.ndindex(*q.shape[:-2]):
        kv = idx[:-1] + (idx[-1] // g,)
        weights[idx], out[idx] = attention_2d(q[idx], k[kv], v[kv], allowed=allowed)
    return weights, out


@pytest.mark.parametrize("batch, h_q, h_kv", [((), 4, 2), ((), 6, 1), ((2,), 6, 3), ((), 3, 3), ((2, 1), 8, 2)])
def test_gqa_shares_each_key_value_head_among_consecutive_query_heads(batch, h_q, h_kv):
    rng = np.random.default_rng(h_q * 10 + h_kv)
    q = rng.standard_normal(batch + (h_q, 5, 4))
    k = rng.standard_normal(batch + (h_kv, 7, 4))
    v = rng.standard_normal(batch + (h_kv, 7, 3))
    want_w, want_out = gqa_reference(q, k, v)
    np.testing.assert_allclose(attention_weights(q, k, enable_gqa=True), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, enable_gqa=True), want_out, rtol=1e-12, atol=1e-14)


def test_gqa_with_as_many_key_value_heads_as_query_heads_is_multi_head_attention():
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal((4, 6, 8)) for _ in range(3))
    assert np.array_equal(scaled_dot_product_attention(q, k, v, enable_gqa=True), scaled_dot_product_attention(q, k, v))


def test_gqa_with_masks_per_head_and_lower_right_causal():
    rng = np.random.default_rng(12)
    q = rng.standard_normal((4, 3, 4))
    k, v = rng.standard_normal((2, 8, 4)), rng.standard_normal((2, 8, 2))
    allowed = causal_mask(3, 8, lower_right=True)
    want_w, want_out = gqa_reference(q, k, v, allowed=allowed)
    np.testing.assert_allclose(scaled_dot_product_attention(q, k, v, attn_mask=allowed, enable_gqa=True), want_out,
                               rtol=1e-12, atol=1e-14)
    per_head = rng.random((4, 3, 8)) < 0.5  # (h_q, n_q, n_k): each query head its own mask
    weights = attention_weights(q, k, attn_mask=per_head, enable_gqa=True)
    assert (weights[~per_head] == 0).all()


def test_repeat_kv_orders_heads_0_0_1_1_not_0_1_0_1():
    x = np.arange(2)[:, None, None] * np.ones((2, 3, 4))  # head j is filled with j
    assert repeat_kv(x, 2)[:, 0, 0].tolist() == [0, 0, 1, 1]
    assert repeat_kv(x, 3).shape == (6, 3, 4)


@pytest.mark.parametrize("q_shape, k_shape, v_shape, match", [
    ((4, 2, 3), (3, 5, 3), (3, 5, 3), r"multiple of the key/value heads.*\(4, 2, 3\) \(4 heads\).*\(3, 5, 3\) \(3 heads\)"),
    ((2, 3), (1, 5, 3), (1, 5, 3), r"query must have shape \(\.\.\., h_q, n_q, d_k\) with enable_gqa"),
    ((4, 2, 3), (2, 5, 3), (1, 5, 3), r"key/value heads .*key has shape \(2, 5, 3\) and value has shape \(1, 5, 3\)"),
])
def test_gqa_shape_errors_name_the_argument(q_shape, k_shape, v_shape, match):
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(np.ones(q_shape), np.ones(k_shape), np.ones(v_shape), enable_gqa=True)


def test_fewer_key_value_heads_without_enable_gqa_says_to_pass_it():
    with pytest.raises(ValueError, match="pass enable_gqa=True"):
        scaled_dot_product_attention(np.ones((4, 2, 3)), np.ones((2, 5, 3)), np.ones((2, 5, 3)))
    with pytest.raises(TypeError, match="enable_gqa must be True or False"):
        attention_weights(np.ones((4, 2, 3)), np.ones((2, 5, 3)), enable_gqa="yes")

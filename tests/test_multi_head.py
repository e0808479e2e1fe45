import ml_dtypes
import numpy as np
import pytest

from attention_course import merge_heads, multi_head_attention, padding_mask, split_heads
from reference import attention_2d, causal_allowed


def make(rng, n=5, d_model=8, n_heads=2, d_out=6, batch=(3,)):
    x = rng.normal(size=batch + (n, d_model))
    w = {name: rng.normal(size=(d_model, d_model)) for name in ("w_q", "w_k", "w_v")}
    w["w_o"] = rng.normal(size=(d_model, d_out))
    return x, w


def per_head_reference(x, w, n_heads, allowed=None, biases=None):
    """Head by head with the naive 2-D reference: project, attend, concatenate, mix."""
    biases = biases or {}
    d_model = w["w_q"].shape[1]
    d_head = d_model // n_heads
    out = np.zeros(x.shape[:-1] + (w["w_o"].shape[1],))
    for b in np.ndindex(*x.shape[:-2]):
        heads = []
        for h in range(n_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            q, k, v = (x[b] @ w[f"w_{c}"][:, cols] + biases.get(f"b_{c}", np.zeros(d_model))[cols] for c in "qkv")
            heads.append(attention_2d(q, k, v, allowed=None if allowed is None else allowed[b] if allowed.ndim == 3 else allowed)[1])
        out[b] = np.concatenate(heads, axis=-1) @ w["w_o"] + biases.get("b_o", 0.0)
    return out


def test_matches_per_head_reference():
    rng = np.random.default_rng(0)
    x, w = make(rng)
    np.testing.assert_allclose(multi_head_attention(x, n_heads=2, **w), per_head_reference(x, w, 2), rtol=1e-10)


def test_causal_and_biases():
    rng = np.random.default_rng(1)
    x, w = make(rng, n=4, n_heads=4)
    biases = {f"b_{c}": rng.normal(size=8) for c in "qkv"} | {"b_o": rng.normal(size=6)}
    got = multi_head_attention(x, n_heads=4, is_causal=True, **w, **biases)
    want = per_head_reference(x, w, 4, allowed=causal_allowed(4, 4), biases=biases)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_padding_mask_is_shared_by_every_head_and_weights_are_returned():
    rng = np.random.default_rng(2)
    x, w = make(rng, n=4, batch=(2,))
    mask = padding_mask([4, 2], 4)  # (B, 1, n)
    out, weights = multi_head_attention(x, n_heads=2, attn_mask=mask, need_weights=True, **w)
    assert out.shape == (2, 4, 6) and weights.shape == (2, 2, 4, 4)  # (B, h, n, n)
    assert np.all(weights[1, :, :, 2:] == 0.0)
    allowed = np.broadcast_to(mask, (2, 4, 4))
    np.testing.assert_allclose(out, per_head_reference(x, w, 2, allowed=allowed), rtol=1e-10)


def test_one_head_is_plain_attention():
    rng = np.random.default_rng(3)
    x, w = make(rng, batch=())
    want = attention_2d(x @ w["w_q"], x @ w["w_k"], x @ w["w_v"])[1] @ w["w_o"]
    np.testing.assert_allclose(multi_head_attention(x, n_heads=1, **w), want, rtol=1e-10)


def test_split_and_merge_heads_are_inverse():
    x = np.arange(2 * 5 * 12.0).reshape(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    assert np.array_equal(heads[:, 1], x[..., 4:8])  # head 1 owns columns 4..7
    assert np.array_equal(merge_heads(heads), x)


def test_float32_stays_float32_and_inputs_unchanged():
    rng = np.random.default_rng(4)
    x, w = make(rng)
    x, w = x.astype(np.float32), {k: v.astype(np.float32) for k, v in w.items()}
    before = x.copy()
    assert multi_head_attention(x, n_heads=2, **w).dtype == np.float32
    assert np.array_equal(x, before)


def test_errors():
    rng = np.random.default_rng(5)
    x, w = make(rng)
    with pytest.raises(ValueError, match=r"n_heads=3 must divide the width of w_q, shape \(8, 8\)"):
        multi_head_attention(x, n_heads=3, **w)
    with pytest.raises(ValueError, match=r"w_k must have shape \(d_model, h \* d_k\) with 8 rows; got shape \(7, 8\)"):
        multi_head_attention(x, n_heads=2, **(w | {"w_k": np.ones((7, 8))}))
    with pytest.raises(ValueError, match=r"w_o must have shape .* with 8 rows; got shape \(4, 6\)"):
        multi_head_attention(x, n_heads=2, **(w | {"w_o": np.ones((4, 6))}))
    with pytest.raises(ValueError, match=r"b_q must have shape \(8,\); got shape \(4,\)"):
        multi_head_attention(x, n_heads=2, b_q=np.ones(4), **w)
    with pytest.raises(TypeError, match="n_heads must be a positive integer"):
        multi_head_attention(x, n_heads=2.0, **w)
    with pytest.raises(ValueError, match=r"x must have shape \(\.\.\., n, d_model\)"):
        multi_head_attention(np.ones(8), n_heads=2, **w)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["float16", "bfloat16"])
def test_16_bit_inputs_are_computed_in_float32_and_returned_in_their_dtype(dtype):
    rng = np.random.default_rng(23)
    x = rng.standard_normal((2, 7, 16)).astype(dtype)
    w_q, w_k, w_v, w_o = ((rng.standard_normal((16, 16)) * 0.25).astype(dtype) for _ in range(4))
    out, weights = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads=4, need_weights=True)
    assert out.dtype == weights.dtype == dtype
    want = multi_head_attention(*(a.astype(np.float32) for a in (x, w_q, w_k, w_v, w_o)), n_heads=4)
    eps = float(ml_dtypes.finfo(dtype).eps)  # one rounding of the float32 result
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=eps, atol=eps * 2**-6)

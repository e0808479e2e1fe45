"""Tests for attention_course/core/backward.py and tiled/backward.py: the gradients of attention.

The plain `attention_backward` is checked against central finite differences
of `scaled_dot_product_attention` (which shares none of its algebra), the
tiled `flash_attention_backward` against the plain one on many shapes, masks
and block sizes, and both against torch's autograd in test_torch_crosscheck.py.
Memory is measured with tracemalloc; there are no timing asserts
(benchmarks/bench_backward.py measures time).
"""

import tracemalloc

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_course import (
    attention_backward,
    attention_weights,
    causal_mask,
    flash_attention_backward,
    flash_attention_forward,
    scaled_dot_product_attention,
)
from attention_course.core.backward import sum_to_shape
from attention_course.tiled.backward import backward_query_tile, tile_weights

BF16 = np.dtype(ml_dtypes.bfloat16)


def problem(rng, n_q, n_k, d_k=4, d_v=3, batch=(), dtype=np.float64, scale=1.0):
    q = (rng.standard_normal(batch + (n_q, d_k)) * scale).astype(dtype)
    k = (rng.standard_normal(batch + (n_k, d_k)) * scale).astype(dtype)
    v = rng.standard_normal(batch + (n_k, d_v)).astype(dtype)
    g = rng.standard_normal(np.broadcast_shapes(batch, batch) + (n_q, d_v)).astype(dtype)
    return q, k, v, g


def numerical_gradients(q, k, v, g, eps=1e-6, **kwargs):
    """d/dx of L = sum(sdpa(q, k, v) * g) for x = q, k, v by central differences, entry by entry."""
    def loss(*args):
        return float(np.sum(scaled_dot_product_attention(*args, **kwargs) * g))

    grads = []
    for which in range(3):
        args = [q, k, v]
        x = args[which]
        grad = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[idx] += eps
            down[idx] -= eps
            args[which] = up
            f_up = loss(*args)
            args[which] = down
            grad[idx] = (f_up - loss(*args)) / (2 * eps)
        grads.append(grad)
    return grads


def plain_and_tiled(q, k, v, g, block_size, **kwargs):
    plain = attention_backward(q, k, v, g, **kwargs)
    out, lse = flash_attention_forward(q, k, v, block_size=block_size, **kwargs)
    tiled = flash_attention_backward(q, k, v, out, lse, g, block_size=block_size, **kwargs)
    return plain, tiled


# --- the plain backward -----------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}, {"scale": 0.3}], ids=["none", "causal", "scale"])
@pytest.mark.parametrize("n_q, n_k", [(3, 5), (5, 3), (1, 1)])
def test_plain_backward_equals_finite_differences(n_q, n_k, kwargs):
    rng = np.random.default_rng(0)
    q, k, v, g = problem(rng, n_q, n_k)
    for got, want in zip(attention_backward(q, k, v, g, **kwargs), numerical_gradients(q, k, v, g, **kwargs)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_plain_backward_with_masks_equals_finite_differences(mask_kind):
    rng = np.random.default_rng(1)
    q, k, v, g = problem(rng, 4, 6)
    if mask_kind == "bool":
        mask = rng.random((4, 6)) < 0.6
        mask[2] = False  # a query with nothing to attend to
    else:
        mask = rng.normal(size=(4, 6))
        mask[1, :3] = -np.inf
    grads = attention_backward(q, k, v, g, attn_mask=mask)
    for got, want in zip(grads, numerical_gradients(q, k, v, g, attn_mask=mask)):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)
    if mask_kind == "bool":
        assert np.all(grads[0][2] == 0)  # its output is 0 whatever q is


def test_d_is_rowsum_of_output_times_grad_output():
    """D = rowsum(P * dP) = rowsum(O * dO): what lets the tiled backward do without P."""
    rng = np.random.default_rng(2)
    q, k, v, g = problem(rng, 6, 9)
    p = attention_weights(q, k)
    dp = g @ v.T  # (n_q, d_v) x (d_v, n_k)
    o = scaled_dot_product_attention(q, k, v)
    np.testing.assert_allclose(np.sum(p * dp, axis=-1), np.sum(o * g, axis=-1), rtol=1e-13)


def test_gradients_of_broadcast_inputs_are_summed_over_the_batch():
    rng = np.random.default_rng(3)
    q, _, _, g = problem(rng, 5, 7, batch=(2, 3))
    k = rng.standard_normal((7, 4))  # one key matrix for the whole batch
    v = rng.standard_normal((3, 7, 3))  # one value matrix per head, shared by the batch
    dq, dk, dv = attention_backward(q, k, v, g)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    full = attention_backward(q, np.broadcast_to(k, (2, 3, 7, 4)).copy(), np.broadcast_to(v, (2, 3, 7, 3)).copy(), g)
    np.testing.assert_allclose(dk, full[1].sum(axis=(0, 1)), rtol=1e-12)
    np.testing.assert_allclose(dv, full[2].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(dq, full[0], rtol=1e-12)


def test_sum_to_shape_sums_added_and_stretched_axes():
    grad = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(sum_to_shape(grad, (3, 4)), grad.sum(axis=0))
    np.testing.assert_array_equal(sum_to_shape(grad, (1, 3, 4)), grad.sum(axis=0, keepdims=True))
    np.testing.assert_array_equal(sum_to_shape(grad, (2, 1, 4)), grad.sum(axis=1, keepdims=True))
    assert sum_to_shape(grad, (2, 3, 4)) is grad


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=["float32", "float16", "bfloat16"])
def test_each_gradient_has_its_inputs_dtype_and_16_bits_are_computed_in_float32(dtype):
    rng = np.random.default_rng(4)
    q, k, v, g = problem(rng, 6, 8, dtype=dtype)
    for fn in ("plain", "tiled"):
        grads = plain_and_tiled(q, k, v, g, block_size=3)[fn == "tiled"]
        want = attention_backward(*(x.astype(np.float32) for x in (q, k, v, g)))
        for got, w in zip(grads, want):
            assert got.dtype == dtype
            # computed in float32 and rounded once: at most half a step of the 16-bit dtype from the float32 result
            np.testing.assert_allclose(got.astype(np.float32), w, rtol=float(ml_dtypes.finfo(dtype).eps), atol=1e-3)


def test_mixed_dtypes_give_each_gradient_its_own_dtype():
    rng = np.random.default_rng(5)
    q, k, v, g = problem(rng, 3, 4)
    dq, dk, dv = attention_backward(q.astype(np.float32), k, v.astype(np.float32), g)
    assert (dq.dtype, dk.dtype, dv.dtype) == (np.float32, np.float64, np.float32)


def test_grad_output_of_the_wrong_shape_is_named():
    rng = np.random.default_rng(6)
    q, k, v, g = problem(rng, 3, 4, batch=(2,))
    with pytest.raises(ValueError, match=r"grad_output must have the shape of the attention output.*\(2, 3, 3\).*\(3, 3\)"):
        attention_backward(q, k, v, g[0])
    with pytest.raises(TypeError, match="grad_output"):
        attention_backward(q, k, v, np.full(g.shape, "x"))
    with pytest.raises(ValueError, match="d_k"):
        attention_backward(q, k[..., :2], v, g)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(7)
    q, k, v, g = problem(rng, 5, 6)
    copies = [x.copy() for x in (q, k, v, g)]
    out, lse = flash_attention_forward(q, k, v, block_size=2)
    lse_copy, out_copy = lse.copy(), out.copy()
    attention_backward(q, k, v, g, is_causal=True)
    flash_attention_backward(q, k, v, out, lse, g, block_size=2)
    for x, c in zip((q, k, v, g, out, lse), copies + [out_copy, lse_copy]):
        np.testing.assert_array_equal(x, c)


# --- the forward's log-sum-exp ----------------------------------------------------------------


def test_forward_returns_the_output_and_the_log_sum_exp_of_each_querys_scores():
    rng = np.random.default_rng(8)
    q, k, v, _ = problem(rng, 7, 9, batch=(2,))
    mask = rng.random((2, 7, 9)) < 0.7
    mask[0, 3] = False
    out, lse = flash_attention_forward(q, k, v, attn_mask=mask, block_size=(3, 4))
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v, attn_mask=mask), rtol=1e-12, atol=1e-14)
    scores = np.where(mask, q @ np.swapaxes(k, -1, -2) / 2.0, -np.inf)  # d_k = 4: scale 1/2
    with np.errstate(divide="ignore"):
        want = np.log(np.sum(np.exp(scores), axis=-1))
    assert lse.shape == (2, 7) and lse[0, 3] == -np.inf
    np.testing.assert_allclose(lse, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["float16", "bfloat16"])
def test_forward_keeps_the_log_sum_exp_in_float32_for_16_bit_inputs(dtype):
    rng = np.random.default_rng(9)
    q, k, v, _ = problem(rng, 5, 6, dtype=dtype)
    out, lse = flash_attention_forward(q, k, v, block_size=2)
    assert out.dtype == dtype and lse.dtype == np.float32


def test_tile_weights_are_normalised_and_zero_for_a_query_with_nothing_to_attend_to():
    s = np.array([[0.0, 1.0, -np.inf], [-np.inf, -np.inf, -np.inf]])
    lse = np.array([np.log(1 + np.e), -np.inf])
    p = tile_weights(s, lse)
    np.testing.assert_allclose(p[0].sum(), 1.0)
    assert np.all(p[1] == 0) and np.isfinite(p).all()


# --- the tiled backward equals the plain one ---------------------------------------------------


@pytest.mark.parametrize("block_size", [1, 3, (2, 5), (16, 16)])
@pytest.mark.parametrize("n_q, n_k", [(7, 7), (5, 11), (11, 5), (1, 1), (1, 9)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_tiled_equals_plain(n_q, n_k, block_size, is_causal):
    rng = np.random.default_rng(10)
    q, k, v, g = problem(rng, n_q, n_k, batch=(2,))
    plain, tiled = plain_and_tiled(q, k, v, g, block_size, is_causal=is_causal)
    for p, t in zip(plain, tiled):
        assert p.shape == t.shape and p.dtype == t.dtype
        np.testing.assert_allclose(t, p, rtol=1e-11, atol=1e-12)


def test_tiled_with_every_query_fully_masked_gives_zeros():
    rng = np.random.default_rng(11)
    q, k, v, g = problem(rng, 4, 5)
    mask = np.zeros((4, 5), dtype=bool)
    out, lse = flash_attention_forward(q, k, v, attn_mask=mask, block_size=2)
    assert np.all(out == 0) and np.all(lse == -np.inf)
    for grad in flash_attention_backward(q, k, v, out, lse, g, attn_mask=mask, block_size=2):
        assert np.all(grad == 0)


def test_one_query_tile_returns_its_share_of_the_key_and_value_gradients():
    """The full dK and dV are the sums of what each tile of queries adds (the backward exercise's function)."""
    rng = np.random.default_rng(12)
    q, k, v, g = problem(rng, 8, 10)
    out, lse = flash_attention_forward(q, k, v, block_size=4)
    shares = [backward_query_tile(q[r], k, v, out[r], g[r], lse[r], 3, scale=0.5) for r in (slice(0, 4), slice(4, 8))]
    dq, dk, dv = attention_backward(q, k, v, g)
    np.testing.assert_allclose(np.concatenate([s[0] for s in shares]), dq, rtol=1e-12)
    np.testing.assert_allclose(shares[0][1] + shares[1][1], dk, rtol=1e-12)
    np.testing.assert_allclose(shares[0][2] + shares[1][2], dv, rtol=1e-12)


def test_stored_values_of_the_wrong_shape_are_named():
    rng = np.random.default_rng(13)
    q, k, v, g = problem(rng, 4, 5, batch=(2,))
    out, lse = flash_attention_forward(q, k, v)
    with pytest.raises(ValueError, match=r"lse must hold one log-sum-exp per query.*\(2, 4\).*\(4,\)"):
        flash_attention_backward(q, k, v, out, lse[0], g)
    with pytest.raises(ValueError, match=r"output must have the shape of the attention output"):
        flash_attention_backward(q, k, v, out[..., :2], lse, g)
    with pytest.raises(ValueError, match="block_size"):
        flash_attention_backward(q, k, v, out, lse, g, block_size=0)


@st.composite
def backward_problems(draw):
    """Random (q, k, v, dO, attention kwargs, block_size): broadcast batch dims, masks, ragged tiles."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_q, n_k = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    d_k, d_v = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))

    def lead():  # each argument has the batch dims or broadcasts over them
        return tuple(b if draw(st.booleans()) else 1 for b in batch)

    magnitude = draw(st.sampled_from([1.0, 5.0, 30.0]))
    q = rng.normal(size=lead() + (n_q, d_k)) * magnitude
    k = rng.normal(size=lead() + (n_k, d_k))
    v = rng.normal(size=lead() + (n_k, d_v))
    kind = draw(st.sampled_from(["none", "causal", "bool", "float"]))
    kwargs = {}
    if kind == "causal":
        kwargs["is_causal"] = True
    elif kind == "bool":
        kwargs["attn_mask"] = rng.random(lead() + (n_q, n_k)) < 0.6  # some rows fully masked
    elif kind == "float":
        bias = rng.normal(size=lead() + (n_q, n_k))
        bias[rng.random(bias.shape) < 0.3] = -np.inf
        kwargs["attn_mask"] = bias
    full_batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2],
                                     kwargs["attn_mask"].shape[:-2] if "attn_mask" in kwargs else ())
    g = rng.normal(size=full_batch + (n_q, d_v))
    block = draw(st.one_of(st.integers(1, 14), st.tuples(st.integers(1, 14), st.integers(1, 14))))
    return q, k, v, g, kwargs, block


@settings(max_examples=150, deadline=None)
@given(backward_problems())
def test_property_float64_tiled_equals_plain(problem):
    q, k, v, g, kwargs, block = problem
    plain, tiled = plain_and_tiled(q, k, v, g, block, **kwargs)
    scale = max(1.0, float(np.abs(q).max()))  # large scores: gradients of size |q| |k|, rounded relative to it
    for p, t in zip(plain, tiled):
        assert p.shape == t.shape
        np.testing.assert_allclose(t, p, rtol=1e-10, atol=1e-11 * scale)


@settings(max_examples=60, deadline=None)
@given(backward_problems())
def test_property_float32_tiled_is_as_close_to_float64_as_plain(problem):
    q, k, v, g, kwargs, block = problem
    exact = attention_backward(q, k, v, g, **kwargs)
    q32, k32, v32, g32 = (x.astype(np.float32) for x in (q, k, v, g))
    plain, tiled = plain_and_tiled(q32, k32, v32, g32, block, **kwargs)
    # float32 rounds each score by about eps * |score|, and exp turns that into a relative error of
    # the weights: the floor grows with the largest score (scores of 100 and more are drawn here)
    scores = np.abs(q @ np.swapaxes(k, -1, -2)).max(initial=0.0) / np.sqrt(q.shape[-1])
    floor = max(1e-5, 8 * float(np.finfo(np.float32).eps) * scores)
    for e, p, t in zip(exact, plain, tiled):
        assert t.dtype == np.float32
        size = max(1.0, float(np.abs(e).max()))
        plain_error = float(np.abs(p - e).max())
        assert float(np.abs(t - e).max()) <= 4 * plain_error + floor * size


# --- memory -----------------------------------------------------------------------------------


def peak_extra_bytes(fn, *args, **kwargs) -> int:
    """Peak bytes traced during fn(...) above the level before it, minus the arrays it returns."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        result = fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before - sum(r.nbytes for r in result)


def test_tiled_backward_memory_does_not_grow_with_n():
    rng = np.random.default_rng(14)
    extras, plain = [], None
    for n in (512, 2048):
        q, k, v, g = problem(rng, n, n, d_k=16, d_v=16, dtype=np.float32)
        out, lse = flash_attention_forward(q, k, v, block_size=(64, 128))
        extras.append(peak_extra_bytes(flash_attention_backward, q, k, v, out, lse, g, block_size=(64, 128)))
        plain = peak_extra_bytes(attention_backward, q, k, v, g)
    assert extras[1] < 1.25 * extras[0] + 65536  # 16x the scores, (nearly) the same memory
    assert plain > 2 * n * n * 4 and plain > 40 * extras[1]  # the plain backward holds several n x n matrices

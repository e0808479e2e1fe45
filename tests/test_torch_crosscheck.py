"""The package's attention against torch.nn.functional.scaled_dot_product_attention.

The names and semantics of the primitives follow torch's, so what a student
learns here transfers: this file checks that claim number by number. It runs
where torch is installed (`pip install -e ".[torch]"`) and is skipped, with the
reason, where it is not.
"""

import numpy as np
import pytest

from attention_course import (
    attention_weights, causal_mask, flash_attention, padding_mask, scaled_dot_product_attention, sliding_window_mask,
)

torch = pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to cross-check against it")
F = torch.nn.functional

TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}
OURS = {"plain": scaled_dot_product_attention, "flash": lambda *a, **kw: flash_attention(*a, block_size=(4, 3), **kw)}


def torch_sdpa(q, k, v, attn_mask=None, **kwargs) -> np.ndarray:
    """torch's SDPA on NumPy arrays, back as NumPy."""
    t = [torch.from_numpy(np.ascontiguousarray(x)) for x in (q, k, v)]
    mask = None if attn_mask is None else torch.from_numpy(np.ascontiguousarray(attn_mask))
    return F.scaled_dot_product_attention(*t, attn_mask=mask, **kwargs).numpy()


def problem(seed, n_q, n_k, batch=(2, 3), d_k=8, d_v=5, dtype=np.float64):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(batch + (n_q, d_k)).astype(dtype)
    k = rng.standard_normal(batch + (n_k, d_k)).astype(dtype)
    v = rng.standard_normal(batch + (n_k, d_v)).astype(dtype)
    return rng, q, k, v


@pytest.fixture(params=sorted(OURS))
def ours(request):
    return OURS[request.param]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_q, n_k", [(7, 7), (5, 11), (11, 5), (1, 1)])
def test_no_mask(n_q, n_k, dtype, ours):
    _, q, k, v = problem(0, n_q, n_k, dtype=dtype)
    got = ours(q, k, v)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, torch_sdpa(q, k, v), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_q, n_k", [(9, 9), (4, 10), (10, 4)])
def test_is_causal_is_aligned_top_left_as_in_torch(n_q, n_k, dtype, ours):
    _, q, k, v = problem(1, n_q, n_k, dtype=dtype)
    want = torch_sdpa(q, k, v, is_causal=True)
    np.testing.assert_allclose(ours(q, k, v, is_causal=True), want, **TOL[dtype])
    # ... and is the same as passing our causal_mask as a boolean mask
    np.testing.assert_allclose(torch_sdpa(q, k, v, attn_mask=causal_mask(n_q, n_k)), want, **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask_shape", [(6, 9), (1, 9), (3, 6, 9), (2, 1, 6, 9)])
def test_boolean_mask_true_means_may_attend(mask_shape, dtype, ours):
    rng, q, k, v = problem(2, 6, 9, dtype=dtype)
    mask = rng.random(mask_shape) < 0.7
    mask[..., 0] = True  # every query sees key 0; fully masked rows have their own test below
    np.testing.assert_allclose(ours(q, k, v, attn_mask=mask), torch_sdpa(q, k, v, attn_mask=mask), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_mask_is_added_to_the_scores(dtype, ours):
    rng, q, k, v = problem(3, 6, 9, dtype=dtype)
    bias = rng.standard_normal((6, 9)).astype(dtype)
    bias[rng.random(bias.shape) < 0.3] = -np.inf
    bias[:, 0] = 0.0
    np.testing.assert_allclose(ours(q, k, v, attn_mask=bias), torch_sdpa(q, k, v, attn_mask=bias), **TOL[dtype])


def test_padding_mask_as_in_torch(ours):
    _, q, k, v = problem(4, 6, 6, batch=(3,))
    mask = padding_mask([6, 2, 4], 6)  # (B, 1, n_k)
    np.testing.assert_allclose(ours(q, k, v, attn_mask=mask), torch_sdpa(q, k, v, attn_mask=mask), **TOL[np.float64])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fully_masked_rows_are_zeros_as_in_torch(dtype, ours):
    rng, q, k, v = problem(5, 6, 7, batch=(2,), dtype=dtype)
    mask = rng.random((2, 6, 7)) < 0.6
    mask[0, 2] = False
    mask[1, [0, 5]] = False
    want = torch_sdpa(q, k, v, attn_mask=mask)
    assert np.all(want[0, 2] == 0) and np.all(want[1, [0, 5]] == 0)  # torch 2.13: zeros, not NaN
    got = ours(q, k, v, attn_mask=mask)
    np.testing.assert_allclose(got, want, **TOL[dtype])
    assert np.all(got[0, 2] == 0) and np.all(got[1, [0, 5]] == 0)


def test_scale_argument(ours):
    _, q, k, v = problem(6, 5, 8)
    for scale in (0.1, 1.0, 2.5):
        np.testing.assert_allclose(ours(q, k, v, scale=scale), torch_sdpa(q, k, v, scale=scale), **TOL[np.float64])


def test_broadcast_batch_dims():
    rng = np.random.default_rng(7)
    q = rng.standard_normal((2, 3, 5, 4))
    k = rng.standard_normal((1, 3, 6, 4))
    v = rng.standard_normal((2, 1, 6, 2))
    want = torch_sdpa(q, np.broadcast_to(k, (2, 3, 6, 4)), np.broadcast_to(v, (2, 1 * 3, 6, 2)))
    for f in OURS.values():
        np.testing.assert_allclose(f(q, k, v), want, **TOL[np.float64])


def test_weights_match_the_softmax_of_torch():
    _, q, k, _ = problem(8, 5, 7)
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    want = torch.softmax(tq @ tk.transpose(-1, -2) / np.sqrt(q.shape[-1]), dim=-1).numpy()
    np.testing.assert_allclose(attention_weights(q, k), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("is_causal", [False, True])
def test_flash_at_the_default_tile_size(dtype, is_causal):
    # Large enough for several 512 x 256 tiles and the threaded path.
    _, q, k, v = problem(9, 1100, 1300, batch=(2,), d_k=64, d_v=64, dtype=dtype)
    np.testing.assert_allclose(flash_attention(q, k, v, is_causal=is_causal), torch_sdpa(q, k, v, is_causal=is_causal), **TOL[dtype])


# --- 16-bit inputs: computed in float32, returned in their dtype --------------------------------

import ml_dtypes  # noqa: E402  (with the section that needs it)

from attention_course import (  # noqa: E402
    attention_backward,
    flash_attention_backward,
    flash_attention_forward,
    softmax,
)
from attention_course.tiled import available_backends  # noqa: E402

LOW = {"bfloat16": (np.dtype(ml_dtypes.bfloat16), torch.bfloat16), "float16": (np.dtype(np.float16), torch.float16)}


def to_torch(x, torch_dtype):
    """A NumPy array (of any float dtype) as a torch tensor of `torch_dtype`, through float32 (exact for 16 bits)."""
    return torch.from_numpy(np.ascontiguousarray(x).astype(np.float32)).to(torch_dtype)


def to_numpy(t, dtype):
    """A torch tensor back as a NumPy array of `dtype`, through float32 (exact for 16 bits)."""
    return t.detach().float().numpy().astype(dtype)


def step(dtype) -> float:
    """The distance between 1 and the next number of a 16-bit dtype: one rounding step, relative."""
    return float(ml_dtypes.finfo(dtype).eps)


@pytest.fixture(params=sorted(LOW))
def low(request):
    """(numpy dtype, torch dtype) of one 16-bit format."""
    return LOW[request.param]


@pytest.mark.parametrize("kwargs", [{}, {"is_causal": True}], ids=["no mask", "causal"])
def test_16_bit_attention_is_torchs_math_path_to_the_last_step(low, kwargs):
    """torch's math path (3-D inputs) also computes 16-bit attention in float32 and rounds once at the end."""
    dtype, tdt = low
    _, q, k, v = problem(20, 37, 45, batch=(3,), d_k=16, d_v=8)
    q, k, v = (x.astype(dtype) for x in (q, k, v))
    want = to_numpy(F.scaled_dot_product_attention(*(to_torch(x, tdt) for x in (q, k, v)), **kwargs), np.float32)
    for name, fn in OURS.items():
        got = fn(q, k, v, **kwargs)
        assert got.dtype == dtype, name
        # the same float32 result rounded once: equal, or one step apart where float32's last bits differ
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=step(dtype), atol=step(dtype) * 2**-6)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_16_bit_attention_is_as_close_to_float64_as_torchs_flash_kernel(low, backend):
    """torch's fused CPU kernel (4-D inputs) rounds the weights to 16 bits before P V; we round only the output."""
    if backend not in available_backends():
        pytest.skip("the [fast] extra (numba, SciPy) is not installed")
    dtype, tdt = low
    _, q, k, v = problem(21, 300, 300, batch=(2, 2), d_k=64, d_v=64)
    q, k, v = (x.astype(dtype) for x in (q, k, v))
    exact = scaled_dot_product_attention(*(x.astype(np.float64) for x in (q, k, v)))  # the 16-bit inputs, exactly
    theirs = to_numpy(F.scaled_dot_product_attention(*(to_torch(x, tdt) for x in (q, k, v))), np.float64)
    ours = flash_attention(q, k, v, backend=backend).astype(np.float64)
    plain = scaled_dot_product_attention(q, k, v).astype(np.float64)
    size = np.abs(exact).max()
    for got in (ours, plain):
        assert np.abs(got - exact).max() <= np.abs(theirs - exact).max()
        assert np.abs(got - theirs).max() <= 2 * step(dtype) * size  # a rounding step or two from torch's


def test_16_bit_softmax_and_masks_as_in_torch(low):
    dtype, tdt = low
    rng, q, k, v = problem(22, 6, 9, batch=(2,))
    scores = (rng.standard_normal((4, 50)) * 6).astype(dtype)
    want = to_numpy(torch.softmax(to_torch(scores, tdt), dim=-1), np.float32)
    np.testing.assert_allclose(softmax(scores).astype(np.float32), want, rtol=step(dtype), atol=step(dtype) * 2**-6)
    bias = rng.standard_normal((6, 9))
    bias[rng.random(bias.shape) < 0.3] = -np.inf
    bias[2] = -np.inf  # a query with nothing to attend to
    q, k, v, bias = (x.astype(dtype) for x in (q, k, v, bias))
    want = to_numpy(F.scaled_dot_product_attention(*(to_torch(x, tdt) for x in (q, k, v)),
                                                   attn_mask=to_torch(bias, tdt)), np.float32)
    for fn in OURS.values():
        got = fn(q, k, v, attn_mask=bias)
        assert got.dtype == dtype and np.all(got[:, 2] == 0)
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=step(dtype), atol=step(dtype) * 2**-6)


# --- the backward pass: torch's autograd through its SDPA ---------------------------------------

BACKWARD_TOL = {np.float64: dict(rtol=1e-10, atol=1e-10), np.float32: dict(rtol=1e-4, atol=1e-4)}


def torch_grads(q, k, v, g, attn_mask=None, **kwargs):
    """(dq, dk, dv) of sum(sdpa(q, k, v) * g) by torch's autograd, as NumPy."""
    t = [torch.from_numpy(np.ascontiguousarray(x)).requires_grad_() for x in (q, k, v)]
    mask = None if attn_mask is None else torch.from_numpy(np.ascontiguousarray(attn_mask))
    out = F.scaled_dot_product_attention(*t, attn_mask=mask, **kwargs)
    out.backward(torch.from_numpy(np.ascontiguousarray(g)))
    return tuple(x.grad.numpy() for x in t)


def tiled_grads(q, k, v, g, block_size=(4, 3), **kwargs):
    out, lse = flash_attention_forward(q, k, v, block_size=block_size, **kwargs)
    return flash_attention_backward(q, k, v, out, lse, g, block_size=block_size, **kwargs)


BACKWARDS = {"plain": attention_backward, "tiled": tiled_grads}


@pytest.fixture(params=sorted(BACKWARDS))
def backward(request):
    return BACKWARDS[request.param]


def backward_problem(seed, n_q, n_k, batch=(2, 3), dtype=np.float64, d_k=8, d_v=5):
    rng, q, k, v = problem(seed, n_q, n_k, batch=batch, d_k=d_k, d_v=d_v, dtype=dtype)
    return rng, q, k, v, rng.standard_normal(batch + (n_q, d_v)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_q, n_k", [(7, 7), (5, 11), (11, 5), (1, 1)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_backward_equals_torch_autograd(n_q, n_k, is_causal, dtype, backward):
    _, q, k, v, g = backward_problem(30, n_q, n_k, dtype=dtype)
    for got, want in zip(backward(q, k, v, g, is_causal=is_causal), torch_grads(q, k, v, g, is_causal=is_causal)):
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, **BACKWARD_TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["bool", "float", "padding"])
def test_backward_with_masks_and_fully_masked_rows_equals_torch_autograd(kind, dtype, backward):
    rng, q, k, v, g = backward_problem(31, 6, 9, dtype=dtype)
    if kind == "bool":
        mask = rng.random((2, 3, 6, 9)) < 0.6
        mask[0, 1, 2] = False  # a query with nothing to attend to
    elif kind == "float":
        mask = rng.standard_normal((6, 9)).astype(dtype)
        mask[rng.random(mask.shape) < 0.3] = -np.inf
        mask[4] = -np.inf
    else:
        mask = padding_mask([9, 0], 9)[:, None]  # (B, 1, 1, n_k): the second sequence is all padding
    want = torch_grads(q, k, v, g, attn_mask=mask)
    for got, w in zip(backward(q, k, v, g, attn_mask=mask), want):
        np.testing.assert_allclose(got, w, **BACKWARD_TOL[dtype])


def test_backward_of_broadcast_inputs_equals_torch_autograd(backward):
    rng = np.random.default_rng(32)
    q = rng.standard_normal((2, 3, 5, 4))
    k = rng.standard_normal((1, 3, 6, 4))
    v = rng.standard_normal((2, 1, 6, 2))
    g = rng.standard_normal((2, 3, 5, 2))
    want = torch_grads(q, k, v, g, scale=0.7)  # torch broadcasts the batch dims and sums their gradients
    for got, w in zip(backward(q, k, v, g, scale=0.7), want):
        assert got.shape == w.shape
        np.testing.assert_allclose(got, w, **BACKWARD_TOL[np.float64])


@pytest.mark.parametrize("is_causal", [False, True])
def test_tiled_backward_at_the_default_tile_size_equals_torch_autograd(is_causal):
    # several 512 x 256 tiles, the last ones ragged
    _, q, k, v, g = backward_problem(33, 700, 600, batch=(2,), dtype=np.float32, d_k=64, d_v=64)
    out, lse = flash_attention_forward(q, k, v, is_causal=is_causal)
    got = flash_attention_backward(q, k, v, out, lse, g, is_causal=is_causal)
    for x, w in zip(got, torch_grads(q, k, v, g, is_causal=is_causal)):
        np.testing.assert_allclose(x, w, **BACKWARD_TOL[np.float32])


def test_16_bit_backward_is_as_close_to_float64_as_torch_autograd(low, backward):
    dtype, tdt = low
    _, q, k, v, g = backward_problem(34, 40, 50, batch=(2,), d_v=8)
    q, k, v, g = (x.astype(dtype) for x in (q, k, v, g))
    exact = attention_backward(*(x.astype(np.float64) for x in (q, k, v, g)))
    t = [to_torch(x, tdt).requires_grad_() for x in (q, k, v)]
    F.scaled_dot_product_attention(*t).backward(to_torch(g, tdt))
    for got, theirs, e in zip(backward(q, k, v, g), (to_numpy(x.grad, np.float64) for x in t), exact):
        assert got.dtype == dtype
        size = np.abs(e).max()
        error = np.abs(got.astype(np.float64) - e).max()
        # computed in float32, rounded once: within one 16-bit step of the exact gradient
        assert error <= step(dtype) * size
        if backward is attention_backward:  # and, from the float32 weights, no further from it than torch
            assert error <= np.abs(theirs - e).max() + step(dtype) * size / 4
        # (the tiled backward computes D = rowsum(O * dO) from the output the forward returned, rounded to
        # 16 bits, as FlashAttention does: that rounding can cost it up to a step)
# --- grouped-query attention, lower-right causal masks, sliding windows ---------------------------

OURS_GQA = {
    "plain": scaled_dot_product_attention,
    "flash-numpy": lambda *a, **kw: flash_attention(*a, block_size=(4, 3), backend="numpy", **kw),
    "flash-default": lambda *a, **kw: flash_attention(*a, block_size=(4, 3), **kw),
}


@pytest.mark.parametrize("name", sorted(OURS_GQA))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("batch, h_q, h_kv", [((), 4, 2), ((2,), 6, 1), ((2,), 8, 4), ((), 3, 3)])
def test_enable_gqa_equals_torch(batch, h_q, h_kv, dtype, name):
    rng = np.random.default_rng(h_q + 10 * h_kv)
    q = rng.standard_normal(batch + (h_q, 6, 8)).astype(dtype)
    k = rng.standard_normal(batch + (h_kv, 9, 8)).astype(dtype)
    v = rng.standard_normal(batch + (h_kv, 9, 5)).astype(dtype)
    for kwargs in ({}, {"is_causal": True}):
        want = torch_sdpa(q, k, v, enable_gqa=True, **kwargs)
        np.testing.assert_allclose(OURS_GQA[name](q, k, v, enable_gqa=True, **kwargs), want, **TOL[dtype])
    if name == "plain":
        t = [torch.from_numpy(np.ascontiguousarray(x)) for x in (q, k)]
        scores = t[0] @ t[1].repeat_interleave(h_q // h_kv, dim=-3).transpose(-1, -2) / np.sqrt(8)
        np.testing.assert_allclose(attention_weights(q, k, enable_gqa=True), torch.softmax(scores, -1).numpy(), **TOL[dtype])


@pytest.mark.filterwarnings("ignore:Lower right causal bias will produce NaNs")
@pytest.mark.parametrize("ours_name", sorted(OURS_GQA))
@pytest.mark.parametrize("n_q, n_k", [(1, 9), (4, 9), (9, 9), (9, 4)])
def test_lower_right_causal_mask_equals_torch_causal_lower_right(n_q, n_k, ours_name):
    from torch.nn.attention.bias import causal_lower_right

    _, q, k, v = problem(10, n_q, n_k)
    bias = causal_lower_right(n_q, n_k)
    assert np.array_equal(bias._materialize().numpy(), causal_mask(n_q, n_k, lower_right=True))
    t = [torch.from_numpy(x) for x in (q, k, v)]
    want = F.scaled_dot_product_attention(*t, attn_mask=bias).numpy()
    got = OURS_GQA[ours_name](q, k, v, attn_mask=causal_mask(n_q, n_k, lower_right=True))
    if n_q > n_k:  # torch's lower-right bias leaves the first n_q - n_k queries NaN where we give zeros
        rows = slice(n_q - n_k, None)
        assert np.all(got[..., : n_q - n_k, :] == 0)
        got, want = got[..., rows, :], want[..., rows, :]
    np.testing.assert_allclose(got, want, **TOL[np.float64])


@pytest.mark.parametrize("n_q, n_k, window", [(7, 7, 3), (1, 9, 4), (3, 10, 4), (6, 6, 1)])
def test_sliding_window_mask_equals_transformers(n_q, n_k, window):
    pytest.importorskip("transformers", reason="transformers is not installed: pip install -e '.[torch]'")
    from transformers.masking_utils import sliding_window_causal_mask_function

    allowed = sliding_window_causal_mask_function(window)
    offset = n_k - n_q  # transformers numbers the queries by their position among the keys
    want = np.array([[bool(allowed(0, 0, torch.tensor(i + offset), torch.tensor(j))) for j in range(n_k)]
                     for i in range(n_q)])
    assert np.array_equal(sliding_window_mask(n_q, n_k, window), want)


@pytest.mark.parametrize("d_model", [64, 768])
def test_projection_inits_match_torch_linear_and_gpt2(d_model):
    """`projected_score_std`'s "torch_linear" init is nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    torch.manual_seed(0)
    weight = torch.nn.Linear(d_model, 4 * d_model).weight.detach().numpy()  # (out, in)
    bound = 1 / np.sqrt(d_model)
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.99 * bound
    np.testing.assert_allclose(weight.var(), bound**2 / 3, rtol=0.05)  # variance of U(-b, b) is b^2 / 3

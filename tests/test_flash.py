"""Tests for attention_course.flash: tiled attention equals the plain path.

The plain `scaled_dot_product_attention` is the reference (itself checked
against explicit loops in test_attention.py). float64 must agree to 1e-12 and
float32 to 1e-5, on every shape, mask and block size; memory is checked with
tracemalloc. There are no timing asserts: speed is measured by
benchmarks/bench_attention.py.
"""

import json
import subprocess
import sys
import textwrap
import threading
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_course.flash as flash
from attention_course import causal_mask, flash_attention, padding_mask, scaled_dot_product_attention
from attention_course import _threads
from attention_course._threads import run_jobs
from attention_course.cost import tile_count
from reference import attention_2d, causal_allowed

TOL = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}


def qkv(rng, n_q, n_k, d_k=8, d_v=5, batch=(), dtype=np.float64):
    q = rng.standard_normal(batch + (n_q, d_k)).astype(dtype)
    k = rng.standard_normal(batch + (n_k, d_k)).astype(dtype)
    v = rng.standard_normal(batch + (n_k, d_v)).astype(dtype)
    return q, k, v


def assert_same_as_plain(q, k, v, dtype=np.float64, **kwargs):
    """flash_attention == scaled_dot_product_attention, with the block size given in kwargs."""
    attn_kwargs = {name: kwargs[name] for name in ("attn_mask", "is_causal", "scale") if name in kwargs}
    want = scaled_dot_product_attention(q, k, v, **attn_kwargs)
    got = flash_attention(q, k, v, **kwargs)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **TOL[dtype])
    return got


@pytest.fixture
def visited_tiles(monkeypatch):
    """The (query tile start, key tile start) pairs that flash_attention's compiled loop computes, in a list."""
    visited = []
    real_attend = flash._attend

    def spy(q_tile, k, v, mask, is_causal, rows, keep_max, block_k, buffers, out):
        n_tiles = real_attend(q_tile, k, v, mask, is_causal, rows, keep_max, block_k, buffers, out)  # counted by the loop
        visited.extend((rows.start, key_tile * block_k) for key_tile in range(n_tiles))
        return n_tiles

    monkeypatch.setattr(flash, "_attend", spy)
    return visited


@pytest.fixture(params=["one thread", "threads"])
def threading_mode(request, monkeypatch):
    """Run a test once on the single-thread path and once with the tiles shared among threads."""
    if request.param == "threads":
        monkeypatch.setattr(flash, "MIN_SCORES_FOR_THREADS", 0)
    return request.param


@pytest.fixture(params=["as chosen", "running max"])
def softmax_path(request, monkeypatch):
    """Run a test once as flash_attention chooses (small scores skip the max) and once with the running max forced."""
    if request.param == "running max":
        monkeypatch.setattr(flash, "_scores_are_small", lambda *args: False)
    return request.param


@pytest.fixture
def paths_taken(monkeypatch):
    """Per query tile, in order: "running max" or "no max", as flash_attention chose."""
    taken = []
    real_attend = flash._attend

    def spy(q_tile, k, v, mask, is_causal, rows, keep_max, *rest):
        taken.append("running max" if keep_max else "no max")
        return real_attend(q_tile, k, v, mask, is_causal, rows, keep_max, *rest)

    monkeypatch.setattr(flash, "_attend", spy)
    return taken


# --- shapes and block sizes -----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "n_q, n_k, block_size",
    [
        (1, 1, 1),
        (7, 7, 3),  # block does not divide n
        (13, 5, 4),  # n_q > n_k
        (5, 13, 4),  # n_q < n_k
        (9, 9, 64),  # one tile bigger than everything
        (33, 17, (8, 5)),  # separate query and key block sizes, neither divides
        (20, 31, (1, 31)),
        (64, 64, (64, 1)),  # one key per tile: the running max changes at every step
    ],
)
def test_matches_plain_on_many_shapes(n_q, n_k, block_size, dtype, threading_mode, softmax_path):
    rng = np.random.default_rng(n_q * 1000 + n_k)
    q, k, v = qkv(rng, n_q, n_k, dtype=dtype)
    assert_same_as_plain(q, k, v, dtype, block_size=block_size)


def test_matches_the_loop_reference():
    rng = np.random.default_rng(1)
    q, k, v = qkv(rng, 6, 9, d_k=3, d_v=2)
    _, want = attention_2d(q, k, v)
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=4), want, rtol=1e-12, atol=1e-14)


def test_default_block_size_at_realistic_size(threading_mode, softmax_path):
    rng = np.random.default_rng(2)
    q, k, v = qkv(rng, 700, 1300, d_k=64, d_v=64)  # several 512 x 256 tiles, both sizes ragged
    assert_same_as_plain(q, k, v)
    assert_same_as_plain(q, k, v, is_causal=True)


@pytest.mark.parametrize(
    "q_batch, k_batch, v_batch",
    [((2, 3), (2, 3), (2, 3)), ((2, 3), (1, 3), (2, 1)), ((3,), (2, 1), ()), ((), (4,), (4,))],
)
def test_batch_and_head_dims_broadcast(q_batch, k_batch, v_batch, threading_mode, softmax_path):
    rng = np.random.default_rng(3)
    q = rng.standard_normal(q_batch + (10, 4))
    k = rng.standard_normal(k_batch + (7, 4))
    v = rng.standard_normal(v_batch + (7, 3))
    out = assert_same_as_plain(q, k, v, block_size=(4, 3))
    assert out.shape == np.broadcast_shapes(q_batch, k_batch, v_batch) + (10, 3)


# --- masks -----------------------------------------------------------------------------------


@pytest.mark.parametrize("n_q, n_k", [(10, 10), (6, 11), (11, 6)])
@pytest.mark.parametrize("block_size", [1, 3, (4, 2), (2, 5), 16])
def test_causal_matches_plain(n_q, n_k, block_size, threading_mode, softmax_path):
    rng = np.random.default_rng(n_q + n_k)
    q, k, v = qkv(rng, n_q, n_k, batch=(2,))
    assert_same_as_plain(q, k, v, is_causal=True, block_size=block_size)
    assert_same_as_plain(q, k, v, attn_mask=causal_mask(n_q, n_k), block_size=block_size)


def test_causal_matches_the_loop_reference():
    rng = np.random.default_rng(4)
    q, k, v = qkv(rng, 5, 8, d_k=3, d_v=2)
    _, want = attention_2d(q, k, v, allowed=causal_allowed(5, 8))
    np.testing.assert_allclose(flash_attention(q, k, v, is_causal=True, block_size=2), want, rtol=1e-12)


def test_causal_skips_the_key_tiles_after_the_diagonal(visited_tiles, softmax_path):
    rng = np.random.default_rng(5)
    q, k, v = qkv(rng, 16, 16)
    flash_attention(q, k, v, is_causal=True, block_size=4)
    # 4 query tiles see 1, 2, 3, 4 key tiles: 10 of the 16 tiles, never one above the diagonal.
    assert len(visited_tiles) == 10 and all(key_start <= query_start for query_start, key_start in visited_tiles)
    visited_tiles.clear()
    flash_attention(q, k, v, block_size=4)
    assert len(visited_tiles) == 16


@pytest.mark.parametrize("n_q, n_k, block", [(16, 16, 4), (10, 23, 4), (23, 10, 5), (7, 7, 8), (100, 64, 16)])
@pytest.mark.parametrize("is_causal", [False, True])
def test_visits_as_many_tiles_as_the_cost_chapter_counts(n_q, n_k, block, is_causal, visited_tiles):
    rng = np.random.default_rng(20)
    q, k, v = qkv(rng, n_q, n_k)
    flash_attention(q, k, v, is_causal=is_causal, block_size=block)
    assert len(visited_tiles) == tile_count(n_q, n_k, block_size=block, is_causal=is_causal)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask_shape", [(9, 12), (1, 12), (9, 1), (12,), (2, 9, 12), (2, 1, 12)])
def test_boolean_masks_of_every_broadcastable_shape(mask_shape, dtype, threading_mode, softmax_path):
    rng = np.random.default_rng(6)
    q, k, v = qkv(rng, 9, 12, batch=(2,), dtype=dtype)
    mask = rng.random(mask_shape) < 0.7
    assert_same_as_plain(q, k, v, dtype, attn_mask=mask, block_size=(4, 5))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mask_dtype", [np.float64, np.float32])
def test_float_masks_are_added(dtype, mask_dtype, threading_mode):
    rng = np.random.default_rng(7)
    q, k, v = qkv(rng, 9, 12, batch=(3,), dtype=dtype)
    bias = rng.standard_normal((3, 9, 12)).astype(mask_dtype)
    bias[rng.random(bias.shape) < 0.3] = -np.inf
    assert_same_as_plain(q, k, v, dtype, attn_mask=bias, block_size=(2, 5))


def test_padding_mask(softmax_path):
    rng = np.random.default_rng(8)
    q, k, v = qkv(rng, 6, 6, batch=(3,))
    assert_same_as_plain(q, k, v, attn_mask=padding_mask([6, 2, 4], 6), block_size=(4, 3))


@pytest.mark.parametrize("block_size", [1, 3, (2, 4), 100])
def test_fully_masked_rows_return_zeros(block_size, threading_mode, softmax_path):
    rng = np.random.default_rng(9)
    q, k, v = qkv(rng, 6, 7)
    mask = rng.random((6, 7)) < 0.5
    mask[[0, 3]] = False  # queries 0 and 3 may attend to nothing
    mask[1] = False
    mask[1, -1] = True  # query 1 sees only the last key, in the last tile
    out = assert_same_as_plain(q, k, v, attn_mask=mask, block_size=block_size)
    assert np.all(out[[0, 3]] == 0.0)
    np.testing.assert_allclose(out[1], v[-1], rtol=1e-12)
    bias = np.where(mask, 0.0, -np.inf)  # the same mask as a float mask
    np.testing.assert_array_equal(flash_attention(q, k, v, attn_mask=bias, block_size=block_size)[[0, 3]], 0.0)


def test_all_keys_masked_for_every_query(softmax_path):
    rng = np.random.default_rng(10)
    q, k, v = qkv(rng, 4, 5, dtype=np.float32)
    out = flash_attention(q, k, v, attn_mask=np.zeros((4, 5), dtype=bool), block_size=2)
    assert out.dtype == np.float32 and np.all(out == 0.0)


# --- numbers: dtypes, huge scores, NaN ---------------------------------------------------------


@pytest.mark.parametrize(
    "dtypes, want",
    [
        ((np.float32,) * 3, np.float32),
        ((np.float64,) * 3, np.float64),
        ((np.float32, np.float64, np.float32), np.float64),
        ((np.int64, np.int64, np.int64), np.float64),
    ],
)
def test_dtype_in_is_dtype_out(dtypes, want):
    rng = np.random.default_rng(11)
    q, k, v = ((rng.standard_normal((5, 3)) * 3).astype(dt) for dt in dtypes)
    out = flash_attention(q, k, v, block_size=2)
    assert out.dtype == want
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v), **TOL[want])


def test_float16_is_computed_in_float32_and_returned_in_float16():
    rng = np.random.default_rng(12)
    q, k, v = qkv(rng, 40, 30, dtype=np.float16)
    out = flash_attention(q, k, v, block_size=(16, 8))
    assert out.dtype == np.float16
    want = scaled_dot_product_attention(*(x.astype(np.float32) for x in (q, k, v)))
    # The float32 results agree to about 1e-7; rounded to float16 they may land one float16 step apart.
    half = np.finfo(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=half.eps, atol=half.smallest_normal)


@pytest.mark.skipif(np.finfo(np.longdouble).bits == 64, reason="long double is float64 on this platform")
def test_long_double_is_refused_with_a_pointer_to_the_plain_path():
    q = np.ones((4, 2), dtype=np.longdouble)
    with pytest.raises(TypeError, match=rf"float16, float32 or float64; got {np.dtype(np.longdouble)}.*scaled_dot_product_attention"):
        flash_attention(q, q, q)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("is_causal", [False, True])
def test_huge_scores_do_not_overflow(dtype, is_causal):
    # Scores near 1e4: exp would overflow without subtracting the running max (float32 at 88).
    rng = np.random.default_rng(12)
    q, k, v = qkv(rng, 20, 20, d_k=4, dtype=dtype)
    q = q * dtype(1e4)
    out = flash_attention(q, k, v, is_causal=is_causal, block_size=3)
    assert np.all(np.isfinite(out))
    want = scaled_dot_product_attention(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), is_causal=is_causal)
    # With scores this large the softmax is (nearly) one-hot: each output is (nearly) one value row.
    np.testing.assert_allclose(out, want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4 if dtype == np.float32 else 1e-12)


# --- which softmax: without a max for small scores, the running max otherwise -----------------


def test_the_limit_keeps_exp_within_a_third_of_the_range():
    for dtype in (np.float32, np.float64):
        limit = flash.unshifted_exp_limit(dtype)
        info = np.finfo(dtype)
        # weights up to exp(limit), times n_k * |v| up to exp(limit), summed: at most exp(2 limit) < max
        assert 3 * limit <= np.log(info.max) * (1 + 1e-12)
        assert np.exp(-limit) > float(info.tiny) * 2**50  # the largest weight is far from underflow
    assert 29 < flash.unshifted_exp_limit(np.float32) < 30 and 236 < flash.unshifted_exp_limit(np.float64) < 237


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ordinary_scores_skip_the_max(dtype, paths_taken):
    rng = np.random.default_rng(21)
    q, k, v = qkv(rng, 40, 30, d_k=16, dtype=dtype)
    assert_same_as_plain(q, k, v, dtype, block_size=(16, 8), attn_mask=rng.random((40, 30)) < 0.8)
    assert paths_taken == ["no max"] * 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scores_just_below_the_limit_skip_the_max_and_stay_exact(dtype, paths_taken):
    rng = np.random.default_rng(22)
    q, k, v = qkv(rng, 30, 30, d_k=4, dtype=dtype)
    scale = 1 / np.sqrt(4)
    bound = np.linalg.norm(q, axis=-1).max() * np.linalg.norm(k, axis=-1).max() * scale
    q = (q * (0.99 * flash.unshifted_exp_limit(dtype) / bound)).astype(dtype)  # largest possible score: 0.99 limit
    got = flash_attention(q, k, v, block_size=(30, 7))
    assert paths_taken == ["no max"]
    want = scaled_dot_product_attention(*(x.astype(np.float64) for x in (q, k, v)))
    # float32 scores of size ~30 carry an absolute rounding error ~30 * 6e-8, in both paths alike.
    tol = 1e-12 if dtype == np.float64 else 3e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "case",
    ["large scores", "float mask", "huge values", "nan query", "nan value", "huge key"],
)
def test_the_running_max_where_exp_could_overflow(case, paths_taken):
    rng = np.random.default_rng(23)
    q, k, v = qkv(rng, 12, 12, d_k=4, dtype=np.float32)
    kwargs = {}
    if case == "large scores":
        q *= np.float32(40)  # |q| |k| / 2 far above the float32 limit of 29.6
    elif case == "float mask":
        kwargs["attn_mask"] = rng.standard_normal((12, 12))
    elif case == "huge values":
        v *= np.float32(1e30)  # exp(29) * 1e30 overflows float32; the max-shifted weights (<= 1) do not
    elif case == "nan query":
        q[3, 1] = np.nan
    elif case == "nan value":
        v[3, 1] = np.nan
    else:
        k[3] *= np.float32(1e25)  # |k|^2 overflows float32 (so does the bound); the scores do not
    got = flash_attention(q, k, v, block_size=(12, 5), **kwargs)  # one query tile
    assert set(paths_taken) == {"running max"}
    want = scaled_dot_product_attention(q, k, v, **kwargs)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-4 if case == "large scores" else 1e-5, atol=1e-5 * max(1.0, float(np.abs(want[finite]).max(initial=0))))


def test_each_query_tile_chooses_for_itself(paths_taken):
    rng = np.random.default_rng(24)
    q, k, v = qkv(rng, 12, 12, d_k=4)
    q[6:] *= 300  # the second query tile has scores far above the float64 limit of 236
    assert_same_as_plain(q, k, v, block_size=(6, 4))
    assert paths_taken == ["no max", "running max"]


def test_scale_argument(softmax_path):
    rng = np.random.default_rng(13)
    q, k, v = qkv(rng, 7, 9)
    for scale in (0.01, 1.0, 3.5, -2.0):
        assert_same_as_plain(q, k, v, scale=scale, block_size=(3, 4))


def test_nan_propagates_like_the_plain_path(threading_mode, softmax_path):
    rng = np.random.default_rng(14)
    q, k, v = qkv(rng, 8, 8)
    q[2, 0] = np.nan  # one query: only its row becomes NaN
    v[5, 1] = np.nan  # one value that every query sees: column 1 of every output becomes NaN
    got = flash_attention(q, k, v, block_size=3)
    want = scaled_dot_product_attention(q, k, v)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[2]).all() and np.isnan(got[:, 1]).all()
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-12)


@pytest.mark.parametrize("where", ["key", "value"])
def test_nan_reaches_every_query_that_can_see_it(where, threading_mode, softmax_path):
    # Under the causal mask only queries 5.. see key 5. The tiled path skips the tiles that a query
    # cannot see, so queries 0..2 (whose tile ends before key 5) are not touched by the NaN; the plain
    # path multiplies the NaN by a zero weight and gets NaN for every query.
    rng = np.random.default_rng(15)
    q, k, v = qkv(rng, 8, 8)
    (k if where == "key" else v)[5, 0] = np.nan
    got = flash_attention(q, k, v, is_causal=True, block_size=3)
    assert np.isnan(got[5:]).any(axis=1).all()  # every query that sees key 5
    assert not np.isnan(got[:3]).any()  # a skipped tile
    clean = scaled_dot_product_attention(q[:3], k[:3], v[:3], is_causal=True)
    np.testing.assert_allclose(got[:3], clean, rtol=1e-12)


def test_inputs_are_not_modified(threading_mode):
    rng = np.random.default_rng(16)
    q, k, v = qkv(rng, 9, 9, dtype=np.float32)
    mask = rng.standard_normal((9, 9))
    copies = [x.copy() for x in (q, k, v, mask)]
    for x in (q, k, v, mask):
        x.flags.writeable = False  # an in-place write would raise
    flash_attention(q, k, v, attn_mask=mask, block_size=(2, 4))
    flash_attention(q, k, v, is_causal=True, block_size=3)
    for x, before in zip((q, k, v, mask), copies):
        np.testing.assert_array_equal(x, before)


def test_lists_are_accepted():
    out = flash_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]], block_size=1)
    np.testing.assert_allclose(out, scaled_dot_product_attention([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [2.0]]))


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "block_size, error",
    [
        (0, ValueError),
        (-3, ValueError),
        (2.5, TypeError),
        (True, TypeError),
        ("8", TypeError),
        (None, TypeError),
        ((8,), ValueError),
        ((8, 8, 8), ValueError),
        ((8, 0), ValueError),
        ((0, 8), ValueError),
        ((8, 2.0), TypeError),
    ],
)
def test_bad_block_size_is_rejected(block_size, error):
    q = np.ones((4, 2))
    with pytest.raises(error, match="block_size"):
        flash_attention(q, q, q, block_size=block_size)


def test_shape_and_mask_errors_name_the_argument():
    q = np.ones((4, 3))
    with pytest.raises(ValueError, match="d_k"):
        flash_attention(q, np.ones((4, 2)), q)
    with pytest.raises(ValueError, match="n_k"):
        flash_attention(q, q, np.ones((5, 3)))
    with pytest.raises(ValueError, match="attn_mask"):
        flash_attention(q, q, q, attn_mask=np.ones((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="is_causal"):
        flash_attention(q, q, q, attn_mask=np.ones((4, 4), dtype=bool), is_causal=True)
    with pytest.raises(ValueError, match="leading batch"):
        flash_attention(np.ones((2, 4, 3)), np.ones((3, 4, 3)), q)


# --- property test ----------------------------------------------------------------------------


@st.composite
def flash_problems(draw):
    """Random (q, k, v, attention kwargs, block_size): broadcast batch dims, masks, ragged tiles."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_q, n_k = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))

    def lead():  # each argument has the batch dims or broadcasts over them
        return tuple(b if draw(st.booleans()) else 1 for b in batch)

    magnitude = draw(st.sampled_from([1.0, 30.0, 1e4]))  # 1e4 would overflow a naive exp
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
    block = draw(st.one_of(st.integers(1, 14), st.tuples(st.integers(1, 14), st.integers(1, 14))))
    return q, k, v, kwargs, block


@settings(max_examples=200, deadline=None)
@given(flash_problems())
def test_property_float64_equals_plain(problem):
    q, k, v, kwargs, block = problem
    want = scaled_dot_product_attention(q, k, v, **kwargs)
    np.testing.assert_allclose(flash_attention(q, k, v, block_size=block, **kwargs), want, rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(flash_problems())
def test_property_float32_equals_plain(problem):
    q, k, v, kwargs, block = problem
    q, k, v = (x.astype(np.float32) for x in (q, k, v))
    got = flash_attention(q, k, v, block_size=block, **kwargs)
    assert got.dtype == np.float32
    # Both paths round the scores to float32 (an absolute error of ~1e-7 * |score|), which the softmax
    # turns into a relative error of the weights: compare with the float64 answer, scaled to that.
    want = scaled_dot_product_attention(*(x.astype(np.float64) for x in (q, k, v)), **kwargs)
    score_size = float(np.abs(q).max() * np.abs(k).max() * q.shape[-1])
    tol = 1e-5 * max(1.0, score_size * 1e-2)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# --- the threads ------------------------------------------------------------------------------


def test_threaded_and_single_thread_results_agree(monkeypatch):
    rng = np.random.default_rng(17)
    q, k, v = qkv(rng, 50, 40, batch=(3,))
    one = flash_attention(q, k, v, is_causal=True, block_size=(4, 8))
    monkeypatch.setattr(flash, "MIN_SCORES_FOR_THREADS", 0)
    many = flash_attention(q, k, v, is_causal=True, block_size=(4, 8))
    np.testing.assert_allclose(many, one, rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("n_workers", [1, 2, 5])
def test_run_jobs_runs_every_job_once(n_workers):
    done, lock = [], threading.Lock()

    def make_worker():
        def work(job):
            with lock:
                done.append(job)
        return work

    run_jobs(range(37), make_worker, n_workers)
    assert sorted(done) == list(range(37))


@pytest.mark.parametrize("n_workers", [1, 2])
def test_run_jobs_raises_a_workers_exception(n_workers):
    def make_worker():
        def work(job):
            if job == 7:
                raise ArithmeticError(f"job {job} failed")
        return work

    with pytest.raises(ArithmeticError, match="job 7"):
        run_jobs(range(20), make_worker, n_workers)


def test_every_blas_runs_one_thread_while_the_tiles_run():
    """SciPy's BLAS, which the compiled loop calls, is held to one thread per worker like NumPy's.

    In a fresh process that ran jobs (and so inspected the loaded BLAS
    libraries) before the kernels loaded SciPy's.
    """
    code = textwrap.dedent("""
        import json, sys
        import numpy as np
        from threadpoolctl import threadpool_info
        import attention_course.flash as flash
        from attention_course._threads import run_jobs

        run_jobs(range(4), lambda: (lambda job: None), 2)  # the BLAS libraries are inspected: NumPy's only
        assert "scipy" not in sys.modules
        seen = []
        real_attend = flash._attend

        def spy(*args):
            seen.append({lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
            return real_attend(*args)

        flash._attend = spy
        flash.MIN_SCORES_FOR_THREADS = 0
        q = np.random.default_rng(27).standard_normal((40, 8))
        flash.flash_attention(q, q, q, block_size=8)
        print(json.dumps(seen))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert len(seen) == 5 and any("scipy" in path for path in seen[0])  # SciPy's BLAS is loaded and limited
    assert all(set(threads.values()) == {1} for threads in seen), seen


@pytest.mark.parametrize("layout", ["transposed", "strided", "broadcast"])
def test_inputs_in_any_memory_layout(layout):
    rng = np.random.default_rng(28)
    q, k, v = qkv(rng, 20, 24, d_k=6, d_v=5, batch=(2,))
    if layout == "transposed":  # last axis not contiguous: copied once into rows BLAS can read
        q, k, v = (np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2) for x in (q, k, v))
    elif layout == "strided":  # every other row and column of larger arrays
        q, k, v = (np.repeat(np.repeat(x, 2, axis=-2), 2, axis=-1)[..., ::2, ::2] for x in (q, k, v))
    else:  # one key/value matrix shared by the batch, with stride 0
        k, v = (np.broadcast_to(x[:1], x.shape) for x in (k, v))
    assert not all(x.flags.c_contiguous for x in (q, k, v))
    assert_same_as_plain(q, k, v, block_size=(8, 16), is_causal=True)


# --- memory -----------------------------------------------------------------------------------


def peak_extra_bytes(fn, *args, **kwargs) -> tuple[int, np.ndarray]:
    """Peak bytes traced during fn(...) above the level before it, minus the result's own size."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        result = fn(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - before - result.nbytes, result


@pytest.mark.parametrize("is_causal", [False, True])
def test_memory_stays_far_below_the_score_matrix(is_causal):
    n, d = 4096, 64
    rng = np.random.default_rng(18)
    q, k, v = qkv(rng, n, n, d_k=d, d_v=d)
    extra, out = peak_extra_bytes(flash_attention, q, k, v, is_causal=is_causal)
    score_matrix = n * n * 8  # 128 MiB: the plain path holds several of these
    block_q, block_k = flash.DEFAULT_BLOCK_SIZE
    tiles = flash._threads_for(n * n) * block_q * block_k * 8  # one float64 tile of scores per thread
    assert extra < score_matrix / 16  # 8 MiB
    assert extra < 2 * tiles + (1 << 20)  # the tiles, the small per-tile arrays and bookkeeping
    assert np.all(np.isfinite(out))


def test_memory_does_not_grow_with_n():
    rng = np.random.default_rng(19)
    extras = []
    for n in (2048, 8192):
        q, k, v = qkv(rng, n, n, d_k=16, d_v=16, dtype=np.float32)
        extras.append(peak_extra_bytes(flash_attention, q, k, v, block_size=(64, 256))[0])
    assert extras[1] < 1.25 * extras[0] + 65536  # 16x the scores, (nearly) the same memory


@pytest.mark.parametrize("value, want", [("1", 1), ("", None), ("0", None), ("many", None), ("64", None)])
def test_omp_num_threads_caps_the_worker_threads(value, want, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = _threads.cpu_count()  # the cores this process may use
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert _threads.cpu_count() == (want if want is not None else cores)

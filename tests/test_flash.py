"""Tests for attention_course.tiled.flash: tiled attention equals the plain path, on either backend.

Every test runs on the readable NumPy loop and, where the `[fast]` extra is
installed, on the compiled accelerator; tests that take `threading_mode` or
`softmax_path` run the compiled one with the tiles shared among threads and
with the running max forced, too (see `pytest_generate_tests`). The plain
`scaled_dot_product_attention` is the reference (itself checked against
explicit loops in test_attention.py). float64 must agree to 1e-12 and float32
to 1e-5, on every shape, mask and block size; memory is checked with
tracemalloc. There are no timing asserts: speed is measured by
benchmarks/bench_attention.py. What only the compiled path does (threads, the
max-free shortcut) is tested in test_compiled_driver.py.
"""

import tracemalloc

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_course.tiled.flash as flash
from attention_course import causal_mask, flash_attention, padding_mask, scaled_dot_product_attention
from attention_course.chapters.cost import tile_count
from attention_course.tiled import _compiled
from attention_course.tiled._compiled import driver
from attention_course.tiled.online_softmax import online_softmax_update
from reference import attention_2d, causal_allowed

TOL = {np.float64: dict(rtol=1e-12, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}
NO_FAST_EXTRA = pytest.mark.skipif(not _compiled.available(), reason="the [fast] extra (numba, SciPy) is not installed")


def pytest_generate_tests(metafunc):
    """Run each test on the readable loop, and on the compiled one in every mode the test asks for."""
    threads = ("one thread", "threads") if "threading_mode" in metafunc.fixturenames else ("one thread",)
    maxes = ("as chosen", "running max") if "softmax_path" in metafunc.fixturenames else ("as chosen",)
    paths = [pytest.param(("numpy", "one thread", "as chosen"), id="numpy")]
    paths += [pytest.param(("numba", t, s), id="-".join(["numba", *(x.replace(" ", "_") for x in (t, s) if x not in ("one thread", "as chosen"))]),
                           marks=(NO_FAST_EXTRA, pytest.mark.compiled)) for t in threads for s in maxes]
    metafunc.parametrize("tiled_path", paths, indirect=True)


@pytest.fixture(autouse=True)
def tiled_path(request, monkeypatch):
    """(backend, threads, softmax): flash_attention's default backend set to it, the compiled modes forced."""
    backend, threads, softmax = request.param
    monkeypatch.setattr(flash, "default_backend", lambda: backend)
    if threads == "threads":
        monkeypatch.setattr(driver, "MIN_SCORES_FOR_THREADS", 0)
    if softmax == "running max":
        monkeypatch.setattr(driver, "_scores_are_small", lambda *args: False)
    return request.param


@pytest.fixture
def threading_mode(tiled_path):
    """"one thread", or "threads" (the compiled path with its query tiles shared among threads)."""
    return tiled_path[1]


@pytest.fixture
def softmax_path(tiled_path):
    """"as chosen" (small scores skip the max on the compiled path), or "running max" (forced)."""
    return tiled_path[2]


@pytest.fixture
def backend(tiled_path):
    """The backend this run of the test uses: "numpy" or "numba"."""
    return tiled_path[0]


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
def visited_tiles(backend, monkeypatch):
    """The (query tile start, key tile start) pairs that flash_attention computes, in a list.

    The compiled loop says how many key tiles it computed for each query tile.
    The readable loop is watched through its online-softmax step: each call is
    one key tile, a fresh state (nothing seen yet: m = -inf everywhere) starts
    a query tile, and tiles follow one another in order.
    """
    visited = []
    if backend == "numba":
        real_attend = driver._attend

        def spy(q_tile, k, v, mask, is_causal, rows, keep_max, block_k, buffers, out):
            n_tiles = real_attend(q_tile, k, v, mask, is_causal, rows, keep_max, block_k, buffers, out)
            visited.extend((rows.start, key_tile * block_k) for key_tile in range(n_tiles))
            return n_tiles

        monkeypatch.setattr(driver, "_attend", spy)
        return visited

    real_loop = flash.tiled_attention

    def loop(q, k, v, block_q, block_k, **kwargs):  # called once per batch index
        position = {"query": -block_q, "key": 0}

        def update(state, scores, values):
            if np.all(state.m == -np.inf):  # a new tile of queries starts at key 0
                position["query"] += block_q
                position["key"] = 0
            visited.append((position["query"], position["key"]))
            position["key"] += scores.shape[1]
            return online_softmax_update(state, scores, values)

        return real_loop(q, k, v, block_q, block_k, update=update, **kwargs)

    monkeypatch.setattr(flash, "tiled_attention", loop)
    return visited


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


def test_bfloat16_is_computed_in_float32_and_returned_in_bfloat16():
    rng = np.random.default_rng(13)
    q, k, v = qkv(rng, 40, 30, dtype=ml_dtypes.bfloat16)
    out = flash_attention(q, k, v, block_size=(16, 8), is_causal=True)
    assert out.dtype == ml_dtypes.bfloat16
    want = scaled_dot_product_attention(*(x.astype(np.float32) for x in (q, k, v)), is_causal=True)
    step = float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)  # one rounding of the float32 result
    np.testing.assert_allclose(out.astype(np.float32), want, rtol=step, atol=step * 2**-6)
    np.testing.assert_array_equal(out, scaled_dot_product_attention(q, k, v, is_causal=True))


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


def test_memory_does_not_grow_with_n():
    rng = np.random.default_rng(19)
    inputs = {n: qkv(rng, n, n, d_k=16, d_v=16, dtype=np.float32) for n in (2048, 8192)}
    # A first call on the longest input sets up what is made once, whatever n: the compiled path's thread pool
    # gives each thread that joins its scratch tiles, and how many threads join a call depends on the machine's
    # load; the calls measured then compare what each n needs
    flash_attention(*inputs[8192], block_size=(64, 256))
    extras = [peak_extra_bytes(flash_attention, *inputs[n], block_size=(64, 256))[0] for n in (2048, 8192)]
    assert extras[1] < 1.25 * extras[0] + 65536  # 16x the scores, (nearly) the same memory




# --- grouped-query attention ------------------------------------------------------------------


@pytest.mark.parametrize("q_batch, kv_batch, block_size", [
    ((4,), (2,), 3), ((6,), (1,), (4, 2)), ((2, 6), (2, 3), 5), ((2, 4), (1, 2), (2, 3)), ((3,), (3,), 4),
])
def test_gqa_matches_plain(q_batch, kv_batch, block_size, threading_mode, softmax_path):
    rng = np.random.default_rng(sum(q_batch) * 10 + sum(kv_batch))
    q = rng.standard_normal(q_batch + (9, 4))
    k, v = rng.standard_normal(kv_batch + (11, 4)), rng.standard_normal(kv_batch + (11, 3))
    for kwargs in ({}, {"is_causal": True}, {"attn_mask": causal_mask(9, 11, lower_right=True)}):
        want = scaled_dot_product_attention(q, k, v, enable_gqa=True, **kwargs)
        got = flash_attention(q, k, v, block_size=block_size, enable_gqa=True, **kwargs)
        np.testing.assert_allclose(got, want, **TOL[np.float64])


def test_gqa_reads_the_shared_head_in_place(backend, monkeypatch):
    """Each query head gets a view of its key/value head: K and V are never copied per query head."""
    rng = np.random.default_rng(21)
    q = rng.standard_normal((6, 5, 4))
    k, v = rng.standard_normal((2, 7, 4)), rng.standard_normal((2, 7, 3))
    seen = []
    if backend == "numba":
        real = driver._attend

        def spy(q_tile, k_b, v_b, *args):
            seen.append((k_b, v_b))
            return real(q_tile, k_b, v_b, *args)

        monkeypatch.setattr(driver, "_attend", spy)
    else:
        real = flash.tiled_attention

        def spy(q_b, k_b, v_b, *args, **kwargs):
            seen.append((k_b, v_b))
            return real(q_b, k_b, v_b, *args, **kwargs)

        monkeypatch.setattr(flash, "tiled_attention", spy)
    flash_attention(q, k, v, block_size=8, enable_gqa=True)
    assert len(seen) == 6  # one call per query head (one tile each)
    for head, (k_b, v_b) in enumerate(seen):
        assert np.shares_memory(k_b, k) and np.shares_memory(v_b, v)
        assert np.array_equal(k_b, k[head // 3]) and np.array_equal(v_b, v[head // 3])


def test_gqa_does_not_allocate_repeated_keys_and_values():
    rng = np.random.default_rng(22)
    q = rng.standard_normal((16, 64, 32)).astype(np.float32)  # 16 query heads ...
    k, v = (rng.standard_normal((1, 2048, 32)).astype(np.float32) for _ in range(2))  # ... share one key/value head
    flash_attention(q[:2, :2], k, v, enable_gqa=True)  # loads the compiled loop first, if that is the backend
    extra, _ = peak_extra_bytes(flash_attention, q, k, v, block_size=(64, 256), enable_gqa=True)
    assert extra < 16 * k.nbytes / 4  # repeating K and V for every query head would take 32x k.nbytes


def test_gqa_errors_name_the_argument():
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        flash_attention(np.ones((3, 2, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 4)), enable_gqa=True)
    with pytest.raises(ValueError, match="pass enable_gqa=True"):
        flash_attention(np.ones((4, 2, 4)), np.ones((2, 5, 4)), np.ones((2, 5, 4)))


# --- the backends -----------------------------------------------------------------------------


def test_the_default_backend_is_the_accelerator_when_installed(monkeypatch):
    monkeypatch.undo()  # this test looks at the real default, not the one the fixture set
    assert flash.default_backend() == ("numba" if _compiled.available() else "numpy")
    assert flash.available_backends()[0] == "numpy" and flash.default_backend() in flash.available_backends()


def test_a_backend_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(_compiled, "missing", lambda: ["numba", "scipy"])
    q = np.ones((4, 2))
    with pytest.raises(ImportError, match=r"\[fast\].*missing: numba, scipy.*backend='numpy'"):
        flash_attention(q, q, q, backend="numba")
    assert flash.available_backends() == ("numpy",)
    np.testing.assert_allclose(flash_attention(q, q, q, backend="numpy"), scaled_dot_product_attention(q, q, q))


@pytest.mark.parametrize("backend_name", ["torch", "NUMPY", "", 1])
def test_an_unknown_backend_is_refused_with_the_choices(backend_name):
    q = np.ones((4, 2))
    with pytest.raises(ValueError, match="backend must be one of 'numpy', 'numba' or None"):
        flash_attention(q, q, q, backend=backend_name)


@pytest.mark.skipif(np.finfo(np.longdouble).bits == 64, reason="long double is float64 on this platform")
def test_long_double_takes_the_readable_loop():
    rng = np.random.default_rng(29)
    q, k, v = qkv(rng, 7, 9, dtype=np.longdouble)
    out = flash_attention(q, k, v, block_size=3)
    assert out.dtype == np.longdouble
    np.testing.assert_allclose(out, scaled_dot_product_attention(q, k, v), rtol=1e-15)

"""Tests for attention_course.chapters.cost: counted FLOPs and bytes, measured time and memory, slopes."""

import math

import numpy as np
import pytest

from attention_course import flash_attention, scaled_dot_product_attention
from attention_course.chapters.cost import (
    SOFTMAX_FLOPS_PER_SCORE,
    attention_flops,
    backward_flops,
    loglog_slope,
    measure,
    score_matrix_bytes,
    tile_count,
)
from attention_course.tiled import _compiled
from reference import causal_allowed

# --- counting ------------------------------------------------------------------------------


def test_flops_of_the_three_parts():
    f = attention_flops(3, 5, d_k=4, d_v=2)
    assert f.scores == 2 * 3 * 5 * 4  # 15 dot products of length 4: 4 multiplies and 4 adds each
    assert f.mix == 2 * 3 * 5 * 2
    assert f.softmax == SOFTMAX_FLOPS_PER_SCORE * 15
    assert f.total == f.scores + f.softmax + f.mix


def test_flops_defaults_and_batch():
    assert attention_flops(8, d_k=4) == attention_flops(8, 8, d_k=4, d_v=4)
    assert attention_flops(8, d_k=4, batch=6).total == 6 * attention_flops(8, d_k=4).total


def test_flops_grow_as_n_squared_times_d():
    assert attention_flops(2048, d_k=64).total == 4 * attention_flops(1024, d_k=64).total
    assert attention_flops(1024, d_k=128).scores == 2 * attention_flops(1024, d_k=64).scores


def test_flops_do_not_overflow_for_long_sequences():
    f = attention_flops(1_000_000, d_k=128, batch=64)
    assert f.scores == 2 * 64 * 10**12 * 128  # exact Python ints


def test_score_matrix_bytes_per_dtype():
    assert score_matrix_bytes(1024, dtype="float32") == 4 * 2**20
    assert score_matrix_bytes(1024, 512, dtype=np.float64) == 8 * 2**19
    assert score_matrix_bytes(16384, dtype="float32") == 2**30  # 1 GiB: the n x n float32 matrix at n = 16384
    assert score_matrix_bytes(4, dtype="float16", batch=3) == 3 * 16 * 2


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: attention_flops(0), ValueError, "n_q"),
        (lambda: attention_flops(4, d_k=2.0), TypeError, "d_k"),
        (lambda: score_matrix_bytes(4, dtype="not-a-dtype"), TypeError, "dtype"),
        (lambda: tile_count(4, block_size=0), ValueError, "block_size"),
    ],
)
def test_counting_rejects_bad_arguments(call, error, words):
    with pytest.raises(error, match=words):
        call()


@pytest.mark.parametrize("n_q, n_k, b", [(8, 8, 4), (10, 10, 4), (9, 13, 4), (13, 9, 5), (1, 7, 3), (64, 64, 16)])
@pytest.mark.parametrize("causal", [False, True])
def test_tile_count_matches_a_brute_force_count(n_q, n_k, b, causal):
    allowed = causal_allowed(n_q, n_k) if causal else np.ones((n_q, n_k), bool)
    tiles = sum(
        1
        for i0 in range(0, n_q, b)
        for j0 in range(0, n_k, b)
        if allowed[i0:i0 + b, j0:j0 + b].any()  # a tile is visited unless all its scores are masked
    )
    assert tile_count(n_q, n_k, b, is_causal=causal) == tiles


def test_causal_skips_about_half_the_tiles():
    full, causal = tile_count(4096, block_size=128), tile_count(4096, block_size=128, is_causal=True)
    assert full == 32 * 32
    assert causal == 32 * 33 // 2


# --- measuring -----------------------------------------------------------------------------


def test_measure_sees_the_memory_a_call_allocates():
    n_bytes = 8 * 2**20

    def allocate():
        tmp = np.ones(n_bytes // 8)  # 8 MiB of float64, freed on return
        return float(tmp.sum())

    m = measure(allocate, repeat=3)
    assert m.times.shape == (3,)
    assert np.all(m.times > 0) and m.best <= m.median
    assert n_bytes <= m.peak_bytes < n_bytes + 2**20
    assert m.result_bytes == 0  # a float, not an array


def test_measure_reports_the_result_separately():
    m = measure(np.zeros, (256, 256), repeat=1)
    assert m.result_bytes == 256 * 256 * 8
    assert m.extra_bytes < 2**16  # nothing beyond the returned array


def test_measure_passes_arguments_and_counts_calls():
    calls = []

    def f(a, b=0):
        calls.append((a, b))

    measure(f, 1, b=2, repeat=4, warmup=2)
    assert calls == [(1, 2)] * 7  # 2 warm-up, 4 timed, 1 for memory


def test_measure_nests_inside_an_existing_trace():
    import tracemalloc

    tracemalloc.start()
    try:
        m = measure(lambda: np.ones(2**17), repeat=1)
        assert tracemalloc.is_tracing()  # measure must not stop someone else's trace
    finally:
        tracemalloc.stop()
    assert m.result_bytes == 2**20 and m.peak_bytes >= 2**20


def test_measure_can_limit_blas_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    seen = []

    def record():
        seen.append([pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"])

    before = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    assert before, "threadpoolctl does not see NumPy's BLAS"
    measure(record, repeat=2, blas_threads=1)
    assert len(seen) == 4 and all(threads == [1] * len(before) for threads in seen)
    after = [pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"]
    assert after == before  # restored afterwards


def test_measure_rejects_bad_arguments():
    with pytest.raises(TypeError, match="fn"):
        measure(42)
    with pytest.raises(ValueError, match="repeat"):
        measure(lambda: None, repeat=0)
    with pytest.raises(ValueError, match="warmup"):
        measure(lambda: None, warmup=-1)
    with pytest.raises(ValueError, match="blas_threads"):
        measure(lambda: None, blas_threads=0)


@pytest.mark.parametrize("backend", [
    "numpy",  # the readable loop
    pytest.param("numba", marks=(pytest.mark.compiled, pytest.mark.skipif(
        not _compiled.available(), reason="the [fast] extra (numba, SciPy) is not installed"))),
])
def test_plain_attention_memory_grows_as_n_squared_and_tiled_stays_flat(backend):
    rng = np.random.default_rng(0)
    ns = [128, 256, 512]
    plain, tiled = [], []
    for n in ns:
        q, k, v = (rng.standard_normal((n, 16)) for _ in range(3))
        plain.append(measure(scaled_dot_product_attention, q, k, v, repeat=1, warmup=0).extra_bytes)
        tiled.append(measure(flash_attention, q, k, v, block_size=64, backend=backend, repeat=1, warmup=0).extra_bytes)
    assert loglog_slope(ns, plain).slope == pytest.approx(2.0, abs=0.15)
    assert abs(loglog_slope(ns, tiled).slope) < 0.15
    assert plain[-1] >= score_matrix_bytes(512, dtype="float64")  # at least the n x n matrix


# --- slopes --------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 2.5])
def test_loglog_slope_recovers_a_power_law(p):
    x = np.array([10, 20, 40, 80, 160])
    fit = loglog_slope(x, 3.0 * x**p)
    assert fit.slope == pytest.approx(p, abs=1e-12)
    assert fit.intercept == pytest.approx(math.log(3.0))
    np.testing.assert_allclose(fit(x), 3.0 * x**p, rtol=1e-12)


def test_loglog_slope_of_noisy_quadratic_is_near_two():
    rng = np.random.default_rng(0)
    x = np.array([256, 512, 1024, 2048, 4096])
    y = x**2 * np.exp(rng.normal(0, 0.1, x.size))
    assert loglog_slope(x, y).slope == pytest.approx(2.0, abs=0.15)


@pytest.mark.parametrize(
    "x, y, words",
    [
        ([1, 2], [1, 2, 3], "same length"),
        ([4, 4], [1, 2], "two distinct"),
        ([1, 2], [0, 1], "positive"),
        ([-1, 2], [1, 1], "positive"),
    ],
)
def test_loglog_slope_rejects_bad_input(x, y, words):
    with pytest.raises(ValueError, match=words):
        loglog_slope(x, y)


def test_the_tiled_backward_does_two_and_a_half_times_the_forwards_products():
    fwd = attention_flops(1024, d_k=64)
    bwd = backward_flops(1024, d_k=64)
    kept = backward_flops(1024, d_k=64, recompute=False)
    assert bwd.products == 10 * 1024**2 * 64 and kept.products == 8 * 1024**2 * 64
    assert bwd.products / (fwd.scores + fwd.mix) == 2.5 and kept.products / (fwd.scores + fwd.mix) == 2
    assert bwd.total == bwd.products + 5 * 1024**2 + 2 * 1024 * 64
    assert kept.scores == kept.weights == 0
    assert backward_flops(3, 5, d_k=2, d_v=7, batch=4).dv == 2 * 4 * 3 * 5 * 7


def test_measure_subtracts_every_array_a_backward_returns():
    m = measure(lambda: (np.zeros(1000), np.zeros(500), "not an array"), repeat=1, warmup=0)
    assert m.result_bytes == 1500 * 8

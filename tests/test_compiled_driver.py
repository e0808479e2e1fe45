"""Tests for attention_course.tiled._compiled.driver: what only the compiled path of flash_attention does.

Its results are tested with the readable loop's in test_flash.py. Here: the
max-free shortcut for provably small scores and when it is not taken, the
threads that share the query tiles (BLAS held to one thread each), the
tile-per-thread memory, and the dtypes the loop is compiled for.
"""

import json
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

pytest.importorskip("numba", reason="the [fast] extra (numba, SciPy) is not installed")

from attention_course import flash_attention, scaled_dot_product_attention  # noqa: E402
from attention_course.tiled._compiled import driver, threads  # noqa: E402
from attention_course.tiled._compiled.threads import run_jobs  # noqa: E402
from attention_course.tiled.flash import DEFAULT_BLOCK_SIZE  # noqa: E402
from test_flash import TOL, peak_extra_bytes, qkv  # noqa: E402


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    """flash_attention's default backend is the compiled one in every test here."""
    import attention_course.tiled.flash as flash

    monkeypatch.setattr(flash, "default_backend", lambda: "numba")


def assert_same_as_plain(q, k, v, dtype=np.float64, **kwargs):
    """The compiled flash_attention == scaled_dot_product_attention."""
    attn_kwargs = {name: kwargs[name] for name in ("attn_mask", "is_causal", "scale") if name in kwargs}
    got = flash_attention(q, k, v, backend="numba", **kwargs)
    np.testing.assert_allclose(got, scaled_dot_product_attention(q, k, v, **attn_kwargs), **TOL[dtype])
    return got


@pytest.fixture
def paths_taken(monkeypatch):
    """Per query tile, in order: "running max" or "no max", as flash_attention chose."""
    taken = []
    real_attend = driver._attend

    def spy(q_tile, k, v, mask, is_causal, rows, keep_max, *rest):
        taken.append("running max" if keep_max else "no max")
        return real_attend(q_tile, k, v, mask, is_causal, rows, keep_max, *rest)

    monkeypatch.setattr(driver, "_attend", spy)
    return taken


@pytest.mark.skipif(np.finfo(np.longdouble).bits == 64, reason="long double is float64 on this platform")
def test_long_double_is_refused_with_a_pointer_to_the_readable_loop():
    q = np.ones((4, 2), dtype=np.longdouble)
    with pytest.raises(TypeError, match=rf"compiled for float32 and float64.*got {np.dtype(np.longdouble)}.*backend='numpy'"):
        flash_attention(q, q, q, backend="numba")
    np.testing.assert_allclose(flash_attention(q, q, q), scaled_dot_product_attention(q, q, q), rtol=1e-15)  # the readable loop


# --- which softmax: without a max for small scores, the running max otherwise -----------------


def test_the_limit_keeps_exp_within_a_third_of_the_range():
    for dtype in (np.float32, np.float64):
        limit = driver.unshifted_exp_limit(dtype)
        info = np.finfo(dtype)
        # weights up to exp(limit), times n_k * |v| up to exp(limit), summed: at most exp(2 limit) < max
        assert 3 * limit <= np.log(info.max) * (1 + 1e-12)
        assert np.exp(-limit) > float(info.tiny) * 2**50  # the largest weight is far from underflow
    assert 29 < driver.unshifted_exp_limit(np.float32) < 30 and 236 < driver.unshifted_exp_limit(np.float64) < 237


@pytest.mark.compiled
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ordinary_scores_skip_the_max(dtype, paths_taken):
    rng = np.random.default_rng(21)
    q, k, v = qkv(rng, 40, 30, d_k=16, dtype=dtype)
    assert_same_as_plain(q, k, v, dtype, block_size=(16, 8), attn_mask=rng.random((40, 30)) < 0.8)
    assert paths_taken == ["no max"] * 3


@pytest.mark.compiled
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scores_just_below_the_limit_skip_the_max_and_stay_exact(dtype, paths_taken):
    rng = np.random.default_rng(22)
    q, k, v = qkv(rng, 30, 30, d_k=4, dtype=dtype)
    scale = 1 / np.sqrt(4)
    bound = np.linalg.norm(q, axis=-1).max() * np.linalg.norm(k, axis=-1).max() * scale
    q = (q * (0.99 * driver.unshifted_exp_limit(dtype) / bound)).astype(dtype)  # largest possible score: 0.99 limit
    got = flash_attention(q, k, v, block_size=(30, 7))
    assert paths_taken == ["no max"]
    want = scaled_dot_product_attention(*(x.astype(np.float64) for x in (q, k, v)))
    # float32 scores of size ~30 carry an absolute rounding error ~30 * 6e-8, in both paths alike.
    tol = 1e-12 if dtype == np.float64 else 3e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.compiled
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


@pytest.mark.compiled
def test_each_query_tile_chooses_for_itself(paths_taken):
    rng = np.random.default_rng(24)
    q, k, v = qkv(rng, 12, 12, d_k=4)
    q[6:] *= 300  # the second query tile has scores far above the float64 limit of 236
    assert_same_as_plain(q, k, v, block_size=(6, 4))
    assert paths_taken == ["no max", "running max"]


@pytest.mark.compiled
def test_threaded_and_single_thread_results_agree(monkeypatch):
    rng = np.random.default_rng(17)
    q, k, v = qkv(rng, 50, 40, batch=(3,))
    one = flash_attention(q, k, v, is_causal=True, block_size=(4, 8))
    monkeypatch.setattr(driver, "MIN_SCORES_FOR_THREADS", 0)
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


@pytest.mark.compiled
def test_every_blas_runs_one_thread_while_the_tiles_run():
    """SciPy's BLAS, which the compiled loop calls, is held to one thread per worker like NumPy's.

    In a fresh process that ran jobs (and so inspected the loaded BLAS
    libraries) before the kernels loaded SciPy's.
    """
    code = textwrap.dedent("""
        import json, sys
        import numpy as np
        from threadpoolctl import threadpool_info
        from attention_course import flash_attention
        from attention_course.tiled._compiled import driver
        from attention_course.tiled._compiled.threads import run_jobs

        run_jobs(range(4), lambda: (lambda job: None), 2)  # the BLAS libraries are inspected: NumPy's only
        assert "scipy" not in sys.modules
        seen = []
        real_attend = driver._attend

        def spy(*args):
            seen.append({lib["filepath"]: lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
            return real_attend(*args)

        driver._attend = spy
        driver.MIN_SCORES_FOR_THREADS = 0
        q = np.random.default_rng(27).standard_normal((40, 8))
        flash_attention(q, q, q, block_size=8, backend="numba")
        print(json.dumps(seen))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert len(seen) == 5 and any("scipy" in path for path in seen[0])  # SciPy's BLAS is loaded and limited
    assert all(set(limits.values()) == {1} for limits in seen), seen


@pytest.mark.compiled
@pytest.mark.parametrize("is_causal", [False, True])
def test_memory_stays_far_below_the_score_matrix(is_causal):
    n, d = 4096, 64
    rng = np.random.default_rng(18)
    q, k, v = qkv(rng, n, n, d_k=d, d_v=d)
    extra, out = peak_extra_bytes(flash_attention, q, k, v, is_causal=is_causal)
    score_matrix = n * n * 8  # 128 MiB: the plain path holds several of these
    block_q, block_k = DEFAULT_BLOCK_SIZE
    tiles = driver._threads_for(n * n) * block_q * block_k * 8  # one float64 tile of scores per thread
    assert extra < score_matrix / 16  # 8 MiB
    assert extra < 2 * tiles + (1 << 20)  # the tiles, the small per-tile arrays and bookkeeping
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("value, want", [("1", 1), ("", None), ("0", None), ("many", None), ("64", None)])
def test_omp_num_threads_caps_the_worker_threads(value, want, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = threads.cpu_count()  # the cores this process may use
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    assert threads.cpu_count() == (want if want is not None else cores)

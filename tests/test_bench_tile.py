"""benchmarks/bench_tile.py runs, and the loop it takes apart is flash_attention's compiled one (no timing asserts)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.compiled

pytest.importorskip("numba", reason="the [fast] extra (numba, SciPy) is not installed: bench_tile takes its loop apart")

from attention_course import flash_attention  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tile.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tile", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_timed_loops_compute_what_flash_attention_computes(bench, dtype):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((300, 16)).astype(dtype) for _ in range(3))  # partial tiles at the end
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bench.compiled_loop(q, k, v, 64, 128), flash_attention(q, k, v, backend="numba"), **tol)
    out, scratch, l = np.empty_like(v), np.empty((64, 128), dtype), np.zeros(64, dtype)
    bench.products(q, k, v, 64, 128, scratch, out, False, l)
    np.testing.assert_allclose(out, (q @ k.T) @ v, rtol=1e-4 if dtype == np.float32 else 1e-11, atol=1e-3)  # (n, d_v)


def test_small_run_prints_every_row(bench, capsys, monkeypatch):
    from attention_course.tiled._compiled import driver

    monkeypatch.setattr(driver, "cpu_count", driver.cpu_count)  # the script sets it to one thread; restore it after
    assert bench.main(["--n", "600", "--repeats", "2", "--no-torch"]) == 0
    out = capsys.readouterr().out
    rows = ("flash_attention, whole call", "compiled loop", "the two products alone", "compiled pass (exp, row sums)",
            "rest of the loop", "outside the loop", "np.exp on the same tiles")
    for row in rows:
        assert out.count(f"   {row} ") == 2  # float32 and float64
    assert "torch" not in out.split("\n", 1)[1]


def test_bad_arguments_are_refused(bench):
    with pytest.raises(SystemExit):
        bench.main(["--n", "0"])

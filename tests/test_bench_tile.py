"""benchmarks/bench_tile.py runs, and the loop it takes apart is flash_attention's (no timing asserts)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_course import flash_attention

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_tile.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_tile", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_timed_loop_computes_flash_attention(bench, dtype):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((300, 16)).astype(dtype) for _ in range(3))  # partial tiles at the end
    parts, out = bench.loop_parts(q, k, v, 64, 128)
    np.testing.assert_allclose(out, flash_attention(q, k, v), rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    assert set(parts) == {"Q K^T", "compiled pass", "P V", "rest", "loop, all of it"}
    assert all(seconds >= 0 for seconds in parts.values())


def test_small_run_prints_every_row(bench, capsys, monkeypatch):
    import attention_course.flash as flash

    monkeypatch.setattr(flash, "cpu_count", flash.cpu_count)  # the script sets it to one thread; restore it after
    assert bench.main(["--n", "600", "--repeats", "2", "--no-torch"]) == 0
    out = capsys.readouterr().out
    for row in ("flash_attention, whole call", "Q K^T", "compiled pass", "P V", "rest", "np.exp on the same tiles"):
        assert out.count(f"   {row} ") == 2  # float32 and float64
    assert "torch" not in out.split("\n", 1)[1]


def test_bad_arguments_are_refused(bench):
    with pytest.raises(SystemExit):
        bench.main(["--n", "0"])

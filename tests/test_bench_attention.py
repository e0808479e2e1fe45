"""The benchmark script runs and prints what it promises (a smoke test: no timing asserts)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_course.tiled import _compiled

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_attention.py"
needs_compiled = pytest.mark.skipif(not _compiled.available(), reason="the [fast] extra (numba, SciPy) is not installed")


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_attention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@needs_compiled
@pytest.mark.compiled
def test_small_run_prints_every_row_and_the_summary(bench, capsys):
    argv = ["--sizes", "96", "200x2", "--repeats", "2", "--no-torch", "--blocks", "64x128", "32", "--running-max",
            "--readable", "--settle", "0"]
    assert bench.main(argv) == 0
    out = capsys.readouterr().out
    for label in ("n=96 h=1 float32", "n=96 h=1 float64", "n=200 h=2 float32", "n=200 h=2 float64"):
        assert f"== {label}:" in out
    assert "torch: left out (--no-torch)" in out and "   torch " not in out
    for row in ("plain", "flash 64x128", "flash 32x32", "flash max", "flash numpy"):
        assert out.count(f"   {row} ") == 4  # one row per configuration
    assert "flash_attention: backend numba" in out
    assert "== targets for flash 64x128, backend numba" in out and "% of f32 matmul" in out


def test_the_readable_backend_can_be_measured_alone(bench, capsys):
    assert bench.main(["--sizes", "96", "--repeats", "1", "--no-torch", "--backend", "numpy", "--settle", "0"]) == 0
    out = capsys.readouterr().out
    assert "flash_attention: backend numpy" in out and "1 worker threads" in out
    assert out.count("   flash ") == 2 and "== targets for flash, backend numpy" in out
    with pytest.raises(SystemExit, match="--running-max"):
        bench.main(["--sizes", "96", "--no-torch", "--backend", "numpy", "--running-max"])


def test_paths_that_hold_the_scores_are_skipped_above_the_memory_budget(bench, capsys):
    bench.main(["--sizes", "300", "--repeats", "1", "--no-torch", "--max-gib", "0.0001", "--dtypes", "float32", "--settle", "0",
                "--backend", "numpy"])  # the readable loop: nothing to compile
    out = capsys.readouterr().out
    assert "plain skipped" in out and "   plain " not in out
    assert "   flash " in out


def test_causal_counts_half_the_flops(bench):
    full, causal = bench.Config(1024, 2, "float32", False), bench.Config(1024, 2, "float32", True)
    assert full.flops == 4 * 1024**2 * 64 * 2 and causal.flops == full.flops / 2
    assert full.score_bytes == 2 * 1024**2 * 4


@pytest.mark.parametrize("text, want", [("128x512", (128, 512)), ("64", (64, 64)), ("256X1024", (256, 1024))])
def test_parse_block(bench, text, want):
    assert bench.parse_block(text) == want


@pytest.mark.parametrize("text", ["0x8", "8x", "axb", "1x2x3", "-4"])
def test_parse_block_rejects(bench, text):
    with pytest.raises(Exception, match="block size"):
        bench.parse_block(text)


@pytest.mark.parametrize("text, want", [("4096", (4096, 1)), ("8192x8", (8192, 8))])
def test_parse_config(bench, text, want):
    assert bench.parse_config(text) == want


@needs_compiled
@pytest.mark.compiled
def test_running_max_row_turns_the_shortcut_off_and_back_on(bench, monkeypatch):
    from attention_course import flash_attention
    from attention_course.tiled._compiled import driver

    real = driver._scores_are_small
    seen = []
    monkeypatch.setattr(driver, "_scores_are_small", lambda *args: seen.append(args) or real(*args))
    patched = driver._scores_are_small
    q = np.random.default_rng(0).standard_normal((8, 4))
    out = bench.with_running_max(flash_attention, q, q, q, block_size=4, backend="numba")
    assert seen == []  # the shortcut was never asked: every tile took the running max
    assert driver._scores_are_small is patched  # and it is back afterwards
    np.testing.assert_allclose(out, flash_attention(q, q, q, block_size=4, backend="numba"), rtol=1e-12)
    assert len(seen) == 2  # two query tiles, each asked


@pytest.mark.parametrize("argv", [["--settle", "-1"], ["--repeats", "0"], ["--threads", "0"]])
def test_bad_options_are_rejected(bench, argv):
    with pytest.raises(SystemExit):
        bench.main(argv + ["--sizes", "64", "--no-torch"])

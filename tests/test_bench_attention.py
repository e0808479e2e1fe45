"""The benchmark script runs and prints what it promises (a smoke test: no timing asserts)."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_attention.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_attention", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_small_run_prints_every_row_and_the_summary(bench, capsys):
    assert bench.main(["--sizes", "96", "200x2", "--repeats", "2", "--no-torch", "--blocks", "64x128", "32"]) == 0
    out = capsys.readouterr().out
    for label in ("n=96 h=1 float32", "n=96 h=1 float64", "n=200 h=2 float32", "n=200 h=2 float64"):
        assert f"== {label}:" in out
    assert "torch: left out (--no-torch)" in out and "   torch " not in out
    for row in ("plain", "flash 64x128", "flash 32x32"):
        assert out.count(f"   {row} ") == 4  # one row per configuration
    assert "issue 7 targets" in out and "% of f32 matmul" in out


def test_paths_that_hold_the_scores_are_skipped_above_the_memory_budget(bench, capsys):
    bench.main(["--sizes", "300", "--repeats", "1", "--no-torch", "--max-gib", "0.0001", "--dtypes", "float32"])
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

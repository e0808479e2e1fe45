"""The backward benchmark runs and prints what it promises (a smoke test: no timing asserts)."""

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_backward.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_backward", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def test_small_run_prints_every_row(bench, capsys):
    assert bench.main(["--sizes", "96", "130", "--repeats", "2", "--no-torch", "--settle", "0"]) == 0
    out = capsys.readouterr().out
    for n in (96, 130):
        assert f"== n={n} d=64:" in out
    assert out.count("   tiled ") == 2 and out.count("   plain ") == 2 and "   torch " not in out
    assert "torch: left out (--no-torch)" in out


def test_the_plain_backward_is_skipped_above_the_memory_budget(bench, capsys):
    bench.main(["--sizes", "300", "--repeats", "1", "--no-torch", "--max-gib", "0.0001", "--settle", "0"])
    out = capsys.readouterr().out
    assert "plain skipped" in out and "   plain " not in out and "   tiled " in out


def test_torch_rows_where_torch_is_installed(bench, capsys):
    pytest.importorskip("torch", reason="torch is not installed: pip install -e '.[torch]' to compare")
    bench.main(["--sizes", "64", "--repeats", "1", "--settle", "0", "--no-torch-memory"])
    out = capsys.readouterr().out
    assert "   torch " in out and "/ torch" in out


@pytest.mark.parametrize("argv", [["--settle", "-1"], ["--repeats", "0"], ["--threads", "0"], ["--sizes", "0"]])
def test_bad_options_are_rejected(bench, argv):
    with pytest.raises(SystemExit):
        bench.main(argv + ([] if "--sizes" in argv else ["--sizes", "64"]) + ["--no-torch"])

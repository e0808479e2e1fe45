"""benchmarks/bench_roofline.py runs and prints the ceilings and every point (no timing asserts)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_roofline.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_roofline", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_small_run_prints_the_ceilings_and_every_point(bench, capsys):
    assert bench.main(["--model", "small", "--contexts", "8", "40", "--prompts", "5", "--layouts", "MHA", "MQA",
                       "--rounds", "2", "--stream-mib", "4", "--matmul", "64"]) == 0
    out = capsys.readouterr().out
    assert "memory bandwidth (4 MiB streamed)" in out and "ridge point" in out
    for label in ("decode MHA, 8 tokens", "decode MHA, 40 tokens", "decode MQA, 8 tokens", "decode MQA, 40 tokens"):
        line = next(row for row in out.splitlines() if row.startswith(label))
        assert len(line.split()) == 4 + 9  # the label's words, then numbers, a unit and two [low-high] ranges
    prefill = next(row for row in out.splitlines() if row.startswith("prefill, 5 tokens"))
    assert len(prefill.split()) == 3 + 7  # no KVCache column


@pytest.mark.parametrize("argv", [["--contexts", "0"], ["--rounds", "0"], ["--layouts", "MoE"]])
def test_bad_arguments_are_refused(bench, argv):
    with pytest.raises(SystemExit):
        bench.main(argv)

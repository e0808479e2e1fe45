"""benchmarks/bench_check.py splits a check into its stages and prints them (no timing asserts)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_check.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stage_whose_end_was_not_noted_is_merged_into_the_next(bench):
    marks = {"import": 1.0, "sandbox start": 3.5, "notebook run": 4.0, "sandbox end": 4.25}
    stages = bench._stages(0.5, marks, 5.0)
    assert stages == {"import": 0.5, "sandbox start": 2.5, "notebook run": 0.5, "sandbox end": 0.25, "judging": 0.75,
                      "total": 4.5}


def test_one_check_of_each_notebook_notes_every_stage(bench, tmp_path):
    import shutil

    for name in bench.NOTEBOOKS:
        shutil.copy(bench.ROOT / "solutions" / f"{name}.ipynb", tmp_path)
    for name in bench.NOTEBOOKS:
        runs = bench._time_checks({"after": bench.ROOT}, tmp_path / f"{name}.ipynb", rounds=1)
        (run,) = runs["after"]
        assert set(run) == {*bench.STAGES, "total"}, name  # the driver found every function it wraps
        assert all(seconds >= 0 for seconds in run.values()) and run["total"] > 0, run


@pytest.mark.parametrize("argv", [["--rounds", "0"], ["--copies", "-1"], ["--batch-rounds", "0"]])
def test_bad_arguments_are_refused(bench, argv):
    with pytest.raises(SystemExit):
        bench.main(argv)

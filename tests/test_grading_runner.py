"""Tests for attention_course/grading/kit/sandbox/runner.py: one notebook, run again without what killed it."""

import numpy as np
import pytest

from attention_course.grading.checks.engine import calls
from attention_course.grading.kit.sandbox.runner import Call, InvalidNotebook, Limits, read_notebook, run_notebook

FAST = Limits(cell_seconds=2, call_seconds=2, grace_seconds=1, notebook_seconds=60)
DOUBLE = "def double(x):\n    return x * 2"


def call(function="double", group="g", call_id=0, args=None):
    return Call(call_id, group, function, (np.arange(3.0),) if args is None else args, seconds=2)


def test_cells_run_and_calls_come_back_as_arrays():
    run = run_notebook(["import numpy as np\nprint('hi')", "%time y = 1", DOUBLE], [call(), call("nope", call_id=1)], FAST)
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])
    assert run.observations[1].status == calls.MISSING
    assert [c.status for c in run.cells.values()] == ["ok", "ok", "ok"]  # IPython magics work
    assert "hi" in run.output and run.incidents == [] and run.restarts == 0


def test_a_failing_cell_does_not_stop_the_next_ones():
    run = run_notebook(["1 / 0", DOUBLE], [call()], FAST)
    assert run.cells[0].status == "error" and "ZeroDivisionError" in run.cells[0].error
    assert run.observations[0].status == calls.RETURNED


def test_os_exit_in_a_cell_costs_only_that_cell():
    run = run_notebook(["import os\nos._exit(0)", DOUBLE], [call()], FAST)
    assert run.cells[0].status == "killed" and run.restarts == 1
    assert run.observations[0].status == calls.RETURNED
    assert "os._exit" in run.incidents[0]


def test_a_call_that_kills_the_process_skips_the_rest_of_its_group():
    code = "import os\ndef boom(x):\n    os._exit(1)\n" + DOUBLE
    run = run_notebook([code], [call("boom", "b", 0), call("boom", "b", 1), call("double", "d", 2)], FAST)
    assert run.observations[0].status == calls.CRASHED
    assert run.observations[1].status == calls.SKIPPED
    assert run.observations[2].status == calls.RETURNED


def test_read_notebook_rejects_what_is_not_a_notebook(tmp_path):
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{ not json")
    with pytest.raises(InvalidNotebook, match="not a valid notebook"):
        read_notebook(bad)
    wrong = tmp_path / "wrong.ipynb"
    wrong.write_text('{"cells": 3}')
    with pytest.raises(InvalidNotebook):
        read_notebook(wrong)


def test_read_notebook_never_follows_a_link_nor_quotes_what_it_read(tmp_path):
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$SECRETHASH:19000:0:99999:7:::\n")
    (tmp_path / "link.ipynb").symlink_to(secret)
    with pytest.raises(InvalidNotebook, match="is a link to another file"):
        read_notebook(tmp_path / "link.ipynb")
    copy = tmp_path / "copy.ipynb"
    copy.write_bytes(secret.read_bytes())
    with pytest.raises(InvalidNotebook, match="it is not JSON") as caught:
        read_notebook(copy)
    assert "SECRET" not in str(caught.value)


def test_read_notebook_refuses_a_huge_file_without_reading_it(tmp_path):
    huge = tmp_path / "huge.ipynb"
    with huge.open("wb") as f:
        f.truncate(200_000_000)  # 200 MB of outputs, as far as the size says (a sparse file: nothing is written)
    with pytest.raises(InvalidNotebook, match=r"is 200.0 MB, more than the 67.1 MB a notebook may be; clear its outputs"):
        read_notebook(huge)

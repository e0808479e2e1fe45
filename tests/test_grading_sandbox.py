"""Tests for attention_course/grading/sandbox.py and worker.py: one worker process and its limits."""

import os
import time

import numpy as np

from attention_course.grading.engine import calls
from attention_course.grading.sandbox.runner import run_notebook
from attention_course.grading.sandbox.process import Call, Limits, Output, WorkerProcess

FAST = Limits(cell_seconds=2, call_seconds=2, grace_seconds=1, notebook_seconds=60)
DOUBLE = "def double(x):\n    return x * 2"


def call(function="double", group="g", call_id=0):
    return Call(call_id, group, function, (np.arange(3.0),), seconds=2)


def worker(cells, pending=(), limits=FAST):
    process = WorkerProcess(cells, set(), list(pending), limits, time.monotonic() + 60, Output(1000))
    process.run()
    return process


def test_a_clean_run_finishes_and_reports_every_cell_and_call():
    process = worker(["x = 1", DOUBLE], [call()])
    assert process.finished and process.step is None and process.reason == ""
    assert sorted(process.cells) == [0, 1]
    assert process.observations[0].status == calls.RETURNED


def test_writing_into_the_result_channel_gets_the_worker_killed():
    scribble = "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'garbage')\n    except OSError:\n        pass"
    process = worker([scribble, DOUBLE], [call()])
    assert not process.finished and process.kill == "channel" and process.step == ("cell", 0)
    assert "result channel" in process.reason


def test_a_cell_that_ignores_its_alarm_is_killed_after_the_grace_period():
    stubborn = "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(30)"
    start = time.monotonic()
    process = worker([stubborn])
    assert process.kill == "time" and process.step == ("cell", 0)
    assert time.monotonic() - start < 15


def test_the_grader_environment_does_not_leak(monkeypatch):
    monkeypatch.setenv("SECRET_TOKEN", "do-not-show")
    code = "import os\nleak = os.environ.get('SECRET_TOKEN')\ndef double(x):\n    return x * (2 if leak is None else 3)"
    run = run_notebook([code], [call()], FAST)
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


def test_files_written_are_reported_and_removed(tmp_path):
    before = set(os.listdir(tmp_path))
    run = run_notebook(["open('left.txt', 'w').write('x')\nimport os\nprint(os.getcwd())"], [], FAST)
    assert run.files_written == ["left.txt"]
    work = run.output.strip().splitlines()[-1]
    assert not os.path.exists(work) and set(os.listdir(tmp_path)) == before


def test_memory_limit_turns_a_bomb_into_memory_error():
    run = run_notebook(["x = bytearray(3 * 2**30)"], [], Limits(memory_bytes=1 << 30, cell_seconds=5))
    assert run.cells[0].status == "memory"

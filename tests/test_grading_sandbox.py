"""Tests for attention_course/grading/run/sandbox/process.py (with channel.py and tree.py), worker.py and watch.py: one worker, its limits, its watch."""

import json
import os
import time

import numpy as np
import pytest

from attention_course.grading.checks.engine import calls
from attention_course.grading.run.sandbox import bubblewrap
from attention_course.grading.run.sandbox.bubblewrap import Bubblewrap
from attention_course.grading.run.sandbox.channel import Call
from attention_course.grading.run.sandbox.process import Limits, Output, WorkerProcess
from attention_course.grading.run.sandbox.runner import run_notebook
from attention_course.grading.run.status import CellOutcome

pytestmark = pytest.mark.sandbox

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
    assert process.observations[0].status == calls.CallOutcome.RETURNED


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
    assert run.cells[0].status == CellOutcome.MEMORY


# --- what the worker's watch reports, without a sandbox (harmless operations only) ------------------

WATCHED = """import os, signal, socket, subprocess
child = subprocess.Popen(['sleep', '30'])
child.terminate()  # its own child: nothing to report but the start
child.wait()
try:
    os.kill(4_194_400, signal.SIGTERM)  # above any pid there can be: nobody receives it
except OSError:
    pass
free = socket.socket(); free.bind(('127.0.0.1', 0)); port = free.getsockname()[1]; free.close()
try:
    socket.create_connection(('127.0.0.1', port), timeout=1)
except OSError:
    pass
try:
    open('/nonexistent/solutions/05_causal_mask.ipynb')
except OSError:
    pass
import attention_course.grading.checks.engine.check as check
check.case_verdict = lambda *args: None
import numpy as np
np.allclose = lambda *args, **kwargs: True
"""


def test_the_watch_names_what_each_cell_tried():
    run = run_notebook(["x = 1", WATCHED, DOUBLE], [call()], FAST)
    text = "\n".join(run.incidents)
    assert run.flags == ["network", "read course files", "signal", "tampered with the grader"], run.incidents
    assert all(i.startswith("code cell 2 (`import os, signal, socket, subprocess`)") for i in run.incidents)
    assert "started processes (`sleep 30`)" in text and "SIGTERM to process 4194400" in text
    assert text.count("SIGTERM") == 1
    assert "connect to 127.0.0.1:" in text and "read /nonexistent/solutions/05_causal_mask.ipynb" in text
    assert "attention_course.grading.checks.engine.check.case_verdict" in text and "numpy.allclose" in text
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


def test_an_honest_notebook_has_nothing_to_report():
    honest = ["import numpy as np\nimport attention_course as ac\nprint(ac.BANK_BOT.trace())",
              "import tempfile, pathlib\nwith tempfile.TemporaryDirectory() as d:\n    (pathlib.Path(d) / 'a').write_text('x')",
              "try:\n    1 / 0\nexcept ZeroDivisionError:\n    pass", DOUBLE]
    run = run_notebook(honest, [call()], FAST)
    assert run.incidents == [] and run.flags == [] and run.files_written == []


def test_without_a_sandbox_the_grader_stops_reading_pipes_an_escaped_process_holds():
    marker = f"45.{os.getpid()}"
    escape = f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'], start_new_session=True)"
    try:
        run = run_notebook([escape, DOUBLE], [call()], FAST)
        assert run.seconds < float(marker) / 2, "the grader waited for the escaped process's pipe"
        assert run.observations[0].status == calls.CallOutcome.RETURNED
    finally:
        for pid in _running(marker):  # it escaped: no sandbox kills it, so end it here, by its pid
            os.kill(pid, 9)


def _running(marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if marker.encode() in open(f"/proc/{name}/cmdline", "rb").read():
                    found.append(int(name))
            except OSError:
                pass
    return found


# --- a worker in a bubblewrap sandbox ---------------------------------------------------------------

BOX = bubblewrap.available()
PROBE = """import json, os, resource, socket
from pathlib import Path
import attention_course
package = Path(attention_course.__file__).parent
try:
    open(package / '__init__.py', 'a')
    writable = True
except OSError:
    writable = False
print(json.dumps({'pid': os.getpid(), 'uid': os.getuid(), 'net': [n for _, n in socket.if_nameindex()],
                  'beside': sorted(os.listdir(package.parent)), 'writable': writable, 'cwd': os.getcwd(),
                  'files': sorted(os.listdir('.')), 'home': os.environ['HOME'], 'shadow': os.path.exists('/etc/shadow'),
                  'limits': [resource.getrlimit(r)[1] for r in (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_FSIZE)]}))
"""
MODES = [pytest.param(False, id="as root, no user namespace"), pytest.param(True, id="in a user namespace")]


def _box(user_namespace: bool) -> Bubblewrap:
    if BOX is None:
        pytest.skip("bubblewrap cannot run a sandbox here")
    if not user_namespace and os.geteuid() != 0:
        pytest.skip("only root drops a worker to another uid")
    return Bubblewrap(BOX.executable, user_namespace)


@pytest.mark.parametrize("user_namespace", MODES)
def test_a_sandboxed_worker_sees_only_what_it_needs(user_namespace, tmp_path):
    box = _box(user_namespace)
    notebook = tmp_path / "alice's 05.ipynb"
    notebook.write_text("{}")
    limits = Limits(cell_seconds=10, memory_bytes=1 << 30, file_bytes=1 << 22, processes=40)
    run = run_notebook([PROBE, DOUBLE], [call()], limits, sandbox=box, notebook=notebook)
    seen = json.loads(run.output.strip().splitlines()[-1])
    assert seen["pid"] == 2 and seen["net"] == ["lo"] and not seen["writable"] and not seen["shadow"]
    assert seen["beside"] == sorted({"attention_course"} | ({".venv"} if ".venv" in seen["beside"] else set()))
    assert seen["cwd"] == "/sandbox/work" and seen["files"] == ["alice_s 05.ipynb"] and seen["home"] == "/sandbox/home"
    assert seen["limits"] == [1 << 30, 40, 1 << 22]
    if not user_namespace:
        assert seen["uid"] >= 1_000_000_000
    assert run.sandboxed and run.observations[0].status == calls.CallOutcome.RETURNED
    assert run.flags == ["read course files", "wrote outside"], run.incidents  # what the probe itself tried


PROC_ONE = """import json, os
seen = {'cmdline': open('/proc/1/cmdline', 'rb').read().decode(errors='replace').split(chr(0))}
fds = []
for fd in os.listdir('/proc/self/fd'):
    try:
        fds.append(os.readlink(f'/proc/self/fd/{fd}'))
    except OSError:
        pass
seen['fds'] = fds
print(json.dumps(seen))
"""


@pytest.mark.parametrize("user_namespace", MODES)
def test_the_sandbox_s_process_1_shows_none_of_the_grader_s_paths(user_namespace, tmp_path):
    """bwrap is the sandbox's process 1, and /proc shows its command line to the notebook: its options (every folder
    bound, the course's checkout) reach it through a memory file, and that file is not left open in the worker."""
    box = _box(user_namespace)
    notebook = tmp_path / "submissions" / "alice" / "05.ipynb"
    notebook.parent.mkdir(parents=True)
    notebook.write_text("{}")
    run = run_notebook([PROC_ONE, DOUBLE], [call()], FAST, sandbox=box, notebook=notebook)
    seen = json.loads(run.output.strip().splitlines()[-1])
    said = " ".join(seen["cmdline"])
    assert seen["cmdline"][:2] == [box.executable, "--args"], said
    for secret in ("--ro-bind", "--bind", "--tmpfs", str(tmp_path), str(bubblewrap.package_dir())):
        assert secret not in said, secret
    assert not any("bwrap-options" in target for target in seen["fds"]), seen["fds"]
    assert run.observations[0].status == calls.CallOutcome.RETURNED


@pytest.mark.parametrize("user_namespace", MODES)
def test_a_stubborn_cell_is_killed_with_everything_it_started(user_namespace):
    box = _box(user_namespace)
    marker = f"46.{os.getpid()}"
    stubborn = (f"import os, signal, time\nos.system('setsid sleep {marker} &')\n"
                "signal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    time.sleep(1)")
    run = run_notebook([stubborn, DOUBLE], [call()], FAST, sandbox=box)
    assert run.cells[0].status == CellOutcome.KILLED and run.restarts == 1
    assert run.observations[0].status == calls.CallOutcome.RETURNED
    assert _running(marker) == [], "the sleeper outlived its sandbox"


def test_the_watch_sees_code_replaced_between_two_looks_and_nothing_else():
    import builtins
    import sys

    import attention_course.core.masks  # noqa: F401 -- loaded on first use: here, before the snapshot
    import attention_course.core.softmax  # noqa: F401
    import attention_course.grading  # noqa: F401 -- the worker's imports
    from attention_course.grading.checks.engine import cases as engine_cases
    from attention_course.grading.checks.engine import check as engine_check
    from attention_course.grading.run.sandbox.watch import Watch

    softmax_module = sys.modules["attention_course.core.softmax"]
    softmax = softmax_module.softmax
    found = []
    watch = Watch(lambda kind, detail: found.append((kind, detail)), writable=[], course=[], visible=[], provided=[])
    watch.snapshot()  # without install(): the audit hook could not be removed from the test's process

    def look() -> list:
        watch.changes()
        seen = list(found)
        found.clear()
        return seen

    def other(x, axis=-1):
        return x

    replacements = [  # (object, attribute, a new value, the name a look reports, its kind)
        (softmax, "__code__", other.__code__, "attention_course.core.softmax.softmax", "tampered"),
        (softmax, "__defaults__", (0,), "attention_course.core.softmax.softmax", "tampered"),
        (softmax, "__kwdefaults__", {"axis": 0}, "attention_course.core.softmax.softmax", "tampered"),
        (softmax_module, "softmax", other, "attention_course.core.softmax.softmax", "tampered"),
        (engine_check.Check, "indices", other, "attention_course.grading.checks.engine.check.Check.indices", "tampered"),
        (engine_cases, "SHOW_MAX_ELEMENTS", 10**9, "attention_course.grading.checks.engine.cases.SHOW_MAX_ELEMENTS",
         "tampered"),
        (builtins, "len", lambda obj, len=len: len(obj), "builtins.len", "tampered"),
        (np, "exp", np.log, "numpy.exp", "numpy"),
    ]
    assert look() == []
    for owner, name, value, reported, kind in replacements:
        before = getattr(owner, name)
        setattr(owner, name, value)
        try:
            seen = look()
        finally:
            setattr(owner, name, before)
        # every name the function is known by is listed (five at most, then "and N more")
        assert [k for k, _ in seen] == [kind], (name, seen)
        shown = seen[0][1].split(" and ")[0].split(", ")
        assert reported in shown or (len(shown) == 5 and all(n.endswith(reported.rsplit(".")[-1]) for n in shown)), seen
        assert look() and look() == [], name  # put back is changed again, then nothing is
    masks = sys.modules["attention_course.core.masks"]
    sys.modules["attention_course.core.masks"] = type(masks)("attention_course.core.masks")
    try:
        assert look() == look() == [("tampered", "sys.modules['attention_course.core.masks']")]
    finally:
        sys.modules["attention_course.core.masks"] = masks
    assert look() == []


def test_the_watch_takes_a_module_imported_since_its_last_look_as_it_comes_then_sees_it_changed():
    import importlib
    import sys

    from attention_course.grading.checks import exercises
    from attention_course.grading.run.sandbox.watch import Watch

    name = "attention_course.grading.checks.exercises.softmax"
    loaded = importlib.import_module(name)
    found = []
    del sys.modules[name]
    delattr(exercises, "softmax")
    try:
        watch = Watch(lambda kind, detail: found.append((kind, detail)), writable=[], course=[], visible=[],
                      provided=[])
        watch.snapshot()
        fresh = importlib.import_module(name)  # its names, and the registry's new name for it, are the import's
        assert fresh is not loaded and exercises.softmax is fresh
        watch.changes()
        assert found == []
        fresh.SOFTMAX = loaded.SOFTMAX  # then known: a name replaced in it is seen
        watch.changes()
        assert found == [("tampered", f"{name}.SOFTMAX")]
        found.clear()
        exercises.planted = fresh  # a name added to a module known before the import is still seen
        watch.changes()
        assert found == [("tampered", "attention_course.grading.checks.exercises.planted")]
    finally:
        sys.modules[name] = loaded
        exercises.softmax = loaded
        vars(exercises).pop("planted", None)


def test_a_notebook_that_imports_checks_of_other_exercises_is_not_said_to_tamper():
    cells = ["from attention_course.grading import check_causal_mask, check_softmax\n"
             "import attention_course.grading.checks.exercises.flash", DOUBLE]
    run = run_notebook(cells, [call()], FAST)
    assert run.cells[0].status == CellOutcome.OK and run.flags == [], run.incidents


@pytest.mark.parametrize("user_namespace", MODES)
def test_a_worker_started_ahead_runs_the_notebook_and_one_never_used_is_ended(user_namespace, tmp_path):
    import psutil

    from attention_course.grading.run.sandbox.process import start_worker

    box = _box(user_namespace)
    notebook = tmp_path / "05.ipynb"
    notebook.write_text("{}")
    started = start_worker(FAST, sandbox=box, notebook=notebook)
    run = run_notebook(["import os\nfiles = os.listdir('.')", DOUBLE], [call()], FAST, sandbox=box, notebook=notebook,
                       started=started)
    assert run.sandboxed and run.restarts == 0 and run.cells[0].status == CellOutcome.OK
    assert run.observations[0].status == calls.CallOutcome.RETURNED and started.proc.returncode is not None
    unused = start_worker(FAST, sandbox=box, notebook=notebook)
    time.sleep(0.5)  # bwrap has started the sandbox's processes
    inside = psutil.Process(unused.proc.pid).children(recursive=True)
    assert inside
    unused.discard()
    unused.discard()  # a second time does nothing
    assert unused.proc.returncode is not None
    gone, alive = psutil.wait_procs(inside, timeout=5)
    assert alive == [], "a process of the unused sandbox outlived it"


INTROSPECTION = {
    "`gc.get_objects()`": "import gc\nfound = len(gc.get_objects())",
    "`sys._getframe()`": "import sys\nabove = sys._getframe(1)",
    "`sys._current_frames()`": "import sys\nframes = sys._current_frames()",
    "`sys.settrace()`": "import sys\nsys.settrace(lambda *args: None)\nsys.settrace(None)",
    "a frame (`.tb_frame`)": "try:\n    1 / 0\nexcept ZeroDivisionError as err:\n    frame = err.__traceback__.tb_frame",
    "stack": "import inspect\nstack = inspect.stack(0)",
}


def test_the_ways_into_the_process_own_objects_are_named_as_the_notebook_takes_them():
    # The grader's watch and its channel live in the notebook's process: whatever reaches them is noted before the
    # notebook holds it. A library doing the same on its own (logging, namedtuple) is not the notebook.
    quiet = "import collections, logging\nlogging.getLogger('x').warning('hi')\nPoint = collections.namedtuple('P', 'x')"
    run = run_notebook([quiet, *INTROSPECTION.values(), DOUBLE], [call()], FAST)
    text = "\n".join(run.incidents)
    assert run.flags == ["tampered with the grader"], run.incidents
    assert "code cell 1" not in text and all(i.kind == "tampered with the grader" for i in run.incidents)
    for n, what in enumerate(INTROSPECTION, start=2):
        line = next(i for i in run.incidents if i.startswith(f"code cell {n} "))
        assert "reached into its process's own frames or objects" in line and (what in line or what == "stack"), line
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


# Each calls a course function the exercise does not provide, then tries to hide it from the grader's watch.
HIDING = {
    # the profiler, which `sys.getprofile()` hands to anyone: its record cleared, or what it calls replaced
    "sys.getprofile": """import sys, attention_course as ac
def double(x):
    profile = sys.getprofile()
    record = [c.cell_contents for c in profile.__closure__ or () if type(c.cell_contents) is dict]
    if not record and profile.__defaults__:
        profile.__defaults__ = (lambda *args: None, *profile.__defaults__[1:])
    ac.causal_mask(3)
    for found in record:
        found.clear()
    return x * 2""",
    # the worker's frames, handed out by the traceback module, and the object that sends the findings silenced
    "traceback.walk_stack": """import attention_course as ac, traceback
def double(x):
    ac.causal_mask(3)
    for frame in [f for f, _ in traceback.walk_stack(None)]:
        for value in list(frame.f_locals.values()):
            if type(value).__name__ == '_Findings':
                value._send = lambda *args: None
    return x * 2""",
    # the same frames through the interpreter's C API
    "ctypes": """import attention_course as ac, ctypes
current_frame = ctypes.pythonapi.PyEval_GetFrame
current_frame.restype = ctypes.py_object
def double(x):
    ac.causal_mask(3)
    frame = current_frame()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if type(value).__name__ == '_Findings':
                value._send = lambda *args: None
        frame = frame.f_back
    return x * 2""",
}


@pytest.mark.parametrize("way", HIDING)
def test_a_notebook_cannot_hide_its_use_of_the_course_code(way):
    run = run_notebook([HIDING[way]], [call()], FAST)
    assert run.observations[0].status == calls.CallOutcome.RETURNED, run.observations[0]
    assert run.flags and set(run.flags) <= {"used the course's code", "tampered with the grader"}, run.incidents


def test_the_traceback_module_and_ctypes_used_for_their_own_ends_are_not_flagged():
    honest = ("import ctypes, logging, traceback\nimport numpy as np\nlibc = ctypes.CDLL(None)\n"
              "length = libc.strlen(b'abc')\n"
              "def double(x):\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        text = traceback.format_exc()\n"
              "    frames = traceback.extract_tb(None)\n    logging.getLogger('x').warning('%s', len(frames))\n"
              "    return np.asarray(x) * 2")
    run = run_notebook([honest], [call()], FAST)
    assert run.flags == [] and run.incidents == [], run.incidents
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


THREAD_BOMBS = {
    "threading": "import threading, time\nfor _ in range(5000):\n    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()",
    "_thread": "import _thread, time\nfor _ in range(5000):\n    _thread.start_new_thread(time.sleep, (60,))",
}


@pytest.mark.parametrize("way", THREAD_BOMBS)
def test_a_thread_bomb_is_one_finding_without_a_count(way):
    box = _box(True)
    run = run_notebook([THREAD_BOMBS[way], DOUBLE], [call()], FAST, sandbox=box)
    assert run.flags == ["too many processes"], run.incidents
    assert len(run.incidents) == 1 and run.incidents[0].startswith("code cell 1 (`import "), run.incidents
    assert f"more processes than the {FAST.processes} it may run at once (a thread counts as one)" in run.incidents[0]
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


def test_reading_the_code_of_a_course_function_is_using_the_course_code():
    copy = ("import types\nimport attention_course as ac\n"
            "causal = types.FunctionType(ac.causal_mask.__code__.replace(co_filename='mine'), ac.causal_mask.__globals__)\n"
            "own = ac.softmax.__code__  # what the exercise provides\n"
            "import inspect\nshown = inspect.signature(ac.padding_mask)  # inspect reads it to show its arguments")
    run = run_notebook([copy], [], FAST, provided=("softmax",))
    assert run.flags == ["used the course's code"], run.incidents
    assert run.incidents == ["code cell 1 (`import types`) read the code of the course's own functions beyond what the "
                             "exercise provides (attention_course.core.masks.causal_mask.__code__)"], run.incidents
    assert "softmax" not in "\n".join(run.incidents)


def test_a_closed_result_channel_is_tampering_and_its_cell_is_skipped():
    process = worker(["import os\nos.closerange(3, 4096)", DOUBLE], [call()])
    assert not process.finished and process.kill == "channel" and process.step == ("cell", 0)
    assert "closed or replaced its descriptor" in process.reason
    run = run_notebook(["import os\nos.closerange(3, 4096)", DOUBLE], [call()], FAST)
    assert run.flags == ["tampered with the grader"] and run.cells[0].status == CellOutcome.KILLED
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])


def test_listing_its_own_scratch_folder_is_not_reading_outside():
    look = "import os\nprint(os.listdir(os.path.dirname(os.getcwd())), os.listdir(os.environ['HOME']))"
    run = run_notebook([look, DOUBLE], [call()], FAST)
    assert run.incidents == [] and run.flags == [], run.incidents


def test_a_copy_of_the_worker_forked_by_a_cell_ends_with_that_cell():
    # Left alone, the copy would run the next cells and the grader's calls too (a fork bomb's copies each calling the
    # functions again, taking the CPU from the worker), and still be there when the notebook finished.
    noted = "import os\ndef double(x):\n    open(f'called-by-{os.getpid()}', 'w').close()\n    return x * 2"
    run = run_notebook(["import os\nos.fork()", noted], [call()], FAST)
    np.testing.assert_array_equal(run.observations[0].value, [0.0, 2.0, 4.0])
    assert len(run.files_written) == 1, run.files_written  # the worker's call alone
    assert "code cell 1 (`import os`) started processes (`os.fork()`)" in run.incidents
    assert not any("still running" in i for i in run.incidents), run.incidents

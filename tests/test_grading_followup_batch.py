"""Tests for the batch grader's follow-up of a failed check (run/sandbox/worker.py finds it, run/judge.py checks it).

A failed check is looked at closer in the notebook's sandbox, as a notebook's
own check does (`run.search`): the student's helper at fault, or the smallest
input that still fails the same way. The grader believes none of it that
`run.follow_up` cannot verify, so the batch says what the notebook's check
says, and a notebook that forges its follow-up gets no claim from it.
"""

import dataclasses
import json
import time
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course.grading.checks.engine import calls, results
from attention_course.grading.checks.engine.cases import Case
from attention_course.grading.checks.engine.check import check_verdict
from attention_course.grading.checks.engine.run import FollowUp, check_in_process, search
from attention_course.grading.checks.engine.shrink import OBSERVED_ONLY
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.grading.run.plan import Plan, plan_notebook
from attention_course.grading.classroom.batch import grade_submissions
from attention_course.grading.classroom.intake import collect
from attention_course.grading.run.judge import NotebookGrade, Verdicts, judge_run
from attention_course.grading.classroom.report import NotebookRecord
from attention_course.grading.classroom.score import _check_feedback
from attention_course.grading.run.sandbox import bubblewrap
from attention_course.grading.run.sandbox.channel import Call, Reports
from attention_course.grading.run.sandbox.protocol import ProtocolError, encode, pack_follow_up, unpack_follow_up
from attention_course.grading.run.sandbox.process import Output, WorkerProcess
from attention_course.grading.run.sandbox.runner import Limits, NotebookRun
from attention_course.grading.run.status import Status, Stop
from attention_course.grading.classroom.write.feedback import HIDDEN_TEXT, check_result

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grading_corpus" / "mistakes"
FAST = Limits(cell_seconds=3, call_seconds=3, grace_seconds=1, notebook_seconds=60, memory_bytes=1 << 30)
SANDBOX = bubblewrap.available() is not None
CHECKS = {c.name: (e, c) for e in EXERCISES for c in e.checks}
FIELDS = ("status", "score", "max_score", "message", "hint", "mistake", "smallest")

OWN_SOFTMAX = '''
def softmax(x, axis=-1):
    e = np.exp(x)  # no maximum subtracted: overflows on large scores
    return e / e.sum(axis=axis, keepdims=True)


def attention(Q, K, V):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
'''
"""An attention right in itself, calling the student's own softmax, which is wrong."""


def _namespace(source: str, filename: str = "<student>") -> dict:
    """What running `source` defines (from a file, so that a traceback shows the line that raised, as a notebook's
    does)."""
    namespace = {"np": np, "math": __import__("math"), "__name__": "__main__"}  # as in a notebook
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _cells(source: str) -> list[str]:
    return ["import math\nimport numpy as np", source]


def _worker(check, fn, indices: list[int]) -> tuple[dict, FollowUp]:
    """What an honest worker observes and finds for `check` (call id = case index): the observations, the
    follow-up with call ids for its case indices."""
    observations = {i: calls.observe_call(fn, check.cases[i].args, check.cases[i].kwargs) for i in indices}
    found = search(check, fn, check_verdict(check, observations), observations)
    arrays: dict = {}
    packed = pack_follow_up(found, {i: i for i in observations}, arrays)  # through the wire, as the grader reads it
    return observations, unpack_follow_up(packed, arrays)


def _grade(check_name: str, source: str, found: FollowUp, observations: dict, flags=()) -> NotebookGrade:
    exercise, check = CHECKS[check_name]
    where = {i: (check.name, i) for i in observations}
    run = NotebookRun(observations, {}, [], "", 0, 0.0, 0, flags=list(flags), follow_ups={check.name: found})
    return judge_run(Plan(Path("nb.ipynb"), tuple(_cells(source)), exercise, (check,), (), where), run)


def _judge(check_name: str, source: str, found: FollowUp, observations: dict, flags=()) -> results.CheckResult:
    return _grade(check_name, source, found, observations, flags).checks[0]


def _feedback(grade: NotebookGrade) -> tuple[str, str]:
    """What the student reads of the notebook's first check: its feedback file's text, and the LMS's cell."""
    saved = NotebookRecord.from_json(json.loads(json.dumps(NotebookRecord.of(grade).to_json())))  # as the file keeps it
    return str(check_result(saved.checks[0])), " ".join(_check_feedback(saved.grade()))


def _same(a: results.CheckResult, b: results.CheckResult) -> list:
    return [(f, getattr(a, f), getattr(b, f)) for f in FIELDS if getattr(a, f) != getattr(b, f)]


# ---- the grader's side: what it believes of a worker's follow-up --------------------------------------------


def test_a_helper_at_fault_found_by_the_worker_gives_the_notebook_checks_hint():
    _, check = CHECKS["attention"]
    fn = _namespace(OWN_SOFTMAX)["attention"]
    observations, found = _worker(check, fn, check.indices(True))
    grade = _grade("attention", OWN_SOFTMAX, found, observations)
    in_notebook = check_in_process(check, fn, hidden=True)
    assert in_notebook.mistake == "helper_at_fault" and "your `softmax`" in in_notebook.hint
    assert _same(grade.checks[0], in_notebook) == []
    page, cell = _feedback(grade)
    assert "your `softmax`" in page.replace("\n", " ") and "your `softmax`" in cell


def test_a_helper_claim_the_grader_cannot_verify_is_dropped():
    _, check = CHECKS["attention"]
    fn = _namespace(OWN_SOFTMAX)["attention"]
    observations, found = _worker(check, fn, check.indices(True))
    plain = check_verdict(check, observations)
    right = {i: calls.Observation(calls.CallOutcome.RETURNED, value=check.expected(i)) for i in observations}
    for forged in (dataclasses.replace(found, helper="np"),  # not a helper of the check
                   dataclasses.replace(found, helper="dot_scores", swapped=right),  # the function never reads it
                   dataclasses.replace(found, swapped={}),  # no swapped calls to check
                   dataclasses.replace(found, swapped={i: observations[i] for i in observations})):  # still wrong
        result = _judge("attention", OWN_SOFTMAX, forged, observations)
        assert result.mistake != "helper_at_fault" and result.hint == plain.hint, forged.helper
    tampered = _judge("attention", OWN_SOFTMAX, found, observations, flags=[Status.TAMPERED])
    assert tampered.mistake != "helper_at_fault"  # a notebook that changed the grader's code: its worker's word is void
    course_softmax = OWN_SOFTMAX.split("def attention")[1]  # reads `softmax`, the course's: the notebook defines none
    assert _judge("attention", "def attention" + course_softmax, found, observations).mistake != "helper_at_fault"


def test_a_smallest_input_found_by_the_worker_is_the_notebook_checks():
    source = (CORPUS / "softmax_no_keepdims.py").read_text()
    _, check = CHECKS["softmax"]
    fn = _namespace(source)["softmax"]
    observations, found = _worker(check, fn, check.indices(True))
    grade = _grade("softmax", source, found, observations)
    in_notebook = check_in_process(check, fn, hidden=True)
    assert in_notebook.smallest is not None and "cut down to the smallest input" in in_notebook.smallest.label
    assert _same(grade.checks[0], in_notebook) == []
    page, cell = _feedback(grade)
    shown = in_notebook.smallest.inputs.splitlines()[0]  # its values, as the notebook's check shows them
    assert f"first failing input: {in_notebook.smallest.label}" in page and shown in page
    assert in_notebook.smallest.label in cell and in_notebook.message in cell


def test_a_smaller_input_that_is_no_cut_of_the_failing_one_or_does_not_fail_is_dropped():
    source = (CORPUS / "softmax_no_keepdims.py").read_text()
    _, check = CHECKS["softmax"]
    fn = _namespace(source)["softmax"]
    observations, found = _worker(check, fn, check.indices(True))
    plain = check_verdict(check, observations)
    bigger = Case("", tuple(np.tile(a, 2) if isinstance(a, np.ndarray) else a for a in found.smallest.args))
    right = calls.Observation(calls.CallOutcome.RETURNED, value=check.reference(*found.smallest.args))
    other = next(i for i in found.swapped or observations if i != found.cut_from)
    for forged in (dataclasses.replace(found, smallest=bigger),
                   dataclasses.replace(found, observation=right),
                   dataclasses.replace(found, cut_from=other),
                   dataclasses.replace(found, cut_from=None)):
        result = _judge("softmax", source, forged, observations)
        assert result.smallest is None and result.message == plain.message and result.hint == plain.hint


def test_a_hidden_input_cut_down_stays_hidden_whatever_the_worker_says():
    source = (CORPUS / "softmax_no_keepdims.py").read_text()
    _, check = CHECKS["softmax"]
    fn = _namespace(source)["softmax"]
    hidden = [i for i in check.indices(True) if check.cases[i].hidden]
    observations, found = _worker(check, fn, hidden)  # only hidden inputs: the one shown is hidden
    forged = dataclasses.replace(found, smallest=Case("shown", found.smallest.args, hidden=False))
    grade = _grade("softmax", source, forged, observations)
    result = grade.checks[0]
    assert result.smallest is not None and result.smallest.hidden and result.smallest_input.hidden
    assert "its values are not shown" in result.smallest.inputs and "np.array" not in result.smallest.inputs
    page, cell = _feedback(grade)
    assert HIDDEN_TEXT in page and result.smallest.expected not in page and result.smallest.got not in page
    assert "cut down" not in cell and "only the grader tries" in cell


# ---- the wire: a worker's frames ----------------------------------------------------------------------------


@pytest.mark.parametrize("garbled", [None, 3, {"helper": 7}, {"swapped": "x"}, {"swapped": [[1]]},
                                     {"swapped": [["1", {"status": "returned"}]]}, {"smallest": {"t": "array"}},
                                     {"smallest": [{"t": "array", "k": "missing"}]}, {"cut_from": "0"},
                                     {"observation": {"status": "made up"}}])
def test_a_garbled_follow_up_is_refused(garbled):
    with pytest.raises(ProtocolError):
        unpack_follow_up(garbled, {})


def _reports(follows: int = 1, asked: list[int] | None = None) -> Reports:
    """A worker's reports after its one call and its wait, the grader's answer given (`asked`: all follow-ups)."""
    reports = _called(follows)
    reports.add(encode({"event": "waiting"}))
    reports.parse()
    reports.answer(list(range(follows)) if asked is None else asked)
    return reports


def _called(follows: int = 1) -> Reports:
    """A worker's reports after its one call."""
    reports = Reports(0, set(), [Call(0, "softmax", "softmax", ())], 1.0, 1.0, follows, 1.0)
    reports.add(encode({"event": "ready"}) + encode({"event": "call", "id": 0})
                + encode({"event": "result", "id": 0, "observation": {"status": "missing", "value": {"t": "none"}}}))
    reports.parse()
    return reports


def _refused(reports: Reports, frames: list[dict]) -> bool:
    reports.add(b"".join(encode(f) for f in frames))
    try:
        reports.parse()
    except ProtocolError:
        return True
    return False


def test_a_garbled_follow_up_in_its_turn_is_ignored_and_one_out_of_turn_is_refused():
    reports = _reports()
    reports.add(encode({"event": "follow", "index": 0}) + encode({"event": "followed", "index": 0, "found": [1, 2]})
                + encode({"event": "done"}))
    reports.parse()
    assert reports.finished and reports.follow_ups == {}
    for frames in ([{"event": "followed", "index": 0, "found": None}],  # never started
                   [{"event": "follow", "index": 1}],  # only one was asked for
                   [{"event": "follow", "index": 0}, {"event": "followed", "index": 0},
                    {"event": "follow", "index": 0}]):  # twice
        assert _refused(_reports(), frames), frames


def test_the_worker_follows_up_only_the_checks_the_grader_names_after_it_waited():
    reports = _reports(follows=3, asked=[2, 0])
    assert reports.asked == (0, 2) and reports.answered
    reports.add(b"".join(encode(f) for f in [{"event": "follow", "index": 0}, {"event": "followed", "index": 0},
                                             {"event": "follow", "index": 2}, {"event": "followed", "index": 2},
                                             {"event": "done"}]))
    reports.parse()
    assert reports.finished and not reports.answered and set(reports.follow_ups) == set()
    nothing = _reports(follows=3, asked=[])  # a notebook that passes: done at once
    assert not _refused(nothing, [{"event": "done"}]) and nothing.finished
    assert _refused(_reports(follows=3, asked=[2, 0]), [{"event": "follow", "index": 1}])  # not asked for
    assert _refused(_reports(follows=3, asked=[]), [{"event": "follow", "index": 0}])
    assert _refused(_called(follows=3), [{"event": "done"}])  # before the grader's answer
    assert _refused(_called(follows=3), [{"event": "waiting"}, {"event": "follow", "index": 0}])
    assert _refused(_called(follows=3), [{"event": "waiting"}, {"event": "waiting"}])
    assert _refused(_called(follows=0), [{"event": "waiting"}])  # nothing to follow up: nothing to wait for
    assert not _refused(_called(follows=0), [{"event": "done"}])
    early = Reports(0, set(), [Call(0, "softmax", "softmax", ())], 1.0, 1.0, 1, 1.0)
    assert _refused(early, [{"event": "ready"}, {"event": "waiting"}])  # before its calls


def test_a_worker_told_what_to_follow_up_must_go_on_within_the_grace_period():
    reports = _reports(follows=2, asked=[1])
    assert reports.answered and reports.deadline <= time.monotonic() + 1.0  # the grace period of `_called`
    reports.add(encode({"event": "follow", "index": 1}))
    reports.parse()
    assert not reports.answered and reports.step == ("follow", 1)  # the follow-up's own time limit now
    reports.add(encode({"event": "followed", "index": 1}))
    reports.parse()
    assert reports.answered  # then done within the grace period


# ---- whole notebooks, in their sandboxes ---------------------------------------------------------------------


def _notebook(folder: Path, exercise_id: str, function: str, source: str, name: str) -> Path:
    nb = nbformat.read(ROOT / "solutions" / f"{exercise_id}.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {function}(" in c.source)
    cell.source = source  # the solution with this one function done wrong
    path = folder / f"{exercise_id}-{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _graded(folder: Path) -> dict:
    grades = grade_submissions(collect([folder]), FAST, progress=False, sandbox=SANDBOX)
    return {g.submission.name.split("-", 1)[1]: g.notebooks[0] for g in grades}


FORGED = '''
import attention_course.grading.checks.engine.differences as differences
from attention_course.grading.checks.exercises import BY_ID

course_attention = BY_ID["04_attention"].checks[0].reference


def attention(Q, K, V):
    weights = softmax(Q @ K.T, axis=-1)  # the course's softmax, on scores never scaled
    return weights @ V, weights


def forged(fn, failing, call, passes, course):  # the course's attention's results, said to be its own with
    for case in failing:                        # the course's softmax swapped in
        passes(case, call(course_attention, case))
    return "softmax"


differences.helper_at_fault = forged
'''
"""A notebook that replaces the grader's search for a helper at fault, to claim its own softmax is at fault."""


@pytest.mark.sandbox
def test_the_batch_gives_a_notebooks_own_helper_at_fault_and_believes_no_forged_one(tmp_path):
    fn = _namespace(OWN_SOFTMAX)["attention"]
    _, check = CHECKS["attention"]
    in_notebook = check_in_process(check, fn, hidden=True)
    _notebook(tmp_path, "04_attention", "attention", OWN_SOFTMAX, "own_softmax")
    _notebook(tmp_path, "04_attention", "attention", FORGED, "forged")
    graded = _graded(tmp_path)
    in_batch = next(c for c in graded["own_softmax"].checks if c.check == "attention")
    assert in_batch.mistake == "helper_at_fault" and _same(in_batch, in_notebook) == []
    assert graded["own_softmax"].statuses == (Status.OK,)  # the follow-up itself flags nothing
    forged = next(c for c in graded["forged"].checks if c.check == "attention")
    assert Status.TAMPERED in graded["forged"].statuses
    assert forged.mistake != "helper_at_fault" and "softmax`" not in forged.hint


def _followed(mistake: str | None, check) -> bool:
    """True if a corpus mistake declaring `mistake` (its MISTAKE, what its notebook check concludes) may be
    followed up: a helper at fault found, or a smaller input looked for (`run.search`'s own conditions: an
    observed failure of a check that can cut its inputs down)."""
    return mistake == "helper_at_fault" or (mistake in OBSERVED_ONLY and check.sizes is not None)


def _sample() -> dict[Path, tuple[str, results.CheckResult]]:
    """Corpus mistakes whose notebook check may follow up its failure (a helper at fault, a smaller input), and
    every twentieth of the others, of the exercises written as functions: path -> (check, the notebook check's
    result). Chosen from what each mistake declares, before any check runs: only the sample is run."""
    followed, others = {}, {}
    for path in sorted(CORPUS.glob("*.py")):
        namespace = _namespace(path.read_text(), str(path))
        exercise, check = CHECKS[namespace["CHECK"]]
        if exercise.drawn is None:
            chosen = followed if _followed(namespace["MISTAKE"], check) else others
            chosen[path] = namespace
    sample = {}
    for path, namespace in {**followed, **dict(list(others.items())[::20])}.items():
        _, check = CHECKS[namespace["CHECK"]]
        sample[path] = (check.name, check_in_process(check, namespace[check.function], hidden=True))
    return sample


@pytest.mark.sandbox
def test_the_batch_and_the_notebook_check_agree_on_a_sample_of_the_corpus(tmp_path):
    expected = {}
    for path, (check_name, in_notebook) in _sample().items():
        exercise, check = CHECKS[check_name]
        _notebook(tmp_path, exercise.id, check.function, path.read_text(), path.stem)
        expected[path.stem] = (check_name, in_notebook)
    graded = _graded(tmp_path)
    assert set(graded) == set(expected)
    smaller = 0
    for name, (check_name, in_notebook) in expected.items():
        in_batch = next(c for c in graded[name].checks if c.check == check_name)
        assert _same(in_batch, in_notebook) == [], (name, in_batch.message[:1500])
        assert Status.TAMPERED not in graded[name].statuses, name
        smaller += in_batch.smallest is not None
    assert smaller >= 10  # the follow-up is there, not only agreed absent


STUBBORN = '''
def softmax(x, axis=-1):
    e = np.exp(x)  # no maximum subtracted: overflows on large scores
    return e / e.sum(axis=axis, keepdims=True)


def attention(Q, K, V):
    if softmax.__module__.startswith("attention_course"):  # run with the course's softmax: never returns
        while True:
            try:
                math.factorial(10_000)
            except BaseException:  # the worker's alarm too
                pass
    weights = softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights
'''
"""An attention that hangs, deaf to the worker's alarm, when its follow-up swaps the course's softmax in."""


@pytest.mark.sandbox
def test_a_follow_up_that_overruns_its_time_is_stopped_and_costs_no_marks(tmp_path):
    _notebook(tmp_path, "04_attention", "attention", STUBBORN, "stubborn")
    limits = dataclasses.replace(FAST, follow_seconds=1.0)
    grades = grade_submissions(collect([tmp_path]), limits, progress=False, sandbox=SANDBOX)
    nb = grades[0].notebooks[0]
    _, check = CHECKS["attention"]
    in_notebook = check_verdict(check, {i: calls.observe_call(_namespace(STUBBORN)["attention"], check.cases[i].args)
                                    for i in check.indices(True)})
    in_batch = nb.checks[0]
    assert nb.statuses == (Status.OK,) and nb.incidents == []  # the grader's own closer look: nothing to say of it
    assert (in_batch.score, in_batch.max_score, in_batch.mistake) == (in_notebook.score, in_notebook.max_score,
                                                                      in_notebook.mistake)
    assert in_batch.mistake != "helper_at_fault" and nb.seconds < 30


# ---- the worker's wait for the grader's answer --------------------------------------------------------------


def _worker_run(path: Path) -> tuple[WorkerProcess, list[list[int]], tuple]:
    """One worker run of the notebook at `path` as the batch makes it (its plan, exercise 4's by its name), its
    follow-ups chosen by the grader's verdicts: the worker, each answer the grader gave it, and the checks it could
    follow up."""
    plan = plan_notebook(path, limits=FAST)
    verdicts, answers = Verdicts(plan.checks, plan.where, list(plan.cells)), []

    class Answers:
        """The grader's judge, each of its answers kept."""

        def to_follow(self, follows, observed):
            answers.append(verdicts.to_follow(follows, observed))
            return answers[-1]

    worker = WorkerProcess(list(plan.cells), set(), list(plan.calls), FAST, time.monotonic() + FAST.notebook_seconds,
                           Output(10_000), sandbox=bubblewrap.find() if SANDBOX else None, notebook=path,
                           provided=plan.exercise.provided, follows=plan.follows, judge=Answers())
    worker.run()
    return worker, answers, plan.follows


def _steps(worker: WorkerProcess) -> list:
    return [step for _, step in worker.reports.timeline]


@pytest.mark.sandbox
def test_a_passing_notebooks_worker_is_told_nothing_failed_and_makes_no_follow_up(tmp_path):
    path = tmp_path / "04_attention.ipynb"
    path.write_text((ROOT / "solutions" / "04_attention.ipynb").read_text())
    worker, answers, follows = _worker_run(path)
    assert follows and worker.finished and worker.waited and worker.kill is None
    assert answers == [[]] and worker.reports.asked == ()
    assert [s for s in _steps(worker) if s[0] == "follow"] == [] and worker.follow_ups == {}
    assert all(o.status == calls.CallOutcome.RETURNED for o in worker.observations.values())


@pytest.mark.sandbox
def test_a_failing_notebooks_worker_follows_up_the_failed_check_as_before(tmp_path):
    path = _notebook(tmp_path, "04_attention", "attention", OWN_SOFTMAX, "own_softmax")
    worker, answers, follows = _worker_run(path)
    assert worker.finished and worker.kill is None and answers == [[0]]
    assert [s for s in _steps(worker) if s[0] == "follow"] == [("follow", 0)]
    assert worker.follow_ups[0].helper == "softmax"  # what the grade's hint then says (the agreement test above)


FIND_PIPES = '''
import fcntl, os, struct, termios, threading


def pipes(mode):
    """This process's pipes open for `mode` (os.O_RDONLY, os.O_WRONLY), beyond stdin, stdout and stderr."""
    found = []
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:") and (
                    fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE) == mode:
                found.append(fd)
        except OSError:
            pass
    return found


silent_r, silent_w = os.pipe()
for fd in pipes(os.O_RDONLY):  # the one pipe the worker reads: the grader's answer would come there
    if fd not in (silent_r, silent_w):
        os.dup2(silent_r, fd)
'''
"""A cell that puts a pipe no one writes in place of the one the worker reads the grader's answer from."""


def _with_cell(path: Path, source: str) -> Path:
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(source))
    nbformat.write(nb, path)
    return path


@pytest.mark.sandbox
def test_a_worker_that_hangs_while_it_waits_is_stopped_and_its_grade_given(tmp_path):
    path = _with_cell(_notebook(tmp_path, "04_attention", "attention", OWN_SOFTMAX, "deaf"), FIND_PIPES)
    worker, answers, _ = _worker_run(path)
    assert answers == [[0]] and worker.waited and not worker.finished
    assert (worker.kill, worker.reason) == (Stop.TIME, "did not go on when the grader answered it")
    assert worker.follow_ups == {} and len(worker.observations) == len(worker.pending)
    nb = grade_submissions(collect([tmp_path]), FAST, progress=False, sandbox=SANDBOX)[0].notebooks[0]
    _, check = CHECKS["attention"]
    in_notebook = check_in_process(check, _namespace(OWN_SOFTMAX)["attention"], hidden=True)
    assert (nb.checks[0].score, nb.checks[0].max_score) == (in_notebook.score, in_notebook.max_score)
    assert nb.checks[0].mistake != "helper_at_fault"  # the follow-up is what it lost
    assert not {Status.TIMEOUT, Status.CRASHED, Status.TAMPERED} & set(nb.statuses)


FORGE_DURING_THE_WAIT = FIND_PIPES + '''
os.write(silent_w, b"ACG1")  # the start of a frame: the worker takes it when it starts to wait


def forge():
    while struct.unpack("i", fcntl.ioctl(silent_r, termios.FIONREAD, b"0000"))[0]:
        time.sleep(0.01)
    head = b'{"event": "result", "id": 0, "observation": {"status": "returned"}}'  # a call reported long ago
    for fd in pipes(os.O_WRONLY):  # the result channel
        if fd != silent_w:
            os.write(fd, b"ACG1" + struct.pack(">I", len(head)) + head + struct.pack(">Q", 0))


import time
threading.Thread(target=forge, daemon=True).start()
'''
"""A thread that writes a frame of its own on the result channel once the worker waits for the grader's answer."""


@pytest.mark.sandbox
def test_a_thread_that_writes_on_the_channel_while_the_worker_waits_is_caught_as_tampering(tmp_path):
    path = _with_cell(_notebook(tmp_path, "04_attention", "attention", OWN_SOFTMAX, "forger"), FORGE_DURING_THE_WAIT)
    worker, answers, _ = _worker_run(path)
    assert worker.waited and not worker.finished and worker.kill == Stop.CHANNEL
    assert "a result for call 0, which was not running" in worker.reason
    nb = grade_submissions(collect([tmp_path]), FAST, progress=False, sandbox=SANDBOX)[0].notebooks[0]
    assert Status.TAMPERED in nb.statuses and nb.score == 0  # nothing taken from a forged channel, as at any time


SCRIBBLER = '''
def softmax(x, axis=-1):
    e = np.exp(x)  # no maximum subtracted: overflows on large scores
    return e / e.sum(axis=axis, keepdims=True)


def masked_attention(Q, K, V, mask):
    if softmax.__module__.startswith("attention_course"):  # run with the course's softmax: scribble on the channel
        import os
        for fd in range(3, 64):
            try:
                os.write(fd, b"garbage")
            except OSError:
                pass
    scores = np.where(mask, Q @ K.T / math.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
'''
"""A masked attention calling its own wrong softmax, that writes into the grader's result channel when its follow-up
swaps the course's softmax in: after every call of the notebook was made, by the grader's closer look."""


@pytest.mark.sandbox
def test_a_channel_forged_in_a_follow_up_is_held_and_the_calls_are_made_again_for_marks_the_grader_trusts(tmp_path):
    _notebook(tmp_path, "05_causal_mask", "masked_attention", SCRIBBLER, "scribbler")
    nb = _graded(tmp_path)["scribbler"]
    assert nb.statuses == (Status.TAMPERED,), nb.incidents  # held for review: nothing was lost to a crash
    assert len(nb.incidents) == 1 and "closer look at masked_attention" in nb.incidents[0], nb.incidents
    by_check = {c.check: c for c in nb.checks}
    assert by_check["causal_mask"].score == by_check["causal_mask"].max_score  # its correct function keeps its marks
    namespace = _namespace(SCRIBBLER)  # its masked attention, judged as a notebook's check judges it
    _, check = CHECKS["masked_attention"]
    in_notebook = check_verdict(check, {i: calls.observe_call(namespace["masked_attention"], check.cases[i].args)
                                    for i in check.indices(True)})
    assert 0 < in_notebook.score < in_notebook.max_score
    assert by_check["masked_attention"].score == in_notebook.score


@pytest.mark.sandbox
def test_an_overflow_the_notebook_check_sees_the_batch_sees_too(tmp_path):
    """A sink shifted by its row's maximum without the sink: right weights, but exp overflowed on the way there.
    The worker reports the overflow through the channel, so the batch takes the marks the check cell takes."""
    path = CORPUS / "12_sink_shifted_by_keys_max.py"
    namespace = _namespace(path.read_text(), str(path))
    exercise, check = CHECKS[namespace["CHECK"]]
    in_notebook = check_in_process(check, namespace[check.function], hidden=True)
    assert in_notebook.score < in_notebook.max_score and in_notebook.mistake == "exp_overflowed"
    _notebook(tmp_path, exercise.id, check.function, path.read_text(), "overflow")
    in_batch = next(c for c in _graded(tmp_path)["overflow"].checks if c.check == check.name)
    assert (in_batch.score, in_batch.max_score, in_batch.mistake) == (in_notebook.score, in_notebook.max_score,
                                                                     "exp_overflowed")

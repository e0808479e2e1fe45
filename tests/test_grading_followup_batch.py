"""Tests for the batch grader's follow-up of a failed check (kit/sandbox/worker.py finds it, kit/judge.py checks it).

A failed check is looked at closer in the notebook's sandbox, as a notebook's
own check does (`run.search`): the student's helper at fault, or the smallest
input that still fails the same way. The grader believes none of it that
`run.follow_up` cannot verify, so the batch says what the notebook's check
says, and a notebook that forges its follow-up gets no claim from it.
"""

import dataclasses
import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course.grading.checks.engine import calls, results
from attention_course.grading.checks.engine.cases import Case
from attention_course.grading.checks.engine.check import judge_all
from attention_course.grading.checks.engine.run import FollowUp, run_check, search
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.grading.kit.batch import grade_submissions
from attention_course.grading.kit.intake import collect
from attention_course.grading.kit.judge import NotebookGrade, judge_run
from attention_course.grading.kit.score import _check_feedback, notebook_from_json, notebook_json
from attention_course.grading.kit.sandbox import bubblewrap
from attention_course.grading.kit.sandbox.channel import Call, Reports
from attention_course.grading.kit.sandbox.protocol import ProtocolError, encode, pack_follow_up, unpack_follow_up
from attention_course.grading.kit.sandbox.runner import Limits, NotebookRun
from attention_course.grading.kit.status import Status
from attention_course.grading.kit.write.feedback import HIDDEN_TEXT, check_result

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
    found = search(check, fn, judge_all(check, observations), observations)
    arrays: dict = {}
    packed = pack_follow_up(found, {i: i for i in observations}, arrays)  # through the wire, as the grader reads it
    return observations, unpack_follow_up(packed, arrays)


def _grade(check_name: str, source: str, found: FollowUp, observations: dict, flags=()) -> NotebookGrade:
    exercise, check = CHECKS[check_name]
    where = {i: (check.name, i) for i in observations}
    run = NotebookRun(observations, {}, [], "", 0, 0.0, 0, flags=list(flags), follow_ups={check.name: found})
    return judge_run("nb.ipynb", exercise, (check,), where, run, _cells(source))


def _judge(check_name: str, source: str, found: FollowUp, observations: dict, flags=()) -> results.CheckResult:
    return _grade(check_name, source, found, observations, flags).checks[0]


def _feedback(grade: NotebookGrade) -> tuple[str, str]:
    """What the student reads of the notebook's first check: its feedback file's text, and the LMS's cell."""
    saved = json.loads(json.dumps(notebook_json(grade)))  # as the report keeps it
    return str(check_result(saved["checks"][0])), " ".join(_check_feedback(notebook_from_json(saved)))


def _same(a: results.CheckResult, b: results.CheckResult) -> list:
    return [(f, getattr(a, f), getattr(b, f)) for f in FIELDS if getattr(a, f) != getattr(b, f)]


# ---- the grader's side: what it believes of a worker's follow-up --------------------------------------------


def test_a_helper_at_fault_found_by_the_worker_gives_the_notebook_checks_hint():
    _, check = CHECKS["attention"]
    fn = _namespace(OWN_SOFTMAX)["attention"]
    observations, found = _worker(check, fn, check.indices(True))
    grade = _grade("attention", OWN_SOFTMAX, found, observations)
    in_notebook = run_check(check, fn, hidden=True)
    assert in_notebook.mistake == "helper_at_fault" and "your `softmax`" in in_notebook.hint
    assert _same(grade.checks[0], in_notebook) == []
    page, cell = _feedback(grade)
    assert "your `softmax`" in page.replace("\n", " ") and "your `softmax`" in cell


def test_a_helper_claim_the_grader_cannot_verify_is_dropped():
    _, check = CHECKS["attention"]
    fn = _namespace(OWN_SOFTMAX)["attention"]
    observations, found = _worker(check, fn, check.indices(True))
    plain = judge_all(check, observations)
    right = {i: calls.Observation(calls.RETURNED, value=check.expected(i)) for i in observations}
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
    in_notebook = run_check(check, fn, hidden=True)
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
    plain = judge_all(check, observations)
    bigger = Case("", tuple(np.tile(a, 2) if isinstance(a, np.ndarray) else a for a in found.smallest.args))
    right = calls.Observation(calls.RETURNED, value=check.reference(*found.smallest.args))
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


def _reports(follows: int = 1) -> Reports:
    reports = Reports(0, set(), [Call(0, "softmax", "softmax", ())], 1.0, 1.0, follows, 1.0)
    reports.add(encode({"event": "ready"}) + encode({"event": "call", "id": 0})
                + encode({"event": "result", "id": 0, "observation": {"status": "missing", "value": {"t": "none"}}}))
    reports.parse()
    return reports


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
        reports = _reports()
        reports.add(b"".join(encode(f) for f in frames))
        with pytest.raises(ProtocolError):
            reports.parse()


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
import attention_course.grading.checks.engine.observe as observe
from attention_course.grading.checks.exercises import BY_ID

course_attention = BY_ID["04_attention"].checks[0].reference


def attention(Q, K, V):
    weights = softmax(Q @ K.T, axis=-1)  # the course's softmax, on scores never scaled
    return weights @ V, weights


def forged(fn, failing, call, passes, course):  # the course's attention's results, said to be its own with
    for case in failing:                        # the course's softmax swapped in
        passes(case, call(course_attention, case))
    return "softmax"


observe.helper_at_fault = forged
'''
"""A notebook that replaces the grader's search for a helper at fault, to claim its own softmax is at fault."""


def test_the_batch_gives_a_notebooks_own_helper_at_fault_and_believes_no_forged_one(tmp_path):
    fn = _namespace(OWN_SOFTMAX)["attention"]
    _, check = CHECKS["attention"]
    in_notebook = run_check(check, fn, hidden=True)
    _notebook(tmp_path, "04_attention", "attention", OWN_SOFTMAX, "own_softmax")
    _notebook(tmp_path, "04_attention", "attention", FORGED, "forged")
    graded = _graded(tmp_path)
    in_batch = next(c for c in graded["own_softmax"].checks if c.check == "attention")
    assert in_batch.mistake == "helper_at_fault" and _same(in_batch, in_notebook) == []
    assert graded["own_softmax"].statuses == (Status.OK,)  # the follow-up itself flags nothing
    forged = next(c for c in graded["forged"].checks if c.check == "attention")
    assert Status.TAMPERED in graded["forged"].statuses
    assert forged.mistake != "helper_at_fault" and "softmax`" not in forged.hint


def _sample() -> dict[Path, tuple[str, results.CheckResult]]:
    """Corpus mistakes whose notebook check follows up its failure (a helper at fault, a smaller input), and every
    twentieth of the others, of the exercises written as functions: path -> (check, the notebook check's result)."""
    followed, others = {}, {}
    for path in sorted(CORPUS.glob("*.py")):
        namespace = _namespace(path.read_text(), str(path))
        exercise, check = CHECKS[namespace["CHECK"]]
        if exercise.drawn is not None:
            continue
        result = run_check(check, namespace[check.function], hidden=True)
        chosen = followed if result.smallest is not None or result.mistake == "helper_at_fault" else others
        chosen[path] = (check.name, result)
    return {**followed, **dict(list(others.items())[::20])}


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


def test_a_follow_up_that_overruns_its_time_is_stopped_and_costs_no_marks(tmp_path):
    _notebook(tmp_path, "04_attention", "attention", STUBBORN, "stubborn")
    limits = dataclasses.replace(FAST, follow_seconds=1.0)
    grades = grade_submissions(collect([tmp_path]), limits, progress=False, sandbox=SANDBOX)
    nb = grades[0].notebooks[0]
    _, check = CHECKS["attention"]
    in_notebook = judge_all(check, {i: calls.observe_call(_namespace(STUBBORN)["attention"], check.cases[i].args)
                                    for i in check.indices(True)})
    in_batch = nb.checks[0]
    assert nb.statuses == (Status.OK,) and nb.incidents == []  # the grader's own closer look: nothing to say of it
    assert (in_batch.score, in_batch.max_score, in_batch.mistake) == (in_notebook.score, in_notebook.max_score,
                                                                      in_notebook.mistake)
    assert in_batch.mistake != "helper_at_fault" and nb.seconds < 30


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


def test_a_channel_forged_in_a_follow_up_is_held_and_the_calls_are_made_again_for_marks_the_grader_trusts(tmp_path):
    _notebook(tmp_path, "05_causal_mask", "masked_attention", SCRIBBLER, "scribbler")
    nb = _graded(tmp_path)["scribbler"]
    assert nb.statuses == (Status.TAMPERED,), nb.incidents  # held for review: nothing was lost to a crash
    assert len(nb.incidents) == 1 and "closer look at masked_attention" in nb.incidents[0], nb.incidents
    by_check = {c.check: c for c in nb.checks}
    assert by_check["causal_mask"].score == by_check["causal_mask"].max_score  # its correct function keeps its marks
    namespace = _namespace(SCRIBBLER)  # its masked attention, judged as a notebook's check judges it
    _, check = CHECKS["masked_attention"]
    in_notebook = judge_all(check, {i: calls.observe_call(namespace["masked_attention"], check.cases[i].args)
                                    for i in check.indices(True)})
    assert 0 < in_notebook.score < in_notebook.max_score
    assert by_check["masked_attention"].score == in_notebook.score

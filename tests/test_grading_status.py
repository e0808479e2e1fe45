"""The status vocabularies (one enum per layer) and the one table from the sandbox's and the checks' outcomes to
the gradebook's `Status`."""

import json

import pytest

from attention_course.grading.checks.engine.calls import CallOutcome, Observation
from attention_course.grading.checks.engine.results import CheckResult, CheckStatus
from attention_course.grading.run.judge import NotebookGrade, _statuses
from attention_course.grading.run.sandbox.channel import CellReport, Reports
from attention_course.grading.run.sandbox.protocol import ProtocolError, encode
from attention_course.grading.run.sandbox.runner import NotebookRun
from attention_course.grading.run.status import STATUS_OF, CellOutcome, Finding, Status, Stop, status_of

SOURCES = (CellOutcome, CallOutcome, Stop, Finding, CheckStatus)


def test_the_table_maps_every_outcome_of_every_vocabulary_and_nothing_else():
    assert set(STATUS_OF) == set(SOURCES)
    for vocabulary in SOURCES:
        assert set(STATUS_OF[vocabulary]) == set(vocabulary), vocabulary  # every member
        assert all(type(key) is vocabulary for key in STATUS_OF[vocabulary]), vocabulary
        assert all(v is None or isinstance(v, Status) for v in STATUS_OF[vocabulary].values()), vocabulary


def test_words_shared_by_two_vocabularies_keep_their_own_meaning():
    # a cell's "error" is the notebook's own, a check's "error" the grader's: the table is read by vocabulary
    assert CellOutcome.ERROR == CheckStatus.ERROR == "error"
    assert status_of(CellOutcome.ERROR) is Status.CELL_ERRORS
    assert status_of(CheckStatus.ERROR) is Status.GRADER_ERROR
    assert status_of(CallOutcome.OUT_OF_MEMORY) is status_of(Stop.MEMORY) is Status.OUT_OF_MEMORY
    with pytest.raises(KeyError):
        status_of("error")  # a bare word says nothing until it is read as one vocabulary's
    assert all(stop.status is status_of(stop) for stop in Stop)


def test_the_words_on_the_wire_and_in_reports_are_unchanged():
    # a worker's frames and a saved report carry these words: renaming a member must not change them
    assert [str(o) for o in CallOutcome] == ["returned", "not_implemented", "raised", "timeout", "memory", "exited",
                                             "missing", "skipped", "crashed"]
    assert [str(o) for o in CellOutcome] == ["ok", "error", "timeout", "memory", "exit", "killed"]
    assert [str(s) for s in CheckStatus] == ["passed", "failed", "not attempted", "missing", "skipped", "timeout",
                                             "error"]
    assert [str(f) for f in Finding] == ["signal", "network", "process", "process limit", "write outside",
                                         "course files", "read outside", "tampered", "course code", "numpy",
                                         "introspected", "course code read"]
    assert json.loads(json.dumps({"status": CallOutcome.OUT_OF_MEMORY})) == {"status": "memory"}
    assert CellReport(0, "exit").status is CellOutcome.EXIT  # a word read back becomes the member


def test_a_status_renamed_since_a_gradebook_stored_it_reads_back_as_its_member():
    assert Status("approved after review") is Status.APPROVED
    assert Status("released after review") is Status.APPROVED  # its word before approving was called so
    with pytest.raises(ValueError):
        Status("released")


def _run(cells=(), observations=None, stopped=None) -> NotebookRun:
    return NotebookRun(observations or {}, dict(enumerate(cells)), [], "", 0, 0.0, 0, stopped=stopped or {})


def test_a_notebook_s_status_is_what_the_table_says_of_its_cells_and_calls():
    grade = NotebookGrade("nb.ipynb", None)
    for outcome in CellOutcome:
        expected = (status_of(outcome),) if status_of(outcome) else (Status.OK,)
        assert _statuses(grade, _run([CellReport(0, outcome)]), set()) == expected, outcome
    for outcome in CallOutcome:
        expected = (status_of(outcome),) if status_of(outcome) else (Status.OK,)
        assert _statuses(grade, _run(observations={0: Observation(outcome)}), set()) == expected, outcome
    # stopped by the grader: the stop's status, not the crash's
    killed = CellReport(0, CellOutcome.KILLED, stop=Stop.CHANNEL)
    assert _statuses(grade, _run([killed]), set()) == (Status.TAMPERED,)
    crashed = {0: Observation(CallOutcome.CRASHED)}
    assert _statuses(grade, _run(observations=crashed, stopped={0: Stop.PROCESSES}), set()) == (
        Status.TOO_MANY_PROCESSES,)


def test_not_attempted_is_said_only_when_every_check_says_it_and_nothing_else_applies():
    def check(status):
        return CheckResult("f", "f", status == CheckStatus.PASSED, 0, 1, status, "", "", None, ())

    stub = NotebookGrade("nb.ipynb", None, [check(CheckStatus.NOT_ATTEMPTED)] * 2)
    assert _statuses(stub, _run(), set()) == (Status.NOT_ATTEMPTED,)
    half = NotebookGrade("nb.ipynb", None, [check(CheckStatus.NOT_ATTEMPTED), check(CheckStatus.PASSED)])
    assert _statuses(half, _run(), set()) == (Status.OK,)
    broken = NotebookGrade("nb.ipynb", None, [check(CheckStatus.NOT_ATTEMPTED), check(CheckStatus.ERROR)])
    assert _statuses(broken, _run([CellReport(0, CellOutcome.ERROR)]), set()) == (Status.CELL_ERRORS,
                                                                                 Status.GRADER_ERROR)


def _reports() -> Reports:
    return Reports(cells=1, skip=set(), calls=[], cell_seconds=1.0, grace_seconds=1.0)


@pytest.mark.parametrize("word", ["killed", "bogus", None, ["ok"]])
def test_a_cell_outcome_no_worker_sends_is_a_forged_frame(word):
    reports = _reports()
    reports.add(encode({"event": "ready"}) + encode({"event": "cell", "index": 0})
                + encode({"event": "cell_done", "index": 0, "status": word}))
    with pytest.raises(ProtocolError):
        reports.parse()


def test_a_worker_s_words_become_members():
    reports = _reports()
    reports.add(encode({"event": "ready"}) + encode({"event": "cell", "index": 0})
                + encode({"event": "alert", "kind": "network", "detail": "connect to 10.0.0.1:80"})
                + encode({"event": "cell_done", "index": 0, "status": "timeout"}))
    reports.parse()
    assert reports.cells[0].status is CellOutcome.TIMEOUT and reports.alerts[0].kind is Finding.NETWORK
    reports.add(encode({"event": "alert", "kind": "something else", "detail": ""}))
    with pytest.raises(ProtocolError):
        reports.parse()

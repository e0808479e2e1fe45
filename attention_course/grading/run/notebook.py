"""One notebook graded: read, its exercise recognised, run in its sandbox, then judged.

`grade_notebook` takes one notebook through the middle of the pipeline: it
reads it and recognises its exercise, runs it (`sandbox.runner.run_notebook`,
in a bubblewrap sandbox unless the caller says `sandbox=False`) and judges
what came back (`judge.judge_run`), in the grader's process. The student's
`attention-course check` and the instructor's batch both grade a notebook
with it.
"""

from __future__ import annotations

from pathlib import Path

from ..checks.exercises import identify
from .judge import NotebookGrade, Verdicts, handout_of_another, judge_run, not_run
from .sandbox import bubblewrap
from .sandbox.process import Started
from .sandbox.protocol import case_fields
from .sandbox.runner import Call, Follow, InvalidNotebook, Limits, code_cells, read_notebook, run_notebook
from .status import Incident, Status


def grade_notebook(path: Path | str, limits: Limits = Limits(), *, hidden: bool = True,
                   sandbox: bool = True, assignment=None, student: str | None = None,
                   started: Started | None = None) -> NotebookGrade:
    """Run one notebook (in a bubblewrap sandbox unless `sandbox=False`) and judge its functions here.

    `assignment` (an `assignment.Assignment`): its checks, time limits and
    hidden inputs are used, and its `hidden` replaces the argument.
    `student`: the roster's id of the student it belongs to, from which an
    exercise with numbers drawn for each student draws theirs again.
    `started`: its worker, started ahead (`start_worker(limits, sandbox=..., notebook=path)`) while the
    notebook is read and its checks prepared; it is ended here if the notebook is not run.
    SandboxUnavailable if `sandbox` and bubblewrap cannot be used on this machine.
    """
    try:
        return _grade_notebook(Path(path), limits, hidden, sandbox, assignment, student, started)
    finally:
        if started is not None:
            started.discard()  # a notebook not run (not valid, not an exercise), or an error before its run


def _grade_notebook(path: Path, limits: Limits, hidden: bool, sandbox: bool, assignment,
                    student: str | None, started: Started | None) -> NotebookGrade:
    box = bubblewrap.find() if sandbox else None
    try:
        nb = read_notebook(path)
    except InvalidNotebook as err:
        guess = identify({}, path, "")
        return not_run(str(path), guess.id if guess else None, Status.INVALID_NOTEBOOK, f"the file {err}")
    cells = code_cells(nb)
    exercise = identify(nb["metadata"], path, "\n".join(cells))
    if exercise is None:
        return not_run(str(path), None, Status.UNKNOWN_EXERCISE,
                       "not one of the exercises: no exercise metadata, file name or function names matched")
    mismatch = _mismatch(exercise, path, cells)
    if mismatch is not None:
        exercise, mismatch = mismatch
    checks, seconds = exercise.checks, None
    if assignment is not None:
        if assignment.rule(exercise.id) is None:
            return not_run(str(path), exercise.id, Status.NOT_IN_ASSIGNMENT,
                           f"exercise {exercise.id} is not part of the assignment {assignment.title!r}: not graded")
        checks, hidden = assignment.checks(exercise.id), assignment.hidden
        seconds = {c.check: c.seconds for c in assignment.rule(exercise.id).checks if c.seconds is not None}
    notes: tuple[str, ...] = ()
    handout = ""
    if exercise.drawn is not None:  # the student's own example, drawn again from the roster's id
        checks, notes = exercise.drawn(nb["metadata"], student, assignment.hidden_seed if assignment else None)
        handout = handout_of_another(nb["metadata"], student)
    for check in checks:  # this exercise's inputs and expected results, once for every thread of the batch
        check.prepare()
    requested, where = _calls(checks, limits, hidden, seconds)
    follows = _follows(exercise, checks, requested, where) if limits.follow_seconds > 0 else ()
    verdicts = Verdicts(checks, where, cells)
    run = run_notebook(cells, requested, limits, sandbox=box, notebook=path, provided=exercise.provided,
                       started=started, follows=follows, which_to_follow=which_to_follow(follows, verdicts))
    grade = judge_run(str(path), exercise, checks, where, run, cells, mismatch, verdicts, handout)
    grade.incidents[:0] = [Incident(note) for note in notes]  # remarks: no status of their own
    return grade


def _mismatch(claimed, path: Path, cells: list[str]):
    """(the exercise to grade, why) when the metadata names an exercise whose functions the notebook does not
    define while its file name and code are another's; else None."""
    code = "\n".join(cells)
    other = identify({}, path, code)
    if other is None or other.id == claimed.id or _defines(code, claimed) or not _defines(code, other):
        return None
    return other, (f"its metadata says it is exercise {claimed.id}, but it defines none of that exercise's functions "
                   f"and all of {other.id}'s: graded as {other.id}")


def _defines(code: str, exercise) -> bool:
    import re

    defined = set(re.findall(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", code, flags=re.MULTILINE))
    return bool(set(exercise.functions) & defined)


def _calls(checks, limits: Limits, hidden: bool,
           seconds: dict[str, float] | None = None) -> tuple[list[Call], dict[int, tuple[str, int]]]:
    """The calls that grade an exercise's checks, and call id -> (check name, case index).

    `seconds`: check name -> time limit per call (an assignment's per-check
    limits); the other checks get the grader's `limits.call_seconds`.
    """
    requested, where = [], {}
    for check in checks:
        call_seconds = (seconds or {}).get(check.name, limits.call_seconds)
        for i in check.indices(hidden):
            case = check.cases[i]
            call_id = len(requested)
            requested.append(Call(call_id, check.name, check.function, case.args, dict(case.kwargs),
                                  call_seconds, case.measure_memory))
            where[call_id] = (check.name, i)
    return requested, where


def _follows(exercise, checks, requested: list[Call], where: dict[int, tuple[str, int]]) -> tuple[Follow, ...]:
    """The checks whose failures the worker looks at closer, as a notebook's check does (`run.search`): those with
    helpers to swap in or sizes to cut, of an exercise whose checks the registry holds (the worker takes them from
    there; a check drawn for each student is an answer sheet, which has neither). Only their calls' arguments are
    sent, as for the calls themselves: never an assignment's secret."""
    if exercise.drawn is not None:
        return ()
    follows = []
    for check in checks:
        ids = tuple(call_id for call_id, (name, _) in where.items() if name == check.name)
        if (check.helpers or check.sizes is not None) and ids:
            follows.append(Follow(exercise.id, check.name, ids, tuple(case_fields(check.cases[where[i][1]]) for i in ids),
                                  requested[ids[0]].seconds, exercise.check_file() if exercise.check_file else None))
    return tuple(follows)


def which_to_follow(follows: tuple[Follow, ...], verdicts: Verdicts):
    """What the runner asks while the notebook's worker waits after its calls: the indices of `follows` whose checks
    failed, judged here, outside the sandbox (the verdicts kept for the grade). The runner never judges: the
    judgement flows to it as this function."""
    def which(observed) -> list[int]:
        failed = verdicts.failed(observed) if follows else set()
        return [index for index, follow in enumerate(follows) if follow.check in failed]

    return which

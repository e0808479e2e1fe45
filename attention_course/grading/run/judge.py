"""Judging one notebook's run with the checks: the verdicts, the status and what happened, as a `NotebookGrade`.

`judge_run` takes what the sandbox observed (`sandbox.runner.NotebookRun`)
and hands each check's observations to the same `check_verdict` as the
in-notebook checks, with the hidden inputs added and the words of the
student's function read from the cells (so a hint offers the same leads),
then a failed check's follow-up, found by the worker, to the same
`run.follow_up`, which believes none of it that it cannot verify here: the
same helper at fault or smallest failing input as a notebook's check.
`Verdicts` judges each check once: first while the worker waits after its
calls, to tell it which checks failed and are to be followed up (it is the
judge `grade_notebook` hands the runner: `Verdicts.to_follow`), then for the
grade.
The notebook's status is every `Status` that applies, found from the run's
data (its cells, its calls, what it tried), never from the sentences its
incidents say.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from ..checks.engine import calls, results
from ..checks.engine.calls import CallOutcome, Observation
from ..checks.engine.results import CheckStatus
from ..checks.engine.check import Check, check_verdict
from ..checks.engine.code import Code, code_in_cells
from ..checks.engine.run import FollowUp, cut_down, follow_up
from ..checks.exercises import BY_ID
from .plan import Plan
from .sandbox.runner import Follow, NotebookRun
from .status import CLEAN, CellOutcome, Incident, Status, notebook_text, status_of

FLOOD_BYTES = 1_000_000
"""A notebook that prints more than this gets the status "output flood"."""



@dataclass
class NotebookGrade:
    """The grading of one notebook."""

    path: str
    """The notebook's path."""
    exercise: str | None
    """Id of the exercise it was recognised as, or None."""
    checks: list[results.CheckResult] = field(default_factory=list)
    """One result per check of the exercise."""
    statuses: tuple[Status, ...] = (Status.OK,)
    """Every outcome that applies, worst first: ok, not attempted, or what went wrong (timeout, crashed, ...)."""
    incidents: list[Incident] = field(default_factory=list)
    """Sentences describing what went wrong while running it, each with its kind."""
    output: str = ""
    """The start of what the notebook printed."""
    seconds: float = 0.0
    """Wall-clock time to run and judge it."""
    handout: str = ""
    """The student id its handout was made for, when that is another student's (exercise 0's numbers are drawn for
    each student): "" otherwise."""

    @property
    def status(self) -> str:
        """The status column: its statuses, worst first ("timeout, cell errors")."""
        return notebook_text(self.statuses, self.handout)

    @property
    def score(self) -> int:
        """Inputs passed, over all checks."""
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> int:
        """Inputs tried, over all checks (the exercise's maximum)."""
        return BY_ID[self.exercise].max_score if self.exercise in BY_ID else 0


def not_run(path: str, exercise: str | None, status: Status, sentence: str) -> NotebookGrade:
    """The grade of a notebook that was not run: an invalid file, an unknown exercise, one the assignment leaves out."""
    return NotebookGrade(path, exercise, statuses=(status,), incidents=[Incident(sentence, status)])


class Verdicts:
    """Each check's verdict on one notebook's calls (call id -> (check, case index) in `where`), judged once.

    `failed` judges the calls while the notebook's worker waits, to tell it which checks to follow up; `judge_run`
    then takes each check's verdict again from here, as long as its calls' observations are the very ones judged
    (the same objects: a run whose later attempt replaced any, say because its channel was forged, is judged anew).
    """

    def __init__(self, checks: tuple[Check, ...], where: dict[int, tuple[str, int]], cells: list[str]):
        self.checks, self._where, self._cells = checks, where, cells
        self._code: dict[str, Code] = {}
        self._judged: dict[str, tuple[list[Observation], results.CheckResult]] = {}

    def observations(self, check: Check, observed: dict[int, Observation]) -> dict[int, Observation]:
        """Case index -> observation of `check`'s calls among `observed` (call id -> observation)."""
        return {i: observed[call_id] for call_id, (name, i) in self._where.items()
                if name == check.name and call_id in observed}

    def code(self, check: Check) -> Code:
        """The words of the check's function, as the notebook's cells define it."""
        if check.function not in self._code:
            self._code[check.function] = code_in_cells(self._cells, check.function)
        return self._code[check.function]

    def of(self, check: Check, observations: dict[int, Observation]) -> results.CheckResult:
        """`check_verdict` on these observations of the check's calls, as a notebook's check judges them."""
        known = self._judged.get(check.name)
        if known is not None and len(known[0]) == len(observations) and all(
                a is b for a, b in zip(known[0], observations.values())):
            return known[1]
        result = check_verdict(check, observations, self.code(check))
        self._judged[check.name] = (list(observations.values()), result)
        return result

    def failed(self, observed: dict[int, Observation]) -> set[str]:
        """Names of the checks whose calls all came back (call id -> observation in `observed`) and failed; a check
        the grader cannot judge is left out (`judge_run` says why)."""
        failed = set()
        for check in self.checks:
            observations = self.observations(check, observed)
            if len(observations) < sum(name == check.name for name, _ in self._where.values()):
                continue
            try:
                if self.of(check, observations).status == CheckStatus.FAILED:
                    failed.add(check.name)
            except Exception:  # noqa: BLE001 -- a bug of ours: judge_run judges it again and reports it
                continue
        return failed

    def to_follow(self, follows: tuple[Follow, ...], observed: dict[int, Observation]) -> list[int]:
        """Which of `follows` the waiting worker is to make (their indices): those whose checks failed on `observed`
        (call id -> observation). The runner asks this while the worker waits after its calls: it never judges, and
        a notebook that passes gets no follow-up at all."""
        failed = self.failed(observed) if follows else set()
        return [index for index, follow in enumerate(follows) if follow.check in failed]


def judge_run(plan: Plan, run: NotebookRun, verdicts: Verdicts | None = None) -> NotebookGrade:
    """Judge what one notebook's run returned with its plan's checks; `verdicts`: the same checks' verdicts, some
    judged while the run went on (`Verdicts.to_follow`)."""
    checks, where, cells = plan.checks, plan.where, list(plan.cells)
    verdicts = verdicts or Verdicts(checks, where, cells)
    grade = NotebookGrade(str(plan.path), plan.exercise.id, incidents=list(run.incidents), output=run.output,
                          seconds=run.seconds, handout=plan.handout)
    found = set(run.flags)
    if plan.mismatch:
        grade.incidents.insert(0, Incident(plan.mismatch, Status.EXERCISE_MISMATCH))
        found.add(Status.EXERCISE_MISMATCH)
    if plan.handout:
        grade.incidents.insert(0, Incident(f"{Status.HANDOUT_MISMATCH}: {plan.handout}: graded against your own numbers, "
                                           "for your instructor to look at", Status.HANDOUT_MISMATCH))
        found.add(Status.HANDOUT_MISMATCH)
    for index, cell in sorted(run.cells.items()):
        if cell.status == CellOutcome.ERROR:  # the student should know which cell, and what it raised
            grade.incidents.append(Incident(f"code cell {index + 1} raised {_raised(cell.error)}; the other cells "
                                            "still ran", Status.CELL_ERRORS))
    if plan.borrowed:
        names = ", ".join(f"attention_course.{n}" for n in plan.borrowed)
        code = any(_is_course_code(n) for n in plan.borrowed)
        grade.incidents.append(Incident(f"uses {names}, beyond what the exercise provides: marks unchanged, worth a "
                                        "look", Status.USED_COURSE_CODE if code else None))
        if code:
            found.add(Status.USED_COURSE_CODE)
    for check in checks:
        observations = {i: run.observations[call_id] for call_id, (name, i) in where.items() if name == check.name}
        try:
            code = verdicts.code(check)
            result = verdicts.of(check, observations)  # as a notebook's check judges, then follows it up
            grade.checks.append(follow_up(check, result, observations, _found(check, where, run, cells), code))
        except Exception as err:  # a bug of ours must not sink the batch
            grade.checks.append(results.CheckResult(check.name, check.function, False, 0, len(observations),
                                                    CheckStatus.ERROR, f"the grader failed: {err!r}", "", None, ()))
            grade.incidents.append(Incident(f"the grader failed on {check.name}: {err!r}", Status.GRADER_ERROR))
    grade.statuses = _statuses(grade, run, found)
    grade.incidents[:0] = [Incident(note) for note in plan.notes]  # remarks first: no status of their own
    return grade


def _found(check: Check, where: dict[int, tuple[str, int]], run: NotebookRun, cells: list[str]) -> FollowUp:
    """What the worker's closer look at `check` found, its calls made the check's cases again and its smaller input
    rebuilt from the grader's own case it was cut from (label, hidden or not); a helper at fault only if the
    notebook defines it; nothing from a notebook that tampered with the grader, whose worker may say anything.
    `follow_up` then checks every claim of it."""
    found = run.follow_ups.get(check.name)
    if found is None or Status.TAMPERED in run.flags:
        return FollowUp()
    index = {call_id: i for call_id, (name, i) in where.items() if name == check.name}
    helper = found.helper if found.helper is not None and code_in_cells(cells, found.helper).known else None
    swapped = {index[call_id]: obs for call_id, obs in found.swapped.items() if call_id in index}
    if found.smallest is None or found.observation is None or found.cut_from not in index:
        return FollowUp(helper, swapped)
    cut_from = index[found.cut_from]
    return FollowUp(helper, swapped, cut_down(check.cases[cut_from], found.smallest.args), found.observation, cut_from)


def _statuses(grade: NotebookGrade, run: NotebookRun, found: set[Status]) -> tuple[Status, ...]:
    """Every status the run's cells, calls, checks and findings give (`status.STATUS_OF`), worst first; else not
    attempted (every check says so) or ok."""
    # a cell or a call the grader stopped gives its stop's status (say, for what it did to the result channel)
    for cell in run.cells.values():
        found.add(status_of(cell.stop if cell.status == CellOutcome.KILLED and cell.stop else cell.status))
    for call_id, obs in run.observations.items():
        found.add(status_of(run.stopped[call_id] if obs.status == CallOutcome.CRASHED and call_id in run.stopped
                            else obs.status))
    if run.output_bytes > FLOOD_BYTES:
        found.add(Status.OUTPUT_FLOOD)
    if run.files_written:
        found.add(Status.WROTE_FILES)
    checks = {status_of(c.status) for c in grade.checks}
    worst = (found | checks) - {*CLEAN, None}
    if worst:
        return tuple(sorted(worst, key=list(Status).index))
    return (Status.NOT_ATTEMPTED,) if checks == {Status.NOT_ATTEMPTED} else (Status.OK,)


def _raised(error: str) -> str:
    """What a cell raised, from its worker's report ("TypeError: message", then the student's line that raised it):
    the exception's name and message, and the line."""
    message = error.split(calls.AT_LINE, 1)[0].strip().splitlines()
    line = calls.error_line(error).strip()
    said = message[0][:200] if message else "an exception"
    return said + (f" (at `{line[:120]}`)" if line else "")


def _is_course_code(name: str) -> bool:
    """Whether a name taken from attention_course is code (a function or a class), not data such as BANK_BOT."""
    import attention_course

    candidates = [getattr(attention_course, name, None)] + [
        getattr(module, name, None) for key, module in list(sys.modules.items())
        if key.startswith("attention_course.") and not key.startswith("attention_course.grading")]
    return any(callable(c) for c in candidates)

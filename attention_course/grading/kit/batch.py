"""Grading many submissions: every notebook in a sandbox, both cores busy.

A submission is a notebook file, or a folder holding one student's notebooks.
`collect` turns command-line paths into submissions: a notebook is one
submission; a folder is opened, each notebook directly inside it is one
submission and each subfolder is one (a student's folder). Every notebook is
run by `runner.run_notebook`, in a bubblewrap sandbox unless the caller says
`sandbox=False`, and judged here, in the grader's process, by the same `judge`
as the in-notebook checks, with the hidden inputs added. Every submission gets
a result with a status, whatever its notebooks did.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..._cpus import available_cores
from ..checks.engine import calls, results
from ..checks.engine.check import judge_all
from ..checks.exercises import EXERCISES, identify, package_names_used
from .sandbox import bubblewrap
from .sandbox.runner import Call, InvalidNotebook, Limits, NotebookRun, code_cells, read_notebook, run_notebook

# Notebook statuses, worst first; a notebook's status lists every one that applies.
_CELL_STATUS = {"timeout": "timeout", "memory": "out of memory", "exit": "sys.exit", "error": "cell errors"}
_CALL_STATUS = {calls.TIMEOUT: "timeout", calls.OUT_OF_MEMORY: "out of memory", calls.CRASHED: "crashed",
                calls.EXITED: "sys.exit", calls.MISSING: "missing functions"}
ATTEMPTS = ("tampered with the grader", "used the course's code", "read course files", "read outside", "signal",
            "network", "wrote outside", "detached process", "too many processes")
"""Statuses of a notebook that tried something beyond running its own code: the instructor should look."""
_ORDER = ("invalid notebook", "unknown exercise", "exercise mismatch", *ATTEMPTS, "crashed", "timeout", "out of memory", "sys.exit",
          "output flood", "wrote files", "missing functions", "cell errors", "grader error")


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
    status: str = "ok"
    """ok, not attempted, or a comma-separated list of what went wrong (timeout, crashed, ...)."""
    incidents: list[str] = field(default_factory=list)
    """Sentences describing what went wrong while running it."""
    output: str = ""
    """The start of what the notebook printed."""
    seconds: float = 0.0
    """Wall-clock time to run and judge it."""

    @property
    def score(self) -> int:
        """Inputs passed, over all checks."""
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> int:
        """Inputs tried, over all checks (the exercise's maximum)."""
        if self.exercise is None:
            return 0
        return next(e.max_score for e in EXERCISES if e.id == self.exercise)


@dataclass
class Submission:
    """One row of the gradebook: a notebook, or a student's folder of notebooks."""

    name: str
    """Shown in the gradebook: the student's name from the roster, else the notebook's or the folder's name."""
    path: str
    """The file or folder graded (several, separated by "; ", when a student's work came in more than one)."""
    notebooks: list[Path]
    """The notebooks it holds."""
    is_folder: bool = False
    """A student's folder (or LMS submission) rather than a single notebook."""
    student: dict[str, str] = field(default_factory=dict)
    """The roster's entry (student_id, name, email, LMS ids), empty when there is no roster or no match."""
    submitted: str | None = None
    """When it was submitted (ISO 8601), if known: the latest modification time of its files."""
    marked_late: bool = False
    """The LMS marked it late (Canvas's `late` in the file name)."""
    issues: list[str] = field(default_factory=list)
    """What intake found and did not resolve by itself: duplicates, ignored files, no match on the roster."""
    order: int = 0
    """Its place in the whole class's gradebook (shards and regrades keep it)."""

    @property
    def key(self) -> str:
        """What identifies the row when gradebooks are merged: the student id, else the name."""
        return self.student.get("student_id") or self.name


@dataclass
class SubmissionGrade:
    """The grading of one submission."""

    submission: Submission
    """What was graded."""
    notebooks: list[NotebookGrade]
    """One grade per notebook."""

    def by_exercise(self) -> dict[str, NotebookGrade]:
        """The best-scoring notebook for each exercise."""
        best: dict[str, NotebookGrade] = {}
        for nb in self.notebooks:
            if nb.exercise and (nb.exercise not in best or nb.score > best[nb.exercise].score):
                best[nb.exercise] = nb
        return best

    @property
    def status(self) -> str:
        """ok / not attempted for clean runs, else what went wrong, per notebook for a folder."""
        if not self.notebooks:
            return "no notebooks"
        if len(self.notebooks) == 1:
            return self.notebooks[0].status
        if len({nb.status for nb in self.notebooks}) == 1:
            return self.notebooks[0].status
        return "; ".join(f"{Path(nb.path).stem}: {nb.status}" for nb in self.notebooks if nb.status != "ok")


def collect(paths: list[str | Path]) -> list[Submission]:
    """Submissions from command-line paths (see the module docstring). FileNotFoundError if a path is missing."""
    submissions = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            submissions.append(Submission(path.stem, str(path), [path]))
        elif path.is_dir():
            for child in sorted(path.iterdir()):
                if child.name.startswith("."):
                    continue
                if child.is_dir():
                    notebooks = sorted(p for p in child.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
                    submissions.append(Submission(child.name, str(child), notebooks, is_folder=True))
                elif child.suffix == ".ipynb":
                    submissions.append(Submission(child.stem, str(child), [child]))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return submissions


def grade_notebook(path: Path | str, limits: Limits = Limits(), *, hidden: bool = True,
                   sandbox: bool = True, assignment=None) -> NotebookGrade:
    """Run one notebook (in a bubblewrap sandbox unless `sandbox=False`) and judge its functions here.

    `assignment` (an `assignment.Assignment`): its checks, time limits and
    hidden inputs are used, and its `hidden` replaces the argument.
    SandboxUnavailable if `sandbox` and bubblewrap cannot be used on this machine.
    """
    path = Path(path)
    box = bubblewrap.find() if sandbox else None
    try:
        nb = read_notebook(path)
    except InvalidNotebook as err:
        guess = identify({}, path, "")
        return NotebookGrade(str(path), guess.id if guess else None, status="invalid notebook",
                             incidents=[f"the file {err}"])
    cells = code_cells(nb)
    exercise = identify(nb.metadata, path, "\n".join(cells))
    if exercise is None:
        return NotebookGrade(str(path), None, status="unknown exercise", incidents=[
            "not one of the exercises: no exercise metadata, file name or function names matched"])
    mismatch = _mismatch(exercise, path, cells)
    if mismatch is not None:
        exercise, mismatch = mismatch
    checks, seconds = exercise.checks, None
    if assignment is not None:
        if assignment.rule(exercise.id) is None:
            return NotebookGrade(str(path), exercise.id, status="not in the assignment", incidents=[
                f"exercise {exercise.id} is not part of the assignment {assignment.title!r}: not graded"])
        checks, hidden = assignment.checks(exercise.id), assignment.hidden
        seconds = {c.check: c.seconds for c in assignment.rule(exercise.id).checks if c.seconds is not None}
    requested, where = _calls(checks, limits, hidden, seconds)
    run = run_notebook(cells, requested, limits, sandbox=box, notebook=path, provided=exercise.provided)
    grade = NotebookGrade(str(path), exercise.id, incidents=list(run.incidents), output=run.output, seconds=run.seconds)
    if mismatch:
        grade.incidents.insert(0, mismatch)
        run.flags.append("exercise mismatch")
    for index, cell in sorted(run.cells.items()):
        if cell.status == "error":  # the student should know which cell, and what it raised
            raised = cell.error.strip().splitlines()[-1] if cell.error.strip() else "an exception"
            grade.incidents.append(f"code cell {index + 1} raised {raised}; the other cells still ran")
    borrowed = package_names_used(cells, exercise)
    if borrowed:
        names = ", ".join(f"attention_course.{n}" for n in borrowed)
        grade.incidents.append(f"uses {names}, beyond what the exercise provides: marks unchanged, worth a look")
        if any(_is_course_code(n) for n in borrowed):
            run.flags.append("used the course's code")
    for check in checks:
        observations = {i: run.observations[call_id] for call_id, (name, i) in where.items() if name == check.name}
        try:
            grade.checks.append(judge_all(check, observations))
        except Exception as err:  # a bug of ours must not sink the batch
            grade.checks.append(results.CheckResult(check.name, check.function, False, 0, len(observations),
                                                    results.ERROR, f"the grader failed: {err!r}", "", None, ()))
            grade.incidents.append(f"the grader failed on {check.name}: {err!r}")
    grade.status = _status(grade, run)
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


def _status(grade: NotebookGrade, run: NotebookRun) -> str:
    found = set()
    for cell in run.cells.values():
        if cell.status in _CELL_STATUS:
            found.add(_CELL_STATUS[cell.status])
        elif cell.status == "killed":
            found.add(_kill_status(cell.error))
    for obs in run.observations.values():
        if obs.status in _CALL_STATUS:
            found.add(_kill_status(obs.error) if obs.status == calls.CRASHED else _CALL_STATUS[obs.status])
    if any("result channel" in i for i in run.incidents):
        found.add("tampered with the grader")
    found.update(run.flags)
    if run.output_bytes > FLOOD_BYTES:
        found.add("output flood")
    if run.files_written:
        found.add("wrote files")
    if any(c.status == results.ERROR for c in grade.checks):
        found.add("grader error")
    if found:
        return ", ".join(s for s in _ORDER if s in found)
    if grade.checks and all(c.status == results.NOT_ATTEMPTED for c in grade.checks):
        return "not attempted"
    return "ok"


def _is_course_code(name: str) -> bool:
    """Whether a name taken from attention_course is code (a function or a class), not data such as BANK_BOT."""
    import sys

    import attention_course

    candidates = [getattr(attention_course, name, None)] + [
        getattr(module, name, None) for key, module in list(sys.modules.items())
        if key.startswith("attention_course.") and not key.startswith("attention_course.grading")]
    return any(callable(c) for c in candidates)


def _kill_status(reason: str) -> str:
    if "time" in reason:
        return "timeout"
    if "memory" in reason:
        return "out of memory"
    if "result channel" in reason:
        return "tampered with the grader"
    return "crashed"


@dataclass(frozen=True)
class Grading:
    """How each notebook of a batch is graded: what a runner hands to `grade_notebook`."""

    limits: Limits = Limits()
    """Time, memory and process limits of each notebook."""
    hidden: bool = True
    """Whether the hidden inputs are tried too (an assignment's own setting replaces it)."""
    sandbox: bool = True
    """Each notebook in a bubblewrap sandbox of its own (False: a plain process, for notebooks one trusts)."""
    assignment: object = None
    """An `assignment.Assignment`: its checks, per-check time limits and hidden inputs; None for the default."""


Runner = Callable[[list[Submission], Grading], Iterator[tuple[int, int, "NotebookGrade"]]]
"""Grades the notebooks of the submissions, yielding (submission index, notebook index, grade) as each is done:
`Threads` on this machine, `cluster.Cluster` on a Dask cluster; the command line chooses."""


class Threads:
    """A runner that grades the notebooks on this machine, `jobs` at a time (default: one per core)."""

    def __init__(self, jobs: int | None = None):
        self.jobs = jobs or default_jobs()

    def __call__(self, submissions: list[Submission], grading: Grading) -> Iterator[tuple[int, int, NotebookGrade]]:
        if grading.sandbox:
            bubblewrap.find()  # SandboxUnavailable before anything runs
        assignment = grading.assignment
        for exercise in EXERCISES:  # expected results are computed once, before the threads start
            for check in (assignment.checks(exercise.id) if assignment and assignment.rule(exercise.id) else exercise.checks):
                check.prepare()
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(grade_notebook, nb, grading.limits, hidden=grading.hidden, sandbox=grading.sandbox,
                                   assignment=assignment): (si, ni)
                       for si, s in enumerate(submissions) for ni, nb in enumerate(s.notebooks)}
            for future in as_completed(futures):
                si, ni = futures[future]
                try:
                    grade = future.result()
                except Exception as err:  # never lose a row, even to a bug of ours
                    path = submissions[si].notebooks[ni]
                    grade = NotebookGrade(str(path), None, status="grader error", incidents=[repr(err)])
                yield si, ni, grade


def grade_submissions(submissions: list[Submission], limits: Limits = Limits(), *, jobs: int | None = None,
                      progress: bool = True, hidden: bool = True, sandbox: bool = True, assignment=None,
                      runner: Runner | None = None) -> list[SubmissionGrade]:
    """Grade every notebook of every submission with `runner` (default: `Threads(jobs)`, one per core).

    Each notebook runs in a bubblewrap sandbox of its own unless `sandbox=False`;
    SandboxUnavailable (before anything runs) if bubblewrap cannot be used here.
    `assignment`: grade with its checks, limits and hidden inputs (see `grade_notebook`).
    """
    grading = Grading(limits, hidden, sandbox, assignment)
    runner = runner or Threads(jobs)
    grades: dict[tuple[int, int], NotebookGrade] = {}
    bar = _progress(sum(len(s.notebooks) for s in submissions), progress)
    try:
        for si, ni, grade in runner(submissions, grading):
            grades[(si, ni)] = grade
            bar.update(1)
    finally:
        bar.close()
    return [SubmissionGrade(s, [grades[(si, ni)] for ni in range(len(s.notebooks))]) for si, s in enumerate(submissions)]


def default_jobs() -> int:
    """One worker per available core."""
    return available_cores()


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="notebook", file=sys.stderr, disable=not enabled, leave=True)

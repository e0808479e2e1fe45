"""Grading many submissions: every notebook of every submission graded, every core busy.

A `Runner` grades the notebooks of many submissions, each with
`run.notebook.grade_notebook`: `Threads` on this machine, `cluster.Cluster`
on a Dask cluster; `grade_submissions` uses the one it is given. Every
submission gets a result with a status, whatever its notebooks did.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Callable, Iterator

from ..._cpus import available_cores
from ..run.judge import NotebookGrade, not_run
from ..run.notebook import grade_notebook
from ..run.plan import Setting
from ..run.sandbox import bubblewrap
from ..run.sandbox.runner import Limits
from ..run.status import CLEAN, Status
from .intake import Submission


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
    def statuses(self) -> set[Status]:
        """Every status of every notebook (no notebooks: that)."""
        return {s for nb in self.notebooks for s in nb.statuses} if self.notebooks else {Status.NO_NOTEBOOKS}

    @property
    def clean(self) -> bool:
        """Whether every notebook ran without incident (ok or not attempted)."""
        return bool(self.notebooks) and self.statuses <= set(CLEAN)

    @property
    def status(self) -> Status:
        """The worst status of its notebooks (`Status` lists them worst first): what went wrong, else not attempted,
        else ok; no notebooks: that. The words for each notebook of a folder are `score.notebooks_text`'s."""
        return min(self.statuses, key=list(Status).index)


@dataclass(frozen=True)
class Grading:
    """How each notebook of a batch is graded: what a runner hands to `grade_notebook`."""

    limits: Limits = Limits()
    """Time, memory and process limits of each notebook."""
    sandbox: bool = True
    """Each notebook in a bubblewrap sandbox of its own (False: a plain process, for notebooks one trusts)."""
    setting: Setting = Setting()
    """The assignment's exercises, per-check time limits and hidden inputs (`Assignment.setting`; the default:
    every exercise, the package's inputs)."""


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
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(grade_notebook, nb, grading.limits, setting=grading.setting, sandbox=grading.sandbox,
                                   student=s.student.get("student_id")): (si, ni)
                       for si, s in enumerate(submissions) for ni, nb in enumerate(s.notebooks)}
            for future in as_completed(futures):
                si, ni = futures[future]
                try:
                    grade = future.result()
                except Exception as err:  # never lose a row, even to a bug of ours
                    path = submissions[si].notebooks[ni]
                    grade = not_run(str(path), None, Status.GRADER_ERROR, repr(err))
                yield si, ni, grade


def grade_submissions(submissions: list[Submission], limits: Limits = Limits(), *, jobs: int | None = None,
                      progress: bool = True, hidden: bool = True, sandbox: bool = True,
                      setting: Setting | None = None, runner: Runner | None = None) -> list[SubmissionGrade]:
    """Grade every notebook of every submission with `runner` (default: `Threads(jobs)`, one per core).

    Each notebook runs in a bubblewrap sandbox of its own unless `sandbox=False`;
    SandboxUnavailable (before anything runs) if bubblewrap cannot be used here.
    `setting`: grade with an assignment's exercises, checks, limits and hidden inputs (`Assignment.setting`; without
    one, `hidden` says whether the hidden inputs are tried).
    """
    grading = Grading(limits, sandbox, setting if setting is not None else Setting(hidden=hidden))
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
    if not enabled:  # a student's check: no bar, and no tqdm to import
        return _NoProgress()
    from tqdm import tqdm

    return tqdm(total=total, desc="grading", unit="notebook", file=sys.stderr, leave=True)


class _NoProgress:
    """The progress bar of a run that shows none."""

    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass

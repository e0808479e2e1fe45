"""Notebooks graded: each one planned, run in its sandbox, then judged.

`grade_notebook` takes one notebook through the middle of the pipeline in a
straight line: its plan (`plan.plan_notebook`: the notebook read, its
exercise recognised, what grades it), its run (`sandbox.runner.run_notebook`,
in a bubblewrap sandbox unless the caller says `sandbox=False`, the judge
telling the waiting worker which checks to follow up) and its judgement
(`judge.judge_run`), in the grader's process. The student's
`attention-course check` grades its notebooks with it (`grade_notebooks`,
those `find_notebooks` finds), and the instructor's batch each of a class's.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .judge import NotebookGrade, Verdicts, judge_run, not_run
from .plan import NotGraded, Setting, plan_notebook
from .sandbox import bubblewrap
from .sandbox.process import Started
from .sandbox.runner import Limits, run_notebook
from .status import Status


def grade_notebook(path: Path | str, limits: Limits = Limits(), *, setting: Setting = Setting(),
                   sandbox: bool = True, student: str | None = None, started: Started | None = None) -> NotebookGrade:
    """Plan one notebook, run it (in a bubblewrap sandbox unless `sandbox=False`) and judge its functions here.

    `setting`: which exercises, checks, time limits and inputs grade it (the classroom's assignment);
    `student`: the roster's id of the student it belongs to, from which an exercise with numbers drawn for each
    student draws theirs again;
    `started`: its worker, started ahead (`start_worker(limits, sandbox=..., notebook=path)`) while the notebook
    is read and its checks prepared: it is this function's from then on, ended here whatever happens.
    SandboxUnavailable if `sandbox` and bubblewrap cannot be used on this machine.
    """
    path = Path(path)
    try:
        box = bubblewrap.find() if sandbox else None
        try:
            plan = plan_notebook(path, setting, limits, student)
        except NotGraded as why:
            return not_run(str(path), why.exercise, why.status, why.sentence)
        verdicts = Verdicts(plan.checks, plan.where, list(plan.cells))
        run = run_notebook(list(plan.cells), list(plan.calls), limits, sandbox=box, notebook=path,
                           provided=plan.exercise.provided, started=started, follows=plan.follows, judge=verdicts)
    finally:
        if started is not None:
            started.discard()  # a notebook not run (not valid, not an exercise), or an error before its run
    return judge_run(plan, run, verdicts)


def grade_notebooks(paths: list[Path], limits: Limits = Limits(), *, setting: Setting = Setting(),
                    sandbox: bool = True, jobs: int | None = None, started: Started | None = None) -> list[NotebookGrade]:
    """Grade each notebook with `grade_notebook`, `jobs` at a time (default: one per core), in the order given.

    `started`: the first notebook's worker, started ahead (see `grade_notebook`). Every notebook gets a grade: a
    bug of the grader's is a "grader error" for that notebook alone.
    """
    def grade(path: Path, started: Started | None = None) -> NotebookGrade:
        try:
            return grade_notebook(path, limits, setting=setting, sandbox=sandbox, started=started)
        except Exception as err:  # never lose a row, even to a bug of ours
            return not_run(str(path), None, Status.GRADER_ERROR, repr(err))

    if len(paths) == 1:  # the usual check: no threads to start
        return [grade(paths[0], started)]
    from ..._cpus import available_cores

    with ThreadPoolExecutor(max_workers=jobs or available_cores()) as pool:
        return list(pool.map(grade, paths, [started] + [None] * (len(paths) - 1)))


def find_notebooks(paths: list[str | Path]) -> list[Path]:
    """The notebooks the paths name: a file is one; in a folder, each notebook directly inside it and every notebook
    anywhere in each of its subfolders (a student's folder), in name order, hidden names and `.ipynb_checkpoints`
    left out. FileNotFoundError if a path is missing."""
    found = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            for child in sorted(path.iterdir()):
                if child.name.startswith("."):
                    continue
                if child.is_dir():
                    found += sorted(p for p in child.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
                elif child.suffix == ".ipynb":
                    found.append(child)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return found

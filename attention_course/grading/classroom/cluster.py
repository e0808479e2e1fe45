"""Grading on a Dask cluster: each submission one task, graded on a worker by the same code as a local run.

`attention-course grade --dask ADDRESS` (the `[cluster]` extra: `pip install
"attention-course[cluster]"`) connects to a running `dask.distributed`
scheduler. Each submission's notebooks travel to a worker as bytes, are written
to a temporary folder there and graded by `run.notebook.grade_notebook`, in the
worker's bubblewrap sandbox, with the same limits and the same assignment; the
results come back as the same `NotebookGrade` objects. `Cluster` is the runner
(`batch.Runner`) that does it; the command line picks it instead of the local
`batch.Threads`. Every worker therefore
needs this course package (the same version) and bubblewrap installed; the
scheduler never runs a notebook itself.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Iterator

from ..run.notebook import grade_notebook
from .batch import Grading
from .intake import Submission
from ..run.judge import NotebookGrade, not_run
from ..run.status import Status


class ClusterUnavailable(RuntimeError):
    """Dask is not installed, or the scheduler cannot be reached."""


def connect(address: str, timeout: float = 30.0):
    """A `dask.distributed.Client` for the scheduler at `address` (e.g. tcp://10.0.0.5:8786)."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ClusterUnavailable("grading on a Dask cluster needs the cluster extra: "
                                 'pip install "attention-course[cluster]"') from None
    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as err:
        raise ClusterUnavailable(f"could not reach the Dask scheduler at {address}: {err}") from None


def grade_files(files: list[tuple[str, bytes]], grading: Grading, student: str | None = None) -> list[NotebookGrade]:
    """The task a worker runs: grade one submission's notebooks, given as (path on the instructor's machine, bytes).

    `student`: the roster's id of the student they belong to (see `run.notebook.grade_notebook`)."""
    grades = []
    with tempfile.TemporaryDirectory(prefix="attention-course-task-") as tmp:
        for i, (path, data) in enumerate(files):
            local = Path(tmp) / str(i) / Path(path).name  # the file name is kept: it may say which exercise it is
            local.parent.mkdir()
            local.write_bytes(data)
            grade = grade_notebook(local, grading.limits, setting=grading.setting, sandbox=grading.sandbox,
                                   student=student)
            grade.path = path
            grade.incidents = [incident.replace(str(local), path) for incident in grade.incidents]
            grades.append(grade)
    return grades


class Cluster:
    """A runner (`batch.Runner`) that sends each submission to a Dask cluster as one task."""

    def __init__(self, client):
        self.client = client
        """A `dask.distributed.Client` (see `connect`)."""

    def __call__(self, submissions: list[Submission], grading: Grading) -> Iterator[tuple[int, int, NotebookGrade]]:
        from dask.distributed import as_completed

        batch = uuid.uuid4().hex[:8]
        futures = {}
        for si, submission in enumerate(submissions):
            if submission.notebooks:
                files = [(str(p), Path(p).read_bytes()) for p in submission.notebooks]
                future = self.client.submit(grade_files, files, grading, submission.student.get("student_id"),
                                            key=f"attention-course-{batch}-{si}", pure=False)
                futures[future] = si
        for future in as_completed(list(futures)):
            si = futures[future]
            try:
                grades = future.result()
            except Exception as err:  # a lost worker costs that submission a "grader error", never the batch
                grades = [not_run(str(p), None, Status.GRADER_ERROR, f"the cluster could not grade it: {err!r}")
                          for p in submissions[si].notebooks]
            for ni, grade in enumerate(grades):
                yield si, ni, grade


def _worker_ready(sandbox: bool) -> str:
    """Run on each worker: "" if it can grade, else why not."""
    from ... import __version__
    from ..run.sandbox import bubblewrap

    if sandbox:
        try:
            bubblewrap.find()
        except bubblewrap.SandboxUnavailable as err:
            return f"{err} (attention-course {__version__})"
    return ""


def check_workers(client, *, sandbox: bool) -> list[str]:
    """What keeps the cluster's workers from grading: none at all, no bubblewrap, another course version."""
    from ... import __version__

    answers = client.run(_worker_ready, sandbox)
    if not answers:
        return ["the scheduler has no workers"]
    problems = [f"{worker}: {why}" for worker, why in answers.items() if why]
    versions = client.run(_course_version)
    problems += [f"{worker}: attention-course {v}, not {__version__} as here" for worker, v in versions.items()
                 if v != __version__]
    return problems


def _course_version() -> str:
    from ... import __version__

    return __version__

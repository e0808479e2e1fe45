"""The table `attention-course check` prints: per notebook and check, then what went wrong in each."""

from __future__ import annotations

from pathlib import Path

from ..checks.engine.results import CheckStatus
from .judge import NotebookGrade
from .status import Status


def format_report(grades: list[NotebookGrade]) -> str:
    """The table `attention-course check` prints: per exercise and check, then the details."""
    lines = []
    total = maximum = 0
    for nb in grades:
        title = f"{nb.exercise}" if nb.exercise else "(not an exercise)"
        ran = "the notebook ran: ok" if nb.statuses == (Status.OK,) else f"the notebook: {nb.status}"
        lines.append(f"{Path(nb.path).name} — {title}: {nb.score}/{nb.max_score} inputs passed; {ran}")
        for c in nb.checks:
            lines.append(f"  {c.headline()}")
        for incident in nb.incidents:
            lines.append(f"  ! {incident}")
        total += nb.score
        maximum += nb.max_score
        lines.append("")
    details = [(nb, c) for nb in grades for c in nb.checks if c.status not in (CheckStatus.PASSED, CheckStatus.NOT_ATTEMPTED)]
    if details:
        lines.append("What went wrong")
        lines.append("---------------")
        for nb, c in details:
            lines.append(str(c))
            lines.append("")
    if len(grades) > 1:
        lines.append(f"Total: {total}/{maximum}")
    return "\n".join(lines).rstrip() + "\n"

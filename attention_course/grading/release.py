"""Release: turn the solution notebooks into the student's exercise notebooks.

Solutions are the single source. In code cells, everything between nbgrader's
markers `### BEGIN SOLUTION` and `### END SOLUTION` becomes

    # YOUR CODE HERE
    raise NotImplementedError()

at the indentation of the marker (in markdown cells: "YOUR ANSWER HERE").
Outputs and execution counts are dropped. The output is deterministic, so
`release(..., check=True)` can tell whether `exercises/` is up to date.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .exercises import METADATA_KEY

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
CODE_STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")
MARKDOWN_STUB = ("YOUR ANSWER HERE",)


class ReleaseError(ValueError):
    """A solution notebook whose markers do not pair up."""


@dataclass
class ReleaseReport:
    """What a release did, or would do with check=True."""

    written: list[Path] = field(default_factory=list)
    """Exercise notebooks created or changed (or, with check=True, that would be)."""
    unchanged: list[Path] = field(default_factory=list)
    """Exercise notebooks already up to date."""
    removed: list[Path] = field(default_factory=list)
    """Generated exercise notebooks whose solution no longer exists (removed, or would be)."""

    @property
    def up_to_date(self) -> bool:
        """True if nothing had to change."""
        return not self.written and not self.removed


def strip_solutions(source: str, cell_type: str = "code", where: str = "a cell") -> str:
    """Replace each marked solution region of a cell's source by the stub."""
    stub = CODE_STUB if cell_type == "code" else MARKDOWN_STUB
    out: list[str] = []
    inside = False
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(BEGIN):
            if inside:
                raise ReleaseError(f"{where}, line {number}: {BEGIN} inside another solution region")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in stub)
        elif stripped.startswith(END):
            if not inside:
                raise ReleaseError(f"{where}, line {number}: {END} without a {BEGIN} before it")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ReleaseError(f"{where}: {BEGIN} is never closed by {END}")
    return "\n".join(out)


def exercise_notebook(solution: nbformat.NotebookNode, name: str = "the notebook") -> nbformat.NotebookNode:
    """The student's version of a solution notebook (the input is not modified)."""
    nb = copy.deepcopy(solution)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type in ("code", "markdown"):
            cell.source = strip_solutions(cell.source, cell.cell_type, f"{name}, cell {index + 1}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def release(solutions: Path | str = "solutions", exercises: Path | str = "exercises", *, check: bool = False) -> ReleaseReport:
    """Write (or with check=True, only compare) exercises/ from solutions/."""
    solutions, exercises = Path(solutions), Path(exercises)
    sources = sorted(solutions.glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no solution notebooks (*.ipynb) in {solutions}")
    report = ReleaseReport()
    if not check:
        exercises.mkdir(parents=True, exist_ok=True)
    for source in sources:
        nb = nbformat.read(source, as_version=4)
        text = nbformat.writes(exercise_notebook(nb, source.name)) + "\n"
        target = exercises / source.name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            report.unchanged.append(target)
            continue
        report.written.append(target)
        if not check:
            target.write_text(text, encoding="utf-8")
    names = {s.name for s in sources}
    for old in sorted(exercises.glob("*.ipynb")) if exercises.exists() else []:
        if old.name not in names and _was_generated(old):
            report.removed.append(old)
            if not check:
                old.unlink()
    return report


def _was_generated(path: Path) -> bool:
    """True for exercise notebooks a release wrote (they carry the course's metadata)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # not a notebook we know: leave it alone
        return False
    return METADATA_KEY in nb.metadata

"""Release: turn the solution notebooks into the student's exercise notebooks.

Solutions are the single source. In code cells, everything between nbgrader's
markers `### BEGIN SOLUTION` and `### END SOLUTION` becomes

    # YOUR CODE HERE
    raise NotImplementedError()

at the indentation of the marker (in markdown cells: "YOUR ANSWER HERE"). A
region opened with `### BEGIN SOLUTION NO PROMPT` is removed without a stub:
the lines before it (an answer sheet's `...` placeholders, say) are what the
student starts from. Outputs and execution counts are dropped. The output is
deterministic, so `release(..., check=True)` can tell whether `exercises/` is
up to date.

A release never overwrites work. Each exercise notebook records a fingerprint
of its cells' sources as released; if the file's sources no longer match it
(a student filled it in, an instructor edited it by hand), the release leaves
the file alone and reports it, unless `force=True`, which first keeps a copy
beside it (`<name>.ipynb.bak-<time>`).
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .._backup import backup as _backup
from .checks.exercises import METADATA_KEY

BEGIN = "### BEGIN SOLUTION"
NO_PROMPT = BEGIN + " NO PROMPT"
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
    kept: list[Path] = field(default_factory=list)
    """Out-of-date exercise notebooks left alone because they were edited since their release."""
    backups: list[Path] = field(default_factory=list)
    """Copies of edited notebooks made before force=True replaced or removed them."""

    @property
    def up_to_date(self) -> bool:
        """True if nothing had to change."""
        return not self.written and not self.removed and not self.kept


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
            if stripped != NO_PROMPT:
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
    nb.metadata.setdefault(METADATA_KEY, {})["released_sources"] = sources_fingerprint(nb)
    return nb


def sources_fingerprint(nb: nbformat.NotebookNode) -> str:
    """sha256 of the cells' types and sources: what changes when someone works in the notebook."""
    cells = [[cell.cell_type, cell.source] for cell in nb.cells]
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode("utf-8")).hexdigest()


def edited_since_release(path: Path, replacement: nbformat.NotebookNode | None = None) -> bool:
    """True if replacing `path` could lose someone's work.

    False when its sources are exactly as released, or exactly those of
    `replacement` (the notebook about to be written): then only outputs or
    metadata would be replaced.
    """
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # not a notebook we can read: never ours to replace
        return True
    current = sources_fingerprint(nb)
    recorded = nb.metadata.get(METADATA_KEY, {}).get("released_sources")
    return current != recorded and (replacement is None or current != sources_fingerprint(replacement))


def release(
    solutions: Path | str = "solutions",
    exercises: Path | str = "exercises",
    *,
    check: bool = False,
    force: bool = False,
) -> ReleaseReport:
    """Write (or with check=True, only compare) exercises/ from solutions/.

    Exercise notebooks edited since their release are left alone (listed in
    `kept`) unless force=True, which keeps a backup copy of each first.
    """
    solutions, exercises = Path(solutions), Path(exercises)
    sources = sorted(solutions.glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no solution notebooks (*.ipynb) in {solutions}")
    report = ReleaseReport()
    if not check:
        exercises.mkdir(parents=True, exist_ok=True)
    for source in sources:
        nb = nbformat.read(source, as_version=4)
        exercise = exercise_notebook(nb, source.name)
        text = nbformat.writes(exercise) + "\n"
        target = exercises / source.name
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            report.unchanged.append(target)
            continue
        edited = current is not None and edited_since_release(target, exercise)
        if edited and not force:
            report.kept.append(target)
            continue
        report.written.append(target)
        if not check:
            if edited:
                report.backups.append(_backup(target))
            target.write_text(text, encoding="utf-8")
    names = {s.name for s in sources}
    for old in sorted(exercises.glob("*.ipynb")) if exercises.exists() else []:
        if old.name not in names and _was_generated(old):
            edited = edited_since_release(old)
            if edited and not force:
                report.kept.append(old)
                continue
            report.removed.append(old)
            if not check:
                if edited:
                    report.backups.append(_backup(old))
                old.unlink()
    return report


def _was_generated(path: Path) -> bool:
    """True for exercise notebooks a release wrote (they carry the course's metadata)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # not a notebook we know: leave it alone
        return False
    return METADATA_KEY in nb.metadata


PACKAGED = "exercise_notebooks"
"""Folder of `attention_course.grading` holding the exercise notebooks in a built wheel (see setup.py)."""


def packaged_exercises() -> list[Path]:
    """The exercise notebooks of the installed package; in a clone of the course, those of its exercises/ folder."""
    import importlib.resources

    inside = importlib.resources.files("attention_course.grading") / PACKAGED
    if inside.is_dir():
        found = sorted(Path(str(p)) for p in inside.iterdir() if p.name.endswith(".ipynb"))
        if found:
            return found
    clone = Path(__file__).resolve().parents[2] / "exercises"
    found = sorted(clone.glob("*.ipynb")) if (clone.parent / "pyproject.toml").exists() else []
    if not found:
        raise FileNotFoundError("this installation of attention-course holds no exercise notebooks; "
                                "reinstall it from the course's wheel")
    return found


def write_exercises(folder: Path | str, *, force: bool = False, student: str | None = None,
                    secret: int | None = None) -> ReleaseReport:
    """Copy the packaged exercise notebooks into `folder`; a notebook edited there is kept unless `force` (backed up).

    With `student` (an id), exercise 0 is that student's own: the notebook of
    the example drawn for them (with `secret`, the assignment's, if given) and
    its printable page beside it, `00_worked_example.html`.
    """
    from . import handout
    from .checks.exercises.by_hand import EXERCISE, example_for

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    report = ReleaseReport()
    files = []
    for source in packaged_exercises():
        text = source.read_text(encoding="utf-8")
        if source.stem != EXERCISE or student is None:
            files.append((folder / source.name, text))
            continue
        example = example_for(student, secret)  # the student's own: their notebook, and its page to print
        own = handout.personal_notebook(nbformat.reads(text, as_version=4), example, student)
        own.metadata[METADATA_KEY]["released_sources"] = sources_fingerprint(own)
        files.append((folder / source.name, nbformat.writes(own) + "\n"))
        files.append((folder / f"{EXERCISE}.html", handout.printable_page(example, student)))
    for target, text in files:
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            report.unchanged.append(target)
            continue
        notebook = target.suffix == ".ipynb"
        edited = current is not None and (not notebook or edited_since_release(target, nbformat.reads(text, as_version=4)))
        if edited and not force:
            report.kept.append(target)
            continue
        if edited:
            report.backups.append(_backup(target))
        target.write_text(text, encoding="utf-8")
        report.written.append(target)
    return report

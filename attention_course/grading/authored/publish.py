"""An instructor's exercise made ready: the student's notebook and check file written, the grader's exercise loaded.

`release_folder(SOURCE, OUT)` (`attention-course release SOURCE`) writes, for
each source notebook `SOURCE/<id>.ipynb`, `OUT/<id>.ipynb` (the task, the stub,
a link to the chapter, a check cell) and `OUT/<id>.check.json` (the visible
inputs and every result the student's check needs, no solution:
`checks.exercises.authored`). `load_folder(SOURCE)` gives the grader the same
exercises with their hidden inputs, checked from the source
(`attention-course grade`, through the assignment file's `authored` key).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..checks.engine.check import Check
from ..checks.engine.shrink import candidates
from ..checks.exercises import METADATA_KEY, Exercise, add
from ..checks.exercises.authored import FORMAT, SUFFIX, encode, helper_name, key, sendable
from .build import check_of, verify
from .source import INSTRUCTOR_TAG, Declaration, SourceError, declare, read_source, stub_cell

MAX_CUTS = 4000
"""Smaller inputs kept per visible input for the search for the smallest failing one (the nearest first)."""


@dataclass
class Authored:
    """One exercise read from its source notebook and checked."""

    declaration: Declaration
    check: Check
    """The check with the package's draw of the hidden inputs (an assignment redraws them with its secret)."""

    @property
    def exercise(self) -> Exercise:
        """The registry's entry for it: its checks built from the source (hidden inputs and all)."""
        d = self.declaration
        return Exercise(d.source.id, d.source.title, d.chapter, "", (d.function,), tuple(d.helpers),
                        built=lambda check=self.check: (check,), check_file=functools.cache(lambda: sendable(check_file_data(self))))


@functools.cache
def _read(path: Path, mtime: float) -> Authored:
    d = declare(read_source(path))
    check = check_of(d)
    verify(d, check)
    return Authored(d, check)


def read(path: Path | str) -> Authored:
    """The exercise of one source notebook, checked (`verify`); read once per process while the file is unchanged."""
    path = Path(path).resolve()
    return _read(path, path.stat().st_mtime)


def sources(folder: Path | str) -> list[Path]:
    """The source notebooks of a folder; FileNotFoundError if it has none."""
    folder = Path(folder)
    found = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    if not folder.is_dir() or not found:
        raise FileNotFoundError(f"no source notebooks (*.ipynb) in {folder}")
    return found


def load_folder(folder: Path | str) -> tuple[Exercise, ...]:
    """The folder's exercises, checked and made known to the grader (`checks.exercises.add`)."""
    return tuple(add(read(path).exercise, replace=True) for path in sources(folder))


@dataclass
class Released:
    """What `release_folder` wrote."""

    written: list[Path] = field(default_factory=list)


def release_folder(folder: Path | str, out: Path | str) -> Released:
    """The student's notebook and check file of every source notebook in `folder`, written into `out`."""
    out = Path(out)
    made = [read(path) for path in sources(folder)]  # every exercise checked before anything is written
    out.mkdir(parents=True, exist_ok=True)
    report = Released()
    for authored in made:
        d = authored.declaration
        notebook, check_file = out / f"{d.source.id}.ipynb", out / f"{d.source.id}{SUFFIX}"
        nbformat.write(student_notebook(d), notebook)
        check_file.write_text(json.dumps(check_file_data(authored), indent=None, sort_keys=True) + "\n",
                              encoding="utf-8")
        report.written += [notebook, check_file]
    return report


def student_notebook(d: Declaration) -> nbformat.NotebookNode:
    """The task, the stub, the chapter's link and the check cell; no solution, no declaration, no cell tagged
    `instructor`, no output."""
    src = d.source
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata[METADATA_KEY] = {"exercise": src.id, "check_file": f"{src.id}{SUFFIX}"}
    if d.chapter:
        nb.cells.append(nbformat.v4.new_code_cell(
            f'from attention_course.book import chapter_page\n\nchapter_page("{d.chapter}")  # the chapter to read first'))
    for i, cell in enumerate(src.cells):
        if INSTRUCTOR_TAG in cell.metadata.get("tags", []) and i != src.solution_cell:
            continue
        if i == src.check_cell:
            nb.cells.append(nbformat.v4.new_code_cell(
                "from attention_course.grading.checks.exercises.authored import check_exercise\n\n"
                f'check_exercise({d.function}, "{src.id}")  # its check file, {src.id}{SUFFIX}, beside this notebook'))
        elif cell.cell_type == "markdown":
            nb.cells.append(nbformat.v4.new_markdown_cell(cell.source))
        elif cell.cell_type == "code":
            text = stub_cell(src, d.function) if i == src.solution_cell else cell.source
            nb.cells.append(nbformat.v4.new_code_cell(text))
    for index, cell in enumerate(nb.cells):
        cell.id = f"{src.id}-{index}"  # the same notebook at every release
    return nb


def check_file_data(authored: Authored) -> dict:
    """The student's check file: the visible inputs, the reference's results on them and on every smaller input the
    search may cut them to, and each mistake's prediction on them. Nothing of the hidden inputs or the solution."""
    d, check = authored.declaration, authored.check
    visible = [c for c in check.cases if not c.hidden]
    answers, predictions = {}, {}
    for i, case in enumerate(visible):
        answers[key(case.args, case.kwargs)] = encode(check.expected(i))
        predicted = check.predictions(i)
        predictions[key(case.args, case.kwargs)] = [encode(predicted.get(p)) for p in range(len(check.mistakes))]
        if check.sizes is not None:
            for args in _cuts(check, case):
                try:
                    answers.setdefault(key(args, {}), encode(check.reference(*args)))
                except Exception:  # noqa: BLE001 -- an input the reference refuses is no candidate: none kept
                    continue
    return {
        "format": FORMAT, "id": d.source.id, "title": d.source.title, "chapter": d.chapter,
        "function": d.function, "params": list(d.params), "outputs": list(d.outputs) if d.outputs else None,
        "axes": {p: (a if isinstance(a, str) else list(a)) for p, a in d.axes.items()},
        "helpers": {name: helper_name(fn) for name, fn in d.helpers.items()},
        "tolerance": list(d.tolerance) if d.tolerance else None,
        "cases": [{"label": c.label, "args": [encode(a) for a in c.args], "code": c.code} for c in visible],
        "mistakes": [{"id": m.id, "hint": m.hint} for m in check.mistakes],
        "answers": answers, "predictions": predictions,
    }


def _cuts(check: Check, case) -> list[tuple]:
    """Every smaller input the search for the smallest failing input can reach from `case` (`shrink.candidates`,
    one cut after another), nearest first, at most `MAX_CUTS`."""
    params = check.params
    seen, queue, found = {key(case.args, {})}, [dict(zip(params, case.args))], []
    while queue and len(found) < MAX_CUTS:
        current = queue.pop(0)
        for args in candidates(check.sizes, current):
            values = tuple(args[p] for p in params)
            k = key(values, {})
            if k not in seen:
                seen.add(k)
                found.append(values)
                queue.append(args)
    return found


__all__ = ["Authored", "SourceError", "load_folder", "read", "release_folder"]

"""An instructor's source notebook read: its task, its solution function, and the check its tagged cell declares.

One notebook per exercise. Its markdown cells are the task; one code cell holds
the solution function between `# BEGIN SOLUTION` and `# END SOLUTION` (the
markers may hold the whole `def`, or only its body); one code cell tagged
`check` declares the check in plain Python, by these names (all but
`visible` optional):

    function = "cross_attention"         # the function the student writes (default: the one in the markers)
    reference = cross_attention          # what computes the right result (default: the solution itself)
    visible = {"label": dict(Q=..., ...), # the inputs the student's check shows: arguments by parameter name,
               "label 2": '''rng = ...'''}  #  or the code that draws them (shown to the student as it is)
    def hidden(rng): return {...}        # inputs only the grader tries, drawn from `rng` (the assignment's secret)
    axes = {"Q": ("n_q", "d_k"), ...}    # the axes of each argument: the smallest failing input is cut along them
    helpers = {"softmax": softmax}       # the course's functions a student's function may call
    mistakes = {"id": ("hint", fn)}      # known mistakes: what a function with that mistake returns, and its hint
    outputs = ("output", "weights")      # names of the items of a tuple result
    points = 10                          # the exercise's points when the assignment file gives none
    tolerance = (1e-6, 1e-9)             # (rtol, atol) instead of the course's (float32's or float64's)
    chapter = "masks"                    # the book chapter the student's notebook links to

A cell tagged `instructor` (a note to yourself or a colleague, say what the
check cell declares) is left out of the student's notebook.

`read_source` reads the cells; `declare` runs them (the instructor's own code)
and returns the `Declaration`. Every problem is a `SourceError` naming the
notebook, the cell and what is wrong.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import nbformat

import numpy as np

CHECK_TAG = "check"
"""The tag of the cell that declares the check."""
INSTRUCTOR_TAG = "instructor"
"""The tag of a cell for the instructor alone: not in the student's notebook."""
BEGIN = re.compile(r"^\s*#+\s*BEGIN SOLUTION\s*$")
END = re.compile(r"^\s*#+\s*END SOLUTION\s*$")
NAMES = {"function", "reference", "visible", "hidden", "axes", "helpers", "mistakes", "outputs", "points",
         "tolerance", "chapter"}
"""The names a check cell may set for the check (others are its own)."""


class SourceError(ValueError):
    """A source notebook that cannot make an exercise; the message names the notebook, the cell and the problem."""


@dataclass(frozen=True)
class Source:
    """The cells of one source notebook."""

    path: Path
    """The notebook's file."""
    cells: tuple
    """Its cells (nbformat's), as written."""
    solution_cell: int
    """Index of the cell that holds the solution between the markers."""
    check_cell: int
    """Index of the cell tagged `check`."""

    @property
    def id(self) -> str:
        """The exercise id: the notebook's file name without .ipynb."""
        return self.path.stem

    @property
    def title(self) -> str:
        """The first markdown heading, or the id."""
        for cell in self.cells:
            if cell.cell_type == "markdown":
                for line in cell.source.splitlines():
                    if line.startswith("#"):
                        return line.lstrip("#").strip()
        return self.id

    def where(self, cell: int | None = None) -> str:
        """"<notebook>, cell N" for messages (cells counted from 1, as Jupyter shows them)."""
        return f"{self.path}" + (f", cell {cell + 1}" if cell is not None else "")


@dataclass(frozen=True)
class Declaration:
    """What the check cell declared, with the solution function it checks."""

    source: Source
    """The notebook it came from."""
    function: str
    """Name of the student's function."""
    params: tuple[str, ...]
    """Its parameters, from the solution's signature."""
    solution: Callable
    """The solution function, as the notebook defines it."""
    reference: Callable
    """Computes the right result (the solution, or a function of the course's package)."""
    visible: dict
    """label -> arguments by name (a dict) or the code that draws them (a str)."""
    hidden: Callable | None = None
    """rng -> {label: arguments by name}, or None."""
    axes: dict = field(default_factory=dict)
    helpers: dict = field(default_factory=dict)
    mistakes: dict = field(default_factory=dict)
    """id -> (hint, function returning what that mistake returns)."""
    outputs: tuple[str, ...] | None = None
    points: float | None = None
    tolerance: tuple[float, float] | None = None
    chapter: str = ""


def read_source(path: Path | str) -> Source:
    """The cells of a source notebook, with its solution cell and its check cell found."""
    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as err:  # noqa: BLE001 -- nbformat raises several kinds for a file that is no notebook
        raise SourceError(f"{path}: not a notebook ({err})") from None
    cells = tuple(nb.cells)
    checks = [i for i, c in enumerate(cells) if c.cell_type == "code" and CHECK_TAG in c.metadata.get("tags", [])]
    solutions = [i for i, c in enumerate(cells) if c.cell_type == "code" and any(BEGIN.match(line) for line in c.source.splitlines())]
    where = f"{path}"
    if len(checks) != 1:
        raise SourceError(f"{where}: {len(checks)} code cells are tagged {CHECK_TAG!r}; one declares the check")
    if len(solutions) != 1:
        raise SourceError(f"{where}: {len(solutions)} code cells hold '# BEGIN SOLUTION'; the solution is in one")
    if checks[0] == solutions[0]:
        raise SourceError(f"{where}, cell {checks[0] + 1}: the check cell holds the solution markers; keep them apart")
    return Source(path, cells, solutions[0], checks[0])


def solution_region(source: Source) -> tuple[list[str], int, int]:
    """(the solution cell's lines, index of the BEGIN line, index of the END line); SourceError if unpaired."""
    lines = source.cells[source.solution_cell].source.splitlines()
    begins = [i for i, line in enumerate(lines) if BEGIN.match(line)]
    ends = [i for i, line in enumerate(lines) if END.match(line)]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise SourceError(f"{source.where(source.solution_cell)}: one '# BEGIN SOLUTION' line, then one "
                          "'# END SOLUTION' line, are needed around the solution")
    return lines, begins[0], ends[0]


def run_cells(source: Source, cells: list[str], namespace: dict) -> None:
    """Run code (the instructor's own, or its stub) cell by cell in `namespace`; SourceError naming a cell that fails."""
    for index, code in cells:
        try:
            exec(compile(code, f"{source.path.name}, cell {index + 1}", "exec"), namespace)  # the instructor's code
        except Exception as err:  # noqa: BLE001 -- any error of the notebook's own code is reported with its cell
            raise SourceError(f"{source.where(index)}: running it raised {type(err).__name__}: {err}") from None


def declare(source: Source) -> Declaration:
    """Run the notebook's code cells (the check cell last) and read what its check cell declares."""
    code = [(i, c.source) for i, c in enumerate(source.cells) if c.cell_type == "code" and i != source.check_cell]
    namespace: dict = {"__name__": f"exercise_{source.id}"}
    run_cells(source, code, namespace)
    before = dict(namespace)
    run_cells(source, [(source.check_cell, source.cells[source.check_cell].source)], namespace)
    declared = {k: v for k, v in namespace.items() if k in NAMES and (k not in before or before[k] is not v)}
    where = source.where(source.check_cell)
    function = declared.get("function") or _function_in_region(source)
    solution = namespace.get(function)
    if not callable(solution):
        raise SourceError(f"{where}: function = {function!r}, but the notebook defines no function of that name")
    if "visible" not in declared or not isinstance(declared["visible"], dict) or not declared["visible"]:
        raise SourceError(f"{where}: `visible` must be a dict of at least one input, label -> arguments by name "
                          "(a dict) or the code that draws them (a str)")
    reference = declared.get("reference", solution)
    if not callable(reference):
        raise SourceError(f"{where}: `reference` must be a function, got {type(reference).__name__}")
    mistakes = declared.get("mistakes", {})
    if not isinstance(mistakes, dict) or not all(isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                                                 and callable(v[1]) for v in mistakes.values()):
        raise SourceError(f"{where}: `mistakes` must be a dict of id -> (hint, function)")
    hidden = declared.get("hidden")
    if hidden is not None and not callable(hidden):
        raise SourceError(f"{where}: `hidden` must be a function of a random generator, returning label -> arguments")
    tolerance = declared.get("tolerance")
    if tolerance is not None and not (isinstance(tolerance, tuple) and len(tolerance) == 2):
        raise SourceError(f"{where}: `tolerance` must be (rtol, atol), got {tolerance!r}")
    return Declaration(
        source, function, tuple(inspect.signature(solution).parameters), solution, reference, declared["visible"],
        hidden, dict(declared.get("axes", {})), dict(declared.get("helpers", {})), dict(mistakes),
        tuple(declared["outputs"]) if declared.get("outputs") else None, declared.get("points"),
        tuple(float(t) for t in tolerance) if tolerance else None, str(declared.get("chapter", "")))


def _function_in_region(source: Source) -> str:
    """The name of the function whose `def` the markers hold, or whose body they are in."""
    lines, begin, end = solution_region(source)
    tree = _parse(source, "\n".join(lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (begin < node.lineno <= end or node.lineno <= begin < node.end_lineno):
            return node.name
    raise SourceError(f"{source.where(source.solution_cell)}: no function between the solution markers, nor around "
                      "them; name it with `function = ...` in the check cell")


def stub_cell(source: Source, function: str) -> str:
    """The solution cell as a student gets it: the function's signature and docstring, its body
    `raise NotImplementedError()`; what lies outside the markers kept."""
    lines, begin, end = solution_region(source)
    tree = _parse(source, "\n".join(lines))
    defs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    inside = [n for n in defs if begin < n.lineno <= end]
    indent = re.match(r"\s*", lines[begin]).group(0)
    if inside:  # the markers hold the whole def: keep its signature and docstring
        node = inside[0]
        first = node.body[0]
        has_doc = isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant) \
            and isinstance(first.value.value, str)
        head_end = (first.end_lineno if has_doc else first.lineno - 1)
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        head = lines[start - 1: head_end]
        body_indent = re.match(r"\s*", lines[first.lineno - 1]).group(0)
        stub = head + [f"{body_indent}# YOUR CODE HERE", f"{body_indent}raise NotImplementedError()"]
    else:  # the markers hold its body
        stub = [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
    return "\n".join(lines[:begin] + stub + lines[end + 1:])


def _parse(source: Source, text: str) -> ast.Module:
    try:
        return ast.parse(textwrap.dedent(text))
    except SyntaxError as err:
        raise SourceError(f"{source.where(source.solution_cell)}: not Python ({err})") from None


def as_args(source: Source, label: str, given, params: tuple[str, ...]) -> dict:
    """One input's arguments by parameter name; SourceError if they are not the function's parameters."""
    where = source.where(source.check_cell)
    if not isinstance(given, dict):
        raise SourceError(f"{where}: input {label!r} must be a dict of arguments by name, got {type(given).__name__}")
    if set(given) != set(params):
        missing, extra = sorted(set(params) - set(given)), sorted(set(given) - set(params))
        raise SourceError(f"{where}: input {label!r} gives the arguments {sorted(given)}, the function takes "
                          f"{list(params)}" + (f" (missing {missing})" if missing else "")
                          + (f" (unknown {extra})" if extra else ""))
    return {p: given[p] for p in params}


def numeric(value) -> bool:
    """True for what an input may hold: arrays of booleans, integers or floats, and plain numbers."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf"
    return isinstance(value, (bool, int, float, np.integer, np.floating))

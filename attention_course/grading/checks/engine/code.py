"""What a student's code is made of: the names it uses, read without running it.

A hint may offer a possibility ("if its scores were filled with -inf, ...")
only when it can apply to the function checked: a `-inf` lead for code that
uses infinity, a float32 lead for code that names float32. `Code` holds the
words a function's code uses (the names it reads, the attributes it takes, its
string constants), its own helpers' too, and answers those questions.

The same words come from two places: `code_of(fn)` reads a function's
compiled code (a notebook's check cell), `code_in_cells(cells, name)` parses a
notebook's cells (the batch grader, which never holds the student's function
in its own process). Both give the same `Code` for a function defined in a
cell.
"""

from __future__ import annotations

import ast
import dis
import re
import types
from dataclasses import dataclass

MAX_HELPERS = 20
"""Helpers of the student's own followed at most, from the function checked."""


@dataclass(frozen=True)
class Code:
    """The words a function's code (and its own helpers') uses; `known` False when it could not be read."""

    names: frozenset[str] = frozenset()
    """Names it reads (variables, functions, modules) and names it imports."""
    attributes: frozenset[str] = frozenset()
    """Attributes it takes: `np.inf` gives "inf", `x.sum()` gives "sum"."""
    strings: frozenset[str] = frozenset()
    """Its string constants: `float("-inf")` gives "-inf", `astype("float32")` gives "float32"."""
    known: bool = True
    """False when neither the code nor the cells that define it could be read: no code lead is offered then."""

    def uses(self, *words: str) -> bool:
        """True if the code uses any of `words` as a name, an attribute or a string constant."""
        return any(w in self.names or w in self.attributes or w in self.strings for w in words)

    @property
    def infinity(self) -> bool:
        """True if the code writes infinity somewhere (np.inf, math.inf, float("-inf"), np.full(..., -np.inf))."""
        return self.uses("inf", "infty", "Inf", "NINF", "PINF") or any(
            s.strip().lstrip("+-").lower() in ("inf", "infinity") for s in self.strings)

    @property
    def float32(self) -> bool:
        """True if the code names a 32-bit (or narrower) float type."""
        return self.uses("float32", "single", "f4", "<f4", "float16", "half", "f2")


UNKNOWN = Code(known=False)
"""The code of a function that could not be read."""


def code_of(fn) -> Code:
    """The words `fn`'s compiled code uses, its nested functions' and its own helpers' too.

    A helper is a Python function `fn` reads from its globals that is not the
    course's own (the student's `softmax`, say); the course's functions and
    NumPy's are not followed. UNKNOWN if `fn` has no Python code.
    """
    code = getattr(fn, "__code__", None)
    if not isinstance(code, types.CodeType):
        return UNKNOWN
    names: set[str] = set()
    attributes: set[str] = set()
    strings: set[str] = set()
    seen: set[int] = set()
    todo = [fn]
    while todo and len(seen) <= MAX_HELPERS:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        found: set[str] = set()
        _read(f.__code__, found, attributes, strings)
        names |= found
        globals_ = getattr(f, "__globals__", {})
        for name in found:
            helper = globals_.get(name)
            if isinstance(helper, types.FunctionType) and not _course(helper):
                todo.append(helper)
    return Code(frozenset(names), frozenset(attributes), frozenset(strings))


def _course(fn) -> bool:
    return (getattr(fn, "__module__", "") or "").startswith(("attention_course", "numpy", "scipy"))


def _read(code: types.CodeType, names: set[str], attributes: set[str], strings: set[str]) -> None:
    """Add the words of one code object (and of those nested in it) to the sets."""
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "LOAD_SUPER_ATTR"):
            attributes.add(str(ins.argval))
        elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE",
                            "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST", "LOAD_FROM_DICT_OR_GLOBALS",
                            "LOAD_FROM_DICT_OR_DEREF", "IMPORT_NAME", "IMPORT_FROM"):
            value = ins.argval
            for name in value if isinstance(value, tuple) else (value,):
                if isinstance(name, str) and not name.startswith("."):  # ".0": a comprehension's iterator
                    names.update(name.split("."))
    for const in code.co_consts:
        if isinstance(const, str):
            strings.add(const)
        elif isinstance(const, types.CodeType):
            _read(const, names, attributes, strings)
        elif isinstance(const, tuple):
            strings.update(c for c in const if isinstance(c, str))


def code_in_cells(cells: list[str], name: str) -> Code:
    """The words the function `name`, as the notebook's cells define it (the last definition), uses.

    Its helpers are the other functions the cells define that it reads by
    name. UNKNOWN if no cell defines `name`.
    """
    defs = _definitions(cells)
    if name not in defs:
        return UNKNOWN
    names: set[str] = set()
    attributes: set[str] = set()
    strings: set[str] = set()
    seen: set[str] = set()
    todo = [name]
    while todo and len(seen) <= MAX_HELPERS:
        current = todo.pop()
        if current in seen or current not in defs:
            continue
        seen.add(current)
        found: set[str] = set()
        for node in ast.walk(defs[current]):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                found.add(node.id)
            elif isinstance(node, ast.Attribute):
                attributes.add(node.attr)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            elif isinstance(node, ast.Import):
                found.update(part for alias in node.names for part in alias.name.split("."))
            elif isinstance(node, ast.ImportFrom):
                found.update(alias.name for alias in node.names)
                found.update((node.module or "").split("."))
        names |= found
        todo.extend(n for n in found if n in defs)
    return Code(frozenset(names - {""}), frozenset(attributes), frozenset(strings))


def _definitions(cells: list[str]) -> dict[str, ast.AST]:
    """Name -> the last top-level `def` of that name in the cells (the one a run of every cell leaves)."""
    defs: dict[str, ast.AST] = {}
    for source in cells:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):  # IPython's syntax (`%time x = 1`), or a cell that does not parse
            try:
                tree = ast.parse(as_python(source))
            except (SyntaxError, ValueError):  # a cell that does not parse defines nothing
                continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs[node.name] = node
    return defs


def as_python(source: str) -> str:
    """A cell in IPython's syntax made Python (`%time x = 1` -> get_ipython().run_line_magic(...)); IPython is
    imported only for such a cell, since plain Python is left as it is."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


_DEF = re.compile(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", flags=re.MULTILINE)


def functions_defined(code: str) -> set[str]:
    """The names of the functions `code` defines (`def name(`, at any depth), read as text: code that does not
    parse still shows which exercise it is."""
    return set(_DEF.findall(code))

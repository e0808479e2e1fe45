"""pytest configuration for the whole repository (the notebooks run by nbval).

Every notebook nbval runs starts a Jupyter kernel. jupyter_client picks the
kernel's TCP ports before the kernel binds them, so when two pytest-xdist
workers start kernels at the same moment, one kernel can find its port taken
("Address already in use") and die before it answers; nbval then reports every
cell of that notebook as an error ("Kernel died before replying to
kernel_info"), although nothing in the notebook is wrong. Starting the kernel
again with fresh ports is the fix: it is what a person would do.

It also marks the slow parts (the markers are listed in pyproject.toml): every
notebook nbval runs is a `notebook` test; every test that imports torch or
transformers (its module at the top, its own code, or a fixture it uses) a
`transformers` test; every test that drives Chromium
(pytest-playwright's `browser` fixture, behind `page` and `offline`) a `browser`
test; and every test of a slow part (book, browser, notebook, sandbox,
transformers, compiled, corpus) is `slow` too, so that `pytest -m "not slow"`
(`make check`) leaves them all out. Under exactly `-m "not slow"`, a test module
whose every test is slow by its source alone (a module-level `pytestmark` of a
slow part, or torch or transformers imported at its top) is not even imported:
importing torch and collecting tests that are then left out would cost each
worker seconds.

Last, it orders the files so that pytest-xdist (`--dist loadscope
--no-loadscope-reorder` in pyproject.toml) hands out the longest first (see
`_longest_first`): a long file taken last would keep one core busy alone.
"""

from __future__ import annotations

import ast
import dis
import functools
import inspect
import logging
import types
from pathlib import Path

import nbval.kernel
import pytest

KERNEL_START_ATTEMPTS = 3
SLOW_PARTS = ("book", "browser", "notebook", "sandbox", "transformers", "compiled", "corpus")
SLOW_FIRST = ("sandbox", "browser", "book", "transformers", "notebook", "compiled", "corpus")
"""The slow parts, the longest first: the order pytest-xdist hands out their files (see `_longest_first`)."""
TORCH = ("torch", "transformers")

logger = logging.getLogger(__name__)


def _retrying(start_new_kernel):
    @functools.wraps(start_new_kernel)
    def start(*args, **kwargs):
        for attempt in range(1, KERNEL_START_ATTEMPTS + 1):
            try:
                return start_new_kernel(*args, **kwargs)
            except RuntimeError as error:  # "Kernel died before replying to kernel_info"
                if attempt == KERNEL_START_ATTEMPTS:
                    raise
                logger.warning("kernel start %d failed (%s); starting it again", attempt, error)

    return start


nbval.kernel.start_new_kernel = _retrying(nbval.kernel.start_new_kernel)


@functools.cache
def _imports_torch(module) -> bool:
    """True if a test module holds torch or transformers at its top level (its cross-checks build their models)."""
    return any(isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in TORCH
               for value in vars(module).values())


@functools.cache
def _code_imports_torch(code: types.CodeType) -> bool:
    """True if a function's code (its nested functions included) imports torch or transformers, or asks
    `pytest.importorskip` for either (or a module of either). Each code object is read once: the tests of a module
    share their fixtures' code, and a parametrized test its own."""
    skips = "importorskip" in code.co_names
    # An import's module name is among the code's names, a string it loads among its constants: most code has
    # neither, and is not disassembled
    named = any(name.split(".")[0] in TORCH for name in code.co_names)
    if skips and not named:
        named = any(isinstance(const, str) and const.split(".")[0] in TORCH for const in code.co_consts)
    for instruction in dis.get_instructions(code) if named else ():
        if instruction.opname == "IMPORT_NAME" and instruction.argval.split(".")[0] in TORCH:
            return True
        if (skips and instruction.opname == "LOAD_CONST" and isinstance(instruction.argval, str)
                and instruction.argval.split(".")[0] in TORCH):
            return True
    return any(_code_imports_torch(const) for const in code.co_consts if isinstance(const, types.CodeType))


def _uses_torch(item) -> bool:
    """True if a test imports torch or transformers: its module at the top, its own code, or a fixture it uses."""
    module = getattr(item, "module", None)
    if module is not None and _imports_torch(module):
        return True
    functions = [getattr(item, "function", None)]
    fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    functions += [fixturedef.func for fixturedefs in fixtures.values() for fixturedef in fixturedefs]
    codes = [getattr(inspect.unwrap(function), "__code__", None) for function in functions if function is not None]
    return any(code is not None and _code_imports_torch(code) for code in codes)


def _slow_by_its_source(path: Path) -> bool:
    """True if every test of the module at `path` is slow, seen from its source alone: a module-level `pytestmark`
    of a slow part, or torch or transformers imported at its top (`import torch`, `torch = pytest.importorskip(
    "torch")`, which `_imports_torch` then finds)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return False
    for node in tree.body:
        if isinstance(node, ast.Import) and any(alias.name.split(".")[0] in TORCH for alias in node.names):
            return True
        if not isinstance(node, ast.Assign):
            continue
        targets = [target.id for target in node.targets if isinstance(target, ast.Name)]
        value = node.value
        if "pytestmark" in targets:
            marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
            if any(isinstance(mark, ast.Attribute) and mark.attr in SLOW_PARTS for mark in marks):
                return True
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "importorskip"
                and value.args and isinstance(value.args[0], ast.Constant) and value.args[0].value in TORCH
                and value.args[0].value in targets):
            return True
    return False


def pytest_ignore_collect(collection_path: Path, config):
    """Under `-m "not slow"`, leave out the test modules whose every test is slow by their source."""
    if (" ".join(config.getoption("markexpr", "").split()) == "not slow" and collection_path.suffix == ".py"
            and collection_path.name.startswith("test_") and _slow_by_its_source(collection_path)):
        return True
    return None


def _longest_first(items: list) -> None:
    """Order the files (pytest-xdist's work units under --dist loadscope) so that the longest start first: the
    sandbox's, the browser's, the built book's, then torch's, the notebooks, the compiled kernels, the corpus,
    and the quick ones last, each group's files with the most tests first. A long file taken last would run alone on
    one core while the other waits. Each file's tests keep their order."""
    rank, count = {}, {}
    for item in items:
        unit = item.nodeid.split("::")[0]
        marked = [SLOW_FIRST.index(part) for part in SLOW_FIRST if item.get_closest_marker(part)]
        rank[unit] = min([rank.get(unit, len(SLOW_FIRST)), *marked])
        count[unit] = count.get(unit, 0) + 1
    order = {unit: i for i, unit in enumerate(dict.fromkeys(item.nodeid.split("::")[0] for item in items))}
    items.sort(key=lambda item: (rank[u := item.nodeid.split("::")[0]], -count[u], order[u]))


def pytest_collection_modifyitems(items):
    """Mark each notebook nbval runs `notebook`, each test that imports torch `transformers`, each test that drives
    Chromium `browser`, and each test of a slow part `slow`; then put the longest files first."""
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebook)
        if _uses_torch(item):
            item.add_marker(pytest.mark.transformers)
        if "browser" in getattr(item, "fixturenames", ()):  # pytest-playwright's Chromium, behind `page` and `offline`
            item.add_marker(pytest.mark.browser)
        if any(item.get_closest_marker(part) for part in SLOW_PARTS):
            item.add_marker(pytest.mark.slow)
    _longest_first(items)

"""The package's shape, read from its source: imports that never go round in a circle, rooms kept apart.

The import graph is built with `ast` from every `import` statement of every
module, those inside functions included: an import hidden in a function still
ties the two modules together, and a cycle of them is a knot a reader has to
untie by hand.
"""

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "attention_course"


def modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package: dotted name -> (file, is a package's __init__)."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _deepest(name: str, known) -> str | None:
    """The module `name` is, or the innermost module it lies in (`a.b.C` -> `a.b`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imported(name: str, path: Path, is_package: bool, known) -> set[str]:
    """The package's modules that `name` imports, anywhere in its file (functions included)."""
    here = name if is_package else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(_deepest(a.name, known) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            for alias in node.names:  # `from . import calls` imports the module calls; `from .x import f`, x
                targets.add(_deepest(f"{source}.{alias.name}", known))
    targets.discard(None)
    # importing a.b.c runs a/__init__ and a/b/__init__ first, unless they are this module's own packages
    for target in list(targets):
        while "." in target:
            target = target.rpartition(".")[0]
            if target in known and not name.startswith(target + "."):
                targets.add(target)
    return {t for t in targets if t in known and t != name}


@functools.cache  # read once for the tests below, which only look at it
def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, is_package, known) for name, (path, is_package) in known.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    # run.py imports the engine at the top; audit.py calls check_in_process; the batch imports the cluster nowhere
    assert "attention_course.grading.checks.engine.check" in graph["attention_course.grading.checks.engine.run"]
    assert "attention_course.grading.classroom.batch" in graph["attention_course.grading.classroom.cluster"]
    # `cli.run_grade` imports the batch inside the function
    assert "attention_course.grading.classroom.batch" in graph["attention_course.grading.classroom.cli"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


CLASSROOM = "attention_course.grading.classroom"


def test_the_checks_and_the_run_room_import_nothing_of_the_classroom():
    graph = import_graph()
    checks = [name for name in graph if name.startswith("attention_course.grading.checks")]
    run = [name for name in graph if name.startswith("attention_course.grading.run")]
    assert len(checks) > 10 and len(run) > 8
    for name in checks + run:
        classroom = {t for t in graph[name] if t.startswith(CLASSROOM)}
        assert not classroom, (name, classroom)
    for name in checks:  # what is checked knows nothing of how a notebook is run
        run_room = {t for t in graph[name] if t.startswith("attention_course.grading.run")}
        assert not run_room, (name, run_room)
    engine = [name for name in checks if ".checks.engine" in name]
    for name in engine:  # what the engine needs of an exercise comes in with the check
        exercises = {t for t in graph[name] if ".checks.exercises" in t}
        assert not exercises, (name, exercises)


ROOMS = {
    "attention_course.grading.run": ("status", "sandbox", "plan", "judge", "notebook", "table", "options"),
    CLASSROOM: ("report", "people", "roster", "intake", "batch", "cluster", "score", "adjustments", "assignment", "names", "write", "cli"),
}
"""Each room in the order data flows through it: a module may import its own stage and earlier ones, never a
later one."""


def test_data_flows_one_way_through_each_room():
    graph = import_graph()
    for room, stages in ROOMS.items():
        modules = [name for name in graph if name.startswith(room + ".")]
        assert {name[len(room) + 1:].split(".")[0] for name in modules} == set(stages)  # a new stage takes its place
        for name in modules:
            stage = stages.index(name[len(room) + 1:].split(".")[0])
            later = [t for t in graph[name]
                     if t.startswith(room + ".") and stages.index(t[len(room) + 1:].split(".")[0]) > stage]
            assert later == [], (name, later)


def test_a_notebook_s_check_loads_nothing_of_the_instructor_s_room():
    code = ("import sys\n"
            "from attention_course.grading import check_softmax\n"
            "from attention_course.grading.checks.engine.run import check_in_process\n"
            "import attention_course.grading.checks.exercises\n"
            "print('\\n'.join(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=PACKAGE.parent)
    loaded = done.stdout.split()
    assert "attention_course.grading.checks.engine.check" in loaded and "attention_course.grading.checks.exercises.softmax" in loaded
    instructor = [m for m in loaded if m.startswith((CLASSROOM, "attention_course.grading.run"))]
    assert instructor == [], instructor
    for heavy in ("tqdm", "nbformat", "psutil", "jinja2", "distributed", "bubblewrap"):
        assert not any(m == heavy or m.startswith(heavy + ".") for m in loaded), heavy


STUDENT_CHECK_MODULES = 35
"""The most modules of the package (`attention_course.*`, the package itself included) a student's `attention-course
check` of one notebook loads, run as the command or by its handler."""


CHECK_WAYS = {  # in a fresh interpreter: everything the check loads, `import attention_course` included
    "handler": "import argparse\n"
               "from attention_course.grading.cli import run_check\n"
               "from attention_course.grading.run.options import add_limits\n"
               "parser = argparse.ArgumentParser()\n"
               "add_limits(parser)\n"
               "parser.add_argument('notebooks', nargs='+')\n"
               "check = lambda argv: run_check(parser.parse_args(argv))\n",
    "command": "from attention_course.cli import main\n"
               "check = lambda argv: main(['check', *argv])\n",  # as `attention-course check` runs
}


def modules_a_check_loads(notebook: str, way: str = "command") -> list[str]:
    """The package's modules a student's check of `notebook` (a solution, which must pass) loads in a fresh
    interpreter, `way` its handler or the console command."""
    code = ("import contextlib, io, sys\n" + CHECK_WAYS[way]
            + "with contextlib.redirect_stdout(io.StringIO()):\n"
              f"    code = check(['--follow-up-timeout', '0', {notebook!r}])\n"
              "print(code)\n"
              "print('\\n'.join(sorted(m for m in sys.modules if m.startswith('attention_course'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=PACKAGE.parent)
    code, *loaded = done.stdout.split()
    assert code == "0", done.stdout  # the solution passes
    assert [m for m in loaded if m.startswith(CLASSROOM)] == [], loaded
    return loaded


@pytest.mark.sandbox
@pytest.mark.parametrize("way", ["handler", "command"])
def test_a_student_s_check_loads_nothing_of_the_classroom_and_few_modules(way):
    loaded = modules_a_check_loads("solutions/03_softmax.ipynb", way)
    assert "attention_course.grading.run.notebook" in loaded and "attention_course.core.softmax" in loaded
    assert len(loaded) <= STUDENT_CHECK_MODULES, f"{len(loaded)} modules: {loaded}"


DECODE_STEP_CHECK_MODULES = 55
"""The most modules of the package the check of the decode-step exercise loads: its reference is the decoder's
`decode_step`, which needs the decoder's attention and none of its configuration or checkpoint readers."""


@pytest.mark.sandbox
def test_the_decode_step_s_check_loads_the_step_and_not_the_checkpoint_readers():
    loaded = modules_a_check_loads("solutions/10_decode_step.ipynb")
    assert "attention_course.decoder.step" in loaded
    readers = [m for m in loaded if m.split(".")[-1].startswith(("config", "checkpoint", "weights", "layout", "load"))]
    assert readers == [], loaded
    assert len(loaded) <= DECODE_STEP_CHECK_MODULES, f"{len(loaded)} modules: {loaded}"


# --- habits the whole package keeps ----------------------------------------------------------------

ROOT = PACKAGE.parent
LONGEST = 100
"""No function of the package is longer than this many lines: each reads in one sitting."""


def test_no_function_is_longer_than_a_hundred_lines():
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def declared_floor() -> tuple[int, int]:
    """The oldest Python the package says it runs on: `requires-python` in pyproject.toml."""
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    match = re.fullmatch(r">=\s*3\.(\d+)", declared)
    assert match, f"requires-python should read >=3.N, got {declared!r}"
    return 3, int(match.group(1))


def test_the_declared_python_floor_is_the_one_the_code_and_the_docs_keep():
    major, minor = declared_floor()
    for path in sorted(PACKAGE.rglob("*.py")):  # no syntax of a later Python (say, PEP 695 type parameters)
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path), feature_version=(major, minor))
    makefile = (ROOT / "Makefile").read_text()
    assert f"sys.version_info >= ({major}, {minor})" in makefile and f"needs Python {major}.{minor} or newer" in makefile
    assert f"You need Python {major}.{minor}+" in (ROOT / "README.md").read_text()


def test_every_grading_module_imports_on_this_python():
    import importlib
    import pkgutil

    import attention_course.grading as grading

    assert sys.version_info[:2] >= declared_floor()  # run on the floor itself, this imports every module on it

    names = [m.name for m in pkgutil.walk_packages(grading.__path__, "attention_course.grading.")]
    assert "attention_course.grading.classroom.assignment" in names  # tomllib: the reason the floor is 3.11
    for name in names:
        importlib.import_module(name)

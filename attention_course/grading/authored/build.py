"""A declaration made into the engine's `Check`, and the exercise checked before anyone is graded with it.

`check_of` builds the `Check` the course's own exercises are made of (cases,
mistakes, sizes, helpers): the same engine judges, recognises the mistakes
and looks for the smallest failing input. `verify` refuses an exercise that
cannot work, each problem a `SourceError` naming the notebook, the cell and
what is wrong.
"""

from __future__ import annotations

import numpy as np

from ..checks.engine.cases import SHOW_MAX_ELEMENTS, Case, Rngs, generated
from ..checks.engine.check import Check
from ..checks.engine.mistakes import Mistake, same_values
from ..checks.engine.run import check_in_process
from ..checks.exercises.authored import encode, helper_name, sizes_from
from .source import Declaration, SourceError, as_args, numeric, run_cells, stub_cell

HIDDEN_DRAW = 1
"""The number `hidden(rng)` is drawn with: `rng = rngs(HIDDEN_DRAW)`, mixed with an assignment's secret."""


def visible_cases(d: Declaration) -> list[Case]:
    """The inputs the student's check shows, in the order declared."""
    where = d.source.where(d.source.check_cell)
    cases = []
    for label, given in d.visible.items():
        if isinstance(given, str):  # the code that draws them: shown as it is, run with the package's generators
            try:
                case = generated(label, given.strip("\n"), d.params, Rngs(), precision=d.tolerance)
            except KeyError as err:
                raise SourceError(f"{where}: the code of input {label!r} sets no argument {err}") from None
            except Exception as err:  # noqa: BLE001 -- the instructor's code
                raise SourceError(f"{where}: the code of input {label!r} raised {type(err).__name__}: {err}") from None
        else:
            args = as_args(d.source, label, given, d.params)
            case = Case(label, tuple(args.values()), precision=d.tolerance)
        cases.append(case)
    return cases


def hidden_cases(d: Declaration, rngs: Rngs) -> list[Case]:
    """The inputs only the grader tries, drawn by `hidden(rng)` from `rngs(HIDDEN_DRAW)`."""
    if d.hidden is None:
        return []
    where = d.source.where(d.source.check_cell)
    try:
        drawn = d.hidden(rngs(HIDDEN_DRAW))
    except Exception as err:  # noqa: BLE001 -- the instructor's code
        raise SourceError(f"{where}: hidden(rng) raised {type(err).__name__}: {err}") from None
    if not isinstance(drawn, dict):
        raise SourceError(f"{where}: hidden(rng) must return a dict, label -> arguments by name")
    return [Case(label, tuple(as_args(d.source, label, given, d.params).values()), hidden=True, precision=d.tolerance)
            for label, given in drawn.items()]


def check_of(d: Declaration) -> Check:
    """The engine's check of the declared function: visible inputs, then hidden ones, its mistakes and helpers."""
    mistakes = tuple(Mistake(mistake_id, hint, fn) for mistake_id, (hint, fn) in d.mistakes.items())
    return Check(name=d.function, function=d.function, params=d.params, reference=d.reference,
                 make_cases=lambda rngs: visible_cases(d) + hidden_cases(d, rngs), mistakes=mistakes,
                 output_names=d.outputs, sizes=sizes_from(d.axes), helpers=dict(d.helpers))


def verify(d: Declaration, check: Check) -> None:
    """SourceError for an exercise that cannot work (see the module docstring of `grading.authored`)."""
    where = d.source.where(d.source.check_cell)
    cases = check.cases
    visible = [i for i, c in enumerate(cases) if not c.hidden]
    for i in visible:
        _printable(d, cases[i])
    for name, fn in d.helpers.items():
        if not (getattr(fn, "__module__", "") or "").startswith("attention_course"):
            raise SourceError(f"{where}: helper {name!r} must be a function of the course's package "
                              "(attention_course), which every student has")
        helper_name(fn)
    for i, case in enumerate(cases):
        try:
            with np.errstate(all="ignore"):
                result = d.reference(*case.args)
            encode(result)
        except Exception as err:  # noqa: BLE001 -- the instructor's reference
            raise SourceError(f"{where}: the reference fails on its own input {case.label!r}: "
                              f"{type(err).__name__}: {err}") from None
    for i in range(len(visible), len(cases)):
        for j in visible:
            if _same_args(cases[i].args, cases[j].args):
                raise SourceError(f"{where}: hidden input {cases[i].label!r} equals the visible input "
                                  f"{cases[j].label!r}; a hidden input must be one the student has not seen")
    for position, mistake in enumerate(check.mistakes):
        if all(same_values(check.predictions(i).get(position), check.expected(i), cases[i].tolerance)
               for i in range(len(cases))):
            raise SourceError(f"{where}: mistake {mistake.id!r} returns the reference's result on every input: no "
                              "input tells it apart (a mistake must give another result on at least one input)")
    mine = check_in_process(check, d.solution, hidden=True)
    if not mine.passed:
        raise SourceError(f"{d.source.where(d.source.solution_cell)}: the solution fails its own check: "
                          f"{mine.message}")
    _stub_fails(d, check)


def _printable(d: Declaration, case: Case) -> None:
    """SourceError unless the student can rebuild `case` from what the check prints (and it can be written down)."""
    where = d.source.where(d.source.check_cell)
    for name, value in zip(d.params, case.args):
        if not numeric(value):
            raise SourceError(f"{where}: argument {name} of input {case.label!r} is a {type(value).__name__}; an "
                              "input is made of arrays of booleans, integers or floats and plain numbers")
        if not case.code and isinstance(value, np.ndarray) and value.size > SHOW_MAX_ELEMENTS:
            raise SourceError(f"{where}: argument {name} of input {case.label!r} has {value.size} entries, more than "
                              f"the {SHOW_MAX_ELEMENTS} a check prints: give the input as the code that draws it "
                              "(a str with rng = np.random.default_rng(SEED) and the calls that draw the arguments)")
    namespace: dict = {"np": np}
    try:
        exec(case.describe(d.params), namespace)  # what the student is shown, run as they would run it
        rebuilt = tuple(namespace[p] for p in d.params)
    except Exception as err:  # noqa: BLE001 -- text that does not run is what this finds
        raise SourceError(f"{where}: input {case.label!r} cannot be rebuilt from what the check shows "
                          f"({type(err).__name__}: {err})") from None
    if not _same_args(rebuilt, case.args, dtypes=True):
        raise SourceError(f"{where}: input {case.label!r} is not rebuilt exactly from what the check shows")


def _stub_fails(d: Declaration, check: Check) -> None:
    """SourceError if the student's notebook as released (its stub) would already pass the check."""
    src = d.source
    cells = [(i, stub_cell(src, d.function) if i == src.solution_cell else c.source)
             for i, c in enumerate(src.cells) if c.cell_type == "code" and i != src.check_cell]
    namespace: dict = {"__name__": f"released_{src.id}"}
    try:
        run_cells(src, cells, namespace)
    except SourceError:
        return  # the released notebook stops before its function is defined: it passes nothing
    stub = namespace.get(d.function)
    if callable(stub) and check_in_process(check, stub, hidden=True).passed:
        raise SourceError(f"{src.where(src.solution_cell)}: the stub the student gets already passes the check "
                          "(is the code that computes the answer outside the solution markers?)")


def _same_args(a: tuple, b: tuple, dtypes: bool = False) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or (dtypes and x.dtype != y.dtype):
            return False
        if not np.array_equal(x, y, equal_nan=x.dtype.kind == "f" and y.dtype.kind == "f"):
            return False
    return True

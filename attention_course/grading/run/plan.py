"""What is graded in one notebook, decided once before it runs: its `Plan`.

`plan_notebook` reads the notebook (`read_notebook`: a link refused, its
size capped, its format checked as nbformat checks it), recognises its
exercise once (`exercises.recognise`: its metadata, else its file name,
else the functions it defines; a notebook whose metadata names an exercise
whose functions it does not define, while it defines another's, is graded
as that other) and lays out everything the grader does with it: the checks (their inputs and expected results
prepared), the calls of the student's functions and which input of which
check each one makes, the checks whose failures the worker looks at closer,
and the remarks the grade carries. The runner and the judge then read the
plan; neither works any of it out again.

A `Setting` says what the notebooks are graded with: which exercises, which
per-check time limits, whether the hidden inputs are tried and the secret they
are drawn with. The classroom makes one from its assignment file; the
student's `check` grades with the default (every exercise, the package's own
inputs). A notebook that cannot be graded (not a valid notebook, not one of
the exercises, one the setting leaves out) raises `NotGraded`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..checks.engine.cases import Rngs
from ..checks.engine.check import Check
from ..checks.exercises import Exercise, identify, package_names_used, recognise
from .sandbox.process import size_text
from .sandbox.protocol import case_fields
from .sandbox.runner import Call, Follow, Limits
from .status import Status


@dataclass(frozen=True)
class Setting:
    """What the notebooks are graded with (the default: every exercise, the package's own inputs, hidden ones too)."""

    exercises: dict[str, dict[str, float]] | None = None
    """Exercise id -> the time limit per call of each of its checks that has one of its own (check name -> seconds;
    the others get the grader's `Limits.call_seconds`). None: every exercise of the registry, no limit of its own."""
    hidden: bool = True
    """Whether the hidden inputs are tried too."""
    secret: int | None = None
    """Redraws the hidden inputs' random values, and exercise 0's numbers for each student (None: the package's)."""
    title: str = "attention-course exercises"
    """What the notebooks are graded for, named when one's exercise is left out."""

    def seconds(self, exercise_id: str) -> dict[str, float] | None:
        """Check name -> its own time limit per call, for an exercise graded here; None if it is not graded."""
        if self.exercises is None:
            return {}
        return self.exercises.get(exercise_id)


class NotGraded(Exception):
    """A notebook the grader does not run: what its grade says instead (`judge.not_run`)."""

    def __init__(self, status: Status, sentence: str, exercise: str | None = None):
        super().__init__(sentence)
        self.status, self.sentence, self.exercise = status, sentence, exercise


@dataclass(frozen=True)
class Plan:
    """What is graded in one notebook, and how: built once (`plan_notebook`), read by the runner and the judge."""

    path: Path
    """The notebook's file."""
    cells: tuple[str, ...]
    """The sources of its code cells, in order."""
    exercise: Exercise
    """The exercise it is graded as."""
    checks: tuple[Check, ...]
    """The checks that grade it, their inputs and expected results prepared."""
    calls: tuple[Call, ...]
    """The calls of the student's functions the worker makes after the cells."""
    where: dict[int, tuple[str, int]]
    """Call id -> (check name, case index): which input of which check each call makes."""
    follows: tuple[Follow, ...] = ()
    """The checks whose failures the worker may look at closer (`run.search`), and their calls."""
    seconds: dict[str, float] = field(default_factory=dict)
    """Check name -> its own time limit per call (the others: the grader's `Limits.call_seconds`)."""
    notes: tuple[str, ...] = ()
    """Remarks for the grade, with no status of their own (exercise 0's numbers, say)."""
    handout: str = ""
    """The student id its handout was made for, when that is another student's (`handout_of_another`); else ""."""
    mismatch: str | None = None
    """Why it is graded as another exercise than its metadata names, or None."""
    borrowed: tuple[str, ...] = ()
    """Names its code takes from attention_course (outside its grading package) beyond what the exercise provides."""


def plan_notebook(path: Path, setting: Setting = Setting(), limits: Limits = Limits(),
                  student: str | None = None) -> Plan:
    """Read the notebook at `path` and decide what grades it; NotGraded if nothing does.

    `student`: the roster's id of the student it belongs to, from which an exercise with numbers drawn for each
    student draws theirs again.
    """
    try:
        nb = read_notebook(path)
        cells = tuple(code_cells(nb))
    except InvalidNotebook as err:
        guess = identify({}, path, "")  # by its file name alone
        raise NotGraded(Status.INVALID_NOTEBOOK, f"the file {err}", guess.id if guess else None) from None
    exercise, mismatch = recognise(nb["metadata"], path, "\n".join(cells))
    if exercise is None:
        raise NotGraded(Status.UNKNOWN_EXERCISE,
                        "not one of the exercises: no exercise metadata, file name or function names matched")
    borrowed = tuple(package_names_used(list(cells), exercise))
    seconds = setting.seconds(exercise.id)
    if seconds is None:
        raise NotGraded(Status.NOT_IN_ASSIGNMENT,
                        f"exercise {exercise.id} is not part of the assignment {setting.title!r}: not graded", exercise.id)
    notes: tuple[str, ...] = ()
    handout = ""
    if exercise.drawn is not None:  # the student's own example, drawn again from the roster's id
        checks, notes = exercise.drawn(nb["metadata"], student, setting.secret)
        handout = handout_of_another(nb["metadata"], student)
    else:
        checks = exercise_checks(exercise, setting.secret, seconds)
    calls, where, follows = _calls(exercise, checks, limits, setting.hidden, seconds)
    return Plan(path, cells, exercise, checks, calls, where, follows, seconds, notes, handout, mismatch, borrowed)


def handout_of_another(metadata: dict, student: str | None) -> str:
    """The student id a notebook's handout was made for, when the notebook records one and it is not `student`'s
    (the roster's id of the student who handed it in; ids compared without spaces and case); else ""."""
    entry = metadata.get("attention_course") if isinstance(metadata, dict) else None
    recorded = entry.get("student") if isinstance(entry, dict) else None
    if not student or not isinstance(recorded, str) or not recorded.strip():
        return ""
    return recorded.strip() if recorded.strip().casefold() != student.strip().casefold() else ""


_BUILT: dict[tuple, tuple[Check, ...]] = {}
_BUILD_LOCK = threading.Lock()  # one build of an exercise's checks (and their expected results) per process


def exercise_checks(exercise: Exercise, secret: int | None = None,
                    seconds: dict[str, float] | None = None) -> tuple[Check, ...]:
    """An exercise's checks with their own time limits (`seconds`: check name -> seconds per call) and their hidden
    inputs redrawn from `secret`, built once per process; the registry's own checks when neither is given.
    ValueError if the secret cannot redraw a check's hidden inputs."""
    seconds = seconds or {}
    key = (exercise.id, secret, tuple(sorted(seconds.items())))
    with _BUILD_LOCK:
        if key not in _BUILT:
            _BUILT[key] = tuple(_redrawn(check, secret, seconds.get(check.name)) for check in exercise.checks)
        return _BUILT[key]


def _redrawn(check: Check, secret: int | None, seconds: float | None) -> Check:
    """A check with its own time limit and its hidden inputs drawn with the secret."""
    changes: dict = {}
    if secret is not None and any(c.hidden for c in check.cases):
        changes["hidden_rngs"] = Rngs(secret)
    if seconds is not None:
        changes["seconds"] = seconds
    if not changes:
        return check
    mine = dataclasses.replace(check, **changes)
    try:
        mine.cases  # built now, so that a secret that cannot redraw them is said at once
    except ValueError:
        raise ValueError(f"the hidden inputs of check {check.name} change in number or kind with hidden.seed; "
                         "grade it without hidden.seed") from None
    return mine


def _calls(exercise: Exercise, checks: tuple[Check, ...], limits: Limits, hidden: bool, seconds: dict[str, float]
           ) -> tuple[tuple[Call, ...], dict[int, tuple[str, int]], tuple[Follow, ...]]:
    """The calls that grade an exercise's checks, call id -> (check name, case index), and the follow-ups.

    Each check is prepared first (its inputs and expected results, once for every thread of the batch). `seconds`:
    check name -> time limit per call (an assignment's per-check limits); the other checks get the grader's
    `limits.call_seconds`. A failed check is followed up, as a notebook's check does (`run.search`), when it has
    helpers to swap in or sizes to cut, in an exercise whose checks the registry holds (the worker takes them from
    there; a check drawn for each student is an answer sheet, which has neither): only its calls' arguments are
    sent, as for the calls themselves, never an assignment's secret.
    """
    calls, where, follows = [], {}, []
    for check in checks:
        check.prepare()
        call_seconds = seconds.get(check.name, limits.call_seconds)
        ids = []
        for i in check.indices(hidden):
            case = check.cases[i]
            ids.append(len(calls))
            calls.append(Call(ids[-1], check.name, check.function, case.args, dict(case.kwargs), call_seconds,
                              case.measure_memory))
            where[ids[-1]] = (check.name, i)
        if ids and limits.follow_seconds > 0 and exercise.drawn is None and (check.helpers or check.sizes is not None):
            follows.append(Follow(exercise.id, check.name, tuple(ids),
                                  tuple(case_fields(check.cases[where[i][1]]) for i in ids), call_seconds,
                                  exercise.check_file() if exercise.check_file else None))
    return tuple(calls), where, tuple(follows)


# --- the notebook's file read -----------------------------------------------------------------------------------

class InvalidNotebook(ValueError):
    """A submission that cannot be read as a notebook."""


MAX_NOTEBOOK_BYTES = 64 << 20
"""The largest notebook file graded (the limit of one file in a submissions zip too)."""


def read_notebook(path: Path | str, max_bytes: int = MAX_NOTEBOOK_BYTES) -> dict:
    """Read and validate a notebook (a dict, its cells' sources as text); InvalidNotebook says why it cannot be
    graded."""
    path = Path(path)
    if path.is_symlink():  # say, to /etc/shadow or to another student's notebook
        raise InvalidNotebook("is a link to another file, not a notebook of its own: it was not read")
    try:
        size = path.stat().st_size
        if size > max_bytes:  # most of it is outputs, which the grader does not read
            raise InvalidNotebook(f"is {size_text(size)}, more than the {size_text(max_bytes)} a notebook may be; "
                                  "clear its outputs (Kernel > Restart & Clear Output) and submit it again")
        raw = path.read_bytes()
        # JSON's own rule for bytes: UTF-8 (a byte-order mark allowed, as Notepad writes it), or UTF-16 or UTF-32 (as
        # a Windows shell's redirection writes it)
        text = raw.decode(json.detect_encoding(raw))
    except (OSError, UnicodeDecodeError) as err:
        raise InvalidNotebook(f"could not be read: {err}") from None
    try:
        data = json.loads(text)  # nbformat's own error would quote the start of the file, which the student may not own
    except ValueError as err:
        raise InvalidNotebook(f"is not a valid notebook: it is not JSON ({err})") from None
    return _valid_v4(data) or _read_with_nbformat(text)


def _valid_v4(data) -> dict | None:
    """`data` if it is a notebook of today's format (4.0 to 4.5) that nbformat's schema for it accepts, its cells'
    sources joined into text as nbformat reads them; else None (nbformat then converts it or says what is wrong).

    The schema is nbformat's own file, checked with fastjsonschema, as nbformat checks it: the same verdict
    without importing nbformat, whose import (jsonschema and its format checkers) takes longer than a whole
    check of a notebook.
    """
    minor = data.get("nbformat_minor") if isinstance(data, dict) and data.get("nbformat") == 4 else None
    if type(minor) is not int or not 0 <= minor <= 5:
        return None
    validator = _v4_validator(minor)
    if validator is None:
        return None
    try:
        validator(data)
    except Exception:  # noqa: BLE001 -- fastjsonschema's JsonSchemaException: nbformat says what is wrong
        return None
    for cell in data["cells"]:
        if isinstance(cell["source"], list):
            cell["source"] = "".join(cell["source"])
    return data


@functools.lru_cache(maxsize=None)
def _v4_validator(minor: int):
    """fastjsonschema's check of nbformat's schema of format 4.`minor` (compiled once per process), or None."""
    import importlib.util

    nbformat = importlib.util.find_spec("nbformat")  # where it is installed, without importing it
    try:
        import fastjsonschema

        folder = Path(nbformat.submodule_search_locations[0]) / "v4"
        schema = json.loads((folder / f"nbformat.v4.{minor}.schema.json").read_text(encoding="utf-8"))
        return fastjsonschema.compile(schema)
    except (ImportError, AttributeError, TypeError, OSError, ValueError):
        return None


def _read_with_nbformat(text: str) -> dict:
    """An older format converted to 4, or why the file is not a valid notebook, by nbformat itself."""
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as err:  # nbformat raises several JSON and schema errors
        raise InvalidNotebook(f"is not a valid notebook: {_first_line(err)}") from None
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as err:
        raise InvalidNotebook(f"is not a valid notebook: {_first_line(err)}") from None
    return nb


def code_cells(nb: dict) -> list[str]:
    """The sources of the notebook's code cells, in order."""
    return [cell["source"] for cell in nb["cells"] if cell["cell_type"] == "code"]




def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__

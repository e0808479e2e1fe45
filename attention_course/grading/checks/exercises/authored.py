"""An instructor's own exercise, checked from its check file: the engine's `Check`, without the solution.

`attention-course release my_exercises/` writes, beside each student notebook,
`<id>.check.json`: the visible inputs, the reference's results on them and on
every smaller input the search for the smallest failing input may try (each
size of `axes` cut down, as `shrink.candidates` cuts it), and what each known
mistake returns on them, but no code of the solution. `checks_of_file` makes
the check from it: its `reference` and each mistake's `predict` look the
arguments up, so the notebook's `check_exercise(fn, "<id>")`, its
`attention-course check` and the engine's follow-up (a helper at fault, the
smallest input that still fails) work as for a built-in exercise. The hidden
inputs are not in the file: the instructor's grader builds them from the
source notebook (`grading.authored`).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
from pathlib import Path

import numpy as np

from ..engine.cases import Case, Rngs
from ..engine.check import Check
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from ..engine.run import check_in_process, left_to_the_grader
from ..engine.shrink import Sizes

FORMAT = 1
"""Version of the check file's layout."""
SUFFIX = ".check.json"
"""A check file is named `<exercise id>.check.json`."""


class CheckFileError(ValueError):
    """A check file that cannot be read; the message names the file and what is wrong."""


# ---- values as JSON: exact, so that a looked-up result is the reference's to the last bit -------------------

def encode(value):
    """A value of an input or a result as JSON data (arrays as their raw bytes: nothing rounded); TypeError for one
    that has no exact form here (an object array, a torch tensor, a dict)."""
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"an array of dtype {arr.dtype} (only booleans, integers and floats can be written)")
        data = base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")
        kind = "array" if isinstance(value, np.ndarray) else "scalar"
        return {kind: arr.dtype.str, "shape": list(arr.shape), "data": data}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return {"list": [encode(v) for v in value]}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return {"float": value.hex()}
    raise TypeError(f"a {type(value).__name__} (only arrays, numbers, strings and tuples or lists of them)")


def decode(data):
    """The value `encode` wrote."""
    if isinstance(data, dict):
        if "tuple" in data:
            return tuple(decode(v) for v in data["tuple"])
        if "list" in data:
            return [decode(v) for v in data["list"]]
        if "float" in data:
            return float.fromhex(data["float"])
        kind = "array" if "array" in data else "scalar"
        arr = np.frombuffer(base64.b64decode(data["data"]), dtype=np.dtype(data[kind])).reshape(data["shape"]).copy()
        return arr if kind == "array" else arr[()]
    return data


def key(args: tuple, kwargs: dict) -> str:
    """The name under which the results for these arguments are kept: a hash of their exact values."""
    text = json.dumps([encode(tuple(args)), encode(tuple(sorted(kwargs.items())))], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def helper_name(fn) -> str:
    """`module:qualname` of a function a student may call (a function of the course's package)."""
    return f"{fn.__module__}:{fn.__qualname__}"


def helper_of(name: str):
    """The function `helper_name` named."""
    module, _, qualname = name.partition(":")
    if not module.startswith("attention_course"):
        raise CheckFileError(f"helper {name}: only the course's own functions may be named")
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value


# ---- the check, from the file --------------------------------------------------------------------------------

def read_check_file(path: Path | str) -> dict:
    """The check file's data; CheckFileError naming the file if it is not one."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise CheckFileError(f"{path}: cannot be read ({err})") from None
    except json.JSONDecodeError as err:
        raise CheckFileError(f"{path}: not a check file ({err})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckFileError(f"{path}: not a check file of format {FORMAT} (release the exercise again)")
    return data


def sizes_from(axes: dict | None) -> Sizes | None:
    """The `Sizes` of a declaration's or a check file's `axes`: a tuple of axis names (or "*") for an array, a size's
    name for a parameter that is a size itself."""
    if not axes:
        return None
    arrays = {p: (a if a == "*" else tuple(a)) for p, a in axes.items() if not isinstance(a, str) or a == "*"}
    scalars = {p: a for p, a in axes.items() if isinstance(a, str) and a != "*"}
    return Sizes(arrays, scalars)


def checks_of_file(data: dict) -> tuple[Check, ...]:
    """The exercise's check, made from its check file's data (visible inputs only)."""
    answers, predictions = data["answers"], data["predictions"]
    precision = tuple(data["tolerance"]) if data.get("tolerance") else None
    cases = [Case(c["label"], tuple(decode(a) for a in c["args"]), code=c.get("code", ""), precision=precision)
             for c in data["cases"]]

    def reference(*args, **kwargs):
        found = answers.get(key(args, kwargs))
        if found is None:
            raise LookupError("no result for this input in the exercise's check file")
        return decode(found)

    def predicted(position: int):
        def predict(*args, **kwargs):
            row = predictions.get(key(args, kwargs))
            return None if row is None else decode(row[position])
        return predict

    mistakes = tuple(Mistake(m["id"], m["hint"], predicted(p)) for p, m in enumerate(data["mistakes"]))
    check = Check(name=data["function"], function=data["function"], params=tuple(data["params"]),
                  reference=reference, make_cases=lambda rngs: list(cases), mistakes=mistakes,
                  output_names=tuple(data["outputs"]) if data.get("outputs") else None,
                  sizes=sizes_from(data.get("axes")),
                  helpers={name: helper_of(where) for name, where in data.get("helpers", {}).items()},
                  hidden_rngs=Rngs())
    return (check,)


MAX_SENT_BYTES = 1 << 20
"""Largest check file sent to the sandbox's worker for its follow-ups (a larger one: no follow-up in the sandbox)."""


def sendable(data: dict) -> dict | None:
    """The check file's data if it is small enough to send to the sandbox's worker, else None."""
    return data if len(json.dumps(data)) <= MAX_SENT_BYTES else None


def follow_up_check(data: dict):
    """(the check made from a check file's data, a test of whether the file answers given arguments): what the
    sandbox's worker follows a failure up with, on the inputs it answers (never a hidden one)."""
    check, = checks_of_file(data)
    return check, lambda args, kwargs: key(tuple(args), dict(kwargs)) in data["answers"]


def exercise_fields(data: dict) -> dict:
    """What the registry's `Exercise` needs of a check file (see `checks.exercises.from_check_file`)."""
    return {"id": data["id"], "title": data["title"], "chapter": data.get("chapter") or "",
            "check_names": (data["function"],), "provided": tuple(data.get("helpers", {}))}


def check_exercise(fn, exercise_id: str, *, hidden: bool = False, folder: Path | str = ".") -> CheckResult:
    """Check `fn` against the instructor's exercise `exercise_id`, whose check file `<exercise_id>.check.json` sits
    in `folder` (the notebook's own, where Jupyter runs it). What a released notebook's check cell calls."""
    if left_to_the_grader():  # the batch grader's worker: it checks every function itself, from the source
        return CheckResult.skipped(exercise_id, getattr(fn, "__name__", exercise_id),
                                   "not run here: the batch grader checks every function itself.")
    path = Path(folder) / f"{exercise_id}{SUFFIX}"
    if not path.is_file():
        raise FileNotFoundError(f"the check file {path.name} is not beside this notebook: keep the two files "
                                "the instructor gave you in the same folder")
    check, = checks_of_file(read_check_file(path))
    return check_in_process(check, fn, hidden=hidden)

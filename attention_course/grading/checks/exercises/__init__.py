"""The registry of exercises: which notebook, which book chapter, which checks.

`EXERCISES` is the one list every tool reads (release, check, grade, the
gradebook, the tests); each exercise's checks live in a module of their own
beside this one, which the registry names and imports when they are first
asked for (finding a notebook's exercise loads no exercise's inputs).

A notebook says which exercise it is in its metadata
(`metadata["attention_course"]["exercise"]`); a renamed or rebuilt notebook is
recognised by its file name or, failing that, by the functions it defines.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..engine.code import as_python, functions_defined

if TYPE_CHECKING:
    from ..engine.check import Check

METADATA_KEY = "attention_course"
"""Key of the course's entry in a notebook's metadata."""


@dataclass(frozen=True)
class Exercise:
    """One exercise notebook and the checks that grade it.

    The registry holds what names an exercise (its id, title, chapter, the names of its checks and of the
    functions the student writes); its checks are imported from their module when first asked for, so that
    reading the registry (to find a notebook's exercise, to list the ids) loads no exercise's inputs.
    """

    id: str
    """The notebook's stem in solutions/ and exercises/, e.g. "03_softmax"."""
    title: str
    """Human title, shown in tables."""
    chapter: str
    """The book chapter it practises (book/<chapter>.ipynb)."""
    module: str
    """The module beside this one that defines its checks ("masks": masks.py): a check named `causal_mask` is its
    `CHECKS["causal_mask"]` (a `Check`), run in a notebook by its `check_causal_mask`."""
    check_names: tuple[str, ...]
    """The names of its checks, in the order the notebook runs them."""
    provided: tuple[str, ...] = ()
    """Names the notebook itself imports from attention_course for the student to use."""
    functions: tuple[str, ...] = ()
    """Names of what the student writes, one for each check; left out: the checks' names."""
    drawn: Callable[[dict, str | None, int | None], tuple[tuple[Check, ...], tuple[str, ...]]] | None = None
    """For an exercise answered by hand on numbers drawn for each student: (the notebook's metadata, the roster's
    student id or None, the assignment's secret or None) -> the checks of that student's own example, and what
    their feedback should say about it (the notebook made for another id, say). None: `checks` for everyone."""
    built: Callable[[], tuple[Check, ...]] | None = None
    """For an instructor's own exercise (`add`): makes its checks (from its source notebook, or from the check file
    beside a student's notebook); None: they are in `module`."""
    check_file: Callable[[], dict] | None = None
    """For an instructor's own exercise: the data of its check file (visible inputs and their results, no solution),
    from which the sandbox's worker makes the check it follows a failure up with (None if too large to send)."""

    def __post_init__(self):
        if not self.functions:
            object.__setattr__(self, "functions", self.check_names)

    @property
    def checks(self) -> tuple[Check, ...]:
        """The checks, in the order the notebook runs them (their module is imported on first use)."""
        if self.built is not None:
            return self.built()
        module = importlib.import_module(f".{self.module}", __name__)
        return tuple(module.CHECKS[name] for name in self.check_names)

    @property
    def check_functions(self) -> tuple[str, ...]:
        """The names a notebook imports from attention_course.grading: `check_<name>`, one for each check."""
        return tuple(f"check_{name}" for name in self.check_names)

    @property
    def max_score(self) -> int:
        """Points available when every input of every check is tried."""
        return sum(len(c.cases) for c in self.checks)


def _drawn_by_hand(metadata: dict, student: str | None, secret: int | None):
    """Exercise 0's checks for one student (`by_hand.checks_for`), its module imported when a notebook needs it."""
    from .by_hand import checks_for

    return checks_for(metadata, student, secret)


EXERCISES: tuple[Exercise, ...] = (
    Exercise("00_worked_example", "A worked example of your own", "worked_example", "by_hand", ("worked_example",),
             functions=("answers",), drawn=_drawn_by_hand),
    Exercise("01_dot_scores", "Dot-product scores", "worked_example", "scores", ("dot_scores",)),
    Exercise("02_scale_scores", "Scaling the scores", "scaling", "scores", ("scale_scores", "dot_product_spread")),
    Exercise("03_softmax", "A stable softmax", "stable_softmax", "softmax", ("softmax",)),
    Exercise("04_attention", "Attention", "worked_example", "attention", ("attention",), ("softmax",)),
    Exercise("05_causal_mask", "The causal mask", "masks", "masks", ("causal_mask", "masked_attention"),
             ("softmax",)),
    Exercise("06_padding_mask", "Padding", "masks", "masks", ("padding_mask", "padded_attention"), ("softmax",)),
    Exercise("07_multi_head_attention", "Multi-head attention", "learned_projections", "multi_head",
             ("multi_head_attention",), ("scaled_dot_product_attention",)),
    Exercise("08_flash_attention", "Tiled attention", "cost", "flash", ("flash_attention",)),
    Exercise("09_rope", "Rotary position embeddings", "positions", "positions", ("apply_rope", "rope_attention"),
             ("scaled_dot_product_attention",)),
    Exercise("10_decode_step", "One decoding step", "decoding", "decoding", ("decode_step",),
             ("apply_rope", "softmax")),
    Exercise("11_attention_backward", "The tiled backward pass", "backward", "backward", ("backward_query_tile",)),
    Exercise("12_sink_attention", "Sinks and sliding windows", "todays_models", "sinks", ("sink_attention",),
             ("softmax",)),
    Exercise("13_decode_step_cost", "What a decoding step costs", "generating_cost", "step_cost",
             ("decode_attention_cost", "decode_step_cost")),
    Exercise("14_sparse_attention", "Sparse attention: each query's top-k keys", "without_all_scores", "sparse",
             ("sparse_attention",), ("softmax",)),
    Exercise("15_gated_delta_rule", "The gated delta rule: a state instead of scores", "without_all_scores", "delta",
             ("gated_delta_step", "gated_delta_chunk")),
)

BY_ID = {e.id: e for e in EXERCISES}


def exercise(exercise_id: str) -> Exercise:
    """The exercise with this id; ValueError listing the ids if there is none."""
    try:
        return BY_ID[exercise_id]
    except KeyError:
        raise ValueError(f"unknown exercise {exercise_id!r}; the exercises are {', '.join(BY_ID)}") from None


def add(exercise: Exercise, *, replace: bool = False) -> Exercise:
    """Make an instructor's own exercise known by its id (`BY_ID`), as the course's are, and return the one known.

    The grader adds those its assignment file names, from their source notebooks (`grading.authored.load_folder`,
    with `replace`: the source is what grades), a student's check the one whose check file is beside the notebook
    (`identify`: an id already known keeps its exercise). An id of the course's own exercises cannot be taken
    (ValueError)."""
    if any(e.id == exercise.id for e in EXERCISES):
        raise ValueError(f"exercise {exercise.id!r}: the course has an exercise of that id; name yours otherwise")
    if replace:
        BY_ID[exercise.id] = exercise
    return BY_ID.setdefault(exercise.id, exercise)


def from_check_file(path: Path) -> Exercise:
    """An instructor's own exercise as a student's check file describes it (visible inputs only, no solution)."""
    from functools import cache

    from .authored import checks_of_file, exercise_fields, read_check_file, sendable

    data = read_check_file(path)
    return Exercise(**exercise_fields(data), module="", built=cache(lambda: checks_of_file(data)),
                    check_file=cache(lambda: sendable(data)))


def identify(metadata: dict, path: Path | str, code: str) -> Exercise | None:
    """Which exercise a notebook is: by metadata, then file name, then defined functions.

    An instructor's own exercise is known by its metadata: already added (by the grader, from the assignment's
    source notebooks), or by its check file (`check_file`, beside the notebook: what a student's check has)."""
    named = named_in(metadata, path)
    if named is not None:
        return named
    stem = Path(path).stem
    for ex in EXERCISES:
        if ex.id in stem:
            return ex
    defined = functions_defined(code)
    matches = [ex for ex in EXERCISES if set(ex.functions) <= defined]
    # The most specific match: exercise 5 defines masked_attention, exercise 6 also padded_attention.
    return max(matches, key=lambda ex: len(ex.functions)) if matches else None


def recognise(metadata: dict, path: Path | str, code: str) -> tuple[Exercise | None, str | None]:
    """(the exercise to grade a notebook as, or None; why it is not the one its metadata names, or None).

    As `identify`, except for a notebook whose metadata names an exercise whose functions it does not define while
    it defines another's (recognised by its file name or its functions): that other, and a sentence that says so.
    """
    named = named_in(metadata, path)
    found = identify({}, path, code)  # by the file name, else by the functions it defines
    if named is None or found is None or found.id == named.id:
        return named or found, None
    defined = functions_defined(code)
    if set(named.functions) & defined or not set(found.functions) & defined:
        return named, None
    return found, (f"its metadata says it is exercise {named.id}, but it defines none of that exercise's functions "
                   f"and all of {found.id}'s: graded as {found.id}")


def named_in(metadata: dict, path: Path | str) -> Exercise | None:
    """The exercise a notebook's metadata names (`metadata["attention_course"]["exercise"]`), or None.

    An instructor's own exercise not known yet is read from its check file (`check_file`), beside the notebook at
    `path` (never a file elsewhere)."""
    entry = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if not isinstance(entry, dict) or not isinstance(entry.get("exercise"), str):
        return None
    if entry["exercise"] in BY_ID:
        return BY_ID[entry["exercise"]]
    if isinstance(entry.get("check_file"), str):
        name = Path(entry["check_file"]).name
        beside = Path(path).parent / name
        if name == f"{entry['exercise']}.check.json" and beside.is_file():
            try:
                return add(from_check_file(beside))
            except ValueError:
                return None
    return None


def package_names_used(cells: list[str], exercise: Exercise) -> list[str]:
    """Names taken from attention_course (outside its grading package) beyond those the exercise provides.

    The package holds the reference answers; a notebook that calls them instead
    of its own code is worth a look by the instructor (the marks do not change).
    """
    trees = []
    for source in cells:
        try:
            trees.append(ast.parse(source))
        except SyntaxError:  # IPython's syntax, or code that does not parse (then nothing to see)
            try:
                trees.append(ast.parse(as_python(source)))
            except SyntaxError:
                continue
    used: set[str] = set()
    aliases: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _course_module(node.module or ""):
                used.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                aliases.update((a.asname or a.name.split(".")[0]) for a in node.names if _course_module(a.name))
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
                if node.attr != "grading":
                    used.add(node.attr)
    return sorted(used - set(exercise.provided))


def _course_module(name: str) -> bool:
    """attention_course or one of its modules, except the grading package and the links to the book."""
    parts = name.split(".")
    return parts[0] == "attention_course" and parts[1:2] not in (["grading"], ["book"])

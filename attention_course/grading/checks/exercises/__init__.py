"""The registry of exercises: which notebook, which book chapter, which checks.

`EXERCISES` is the one list every tool reads (release, check, grade, the
gradebook, the tests); each exercise's checks live in a module of their own
beside this one.

A notebook says which exercise it is in its metadata
(`metadata["attention_course"]["exercise"]`); a renamed or rebuilt notebook is
recognised by its file name or, failing that, by the functions it defines.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..engine.check import Check
from .attention import ATTENTION
from .backward import BACKWARD_QUERY_TILE
from .by_hand import WORKED_EXAMPLE, checks_for
from .decoding import DECODE_STEP
from .flash import FLASH_ATTENTION
from .masks import CAUSAL_MASK, MASKED_ATTENTION, PADDED_ATTENTION, PADDING_MASK
from .multi_head import MULTI_HEAD_ATTENTION
from .positions import APPLY_ROPE, ROPE_ATTENTION
from .scores import DOT_PRODUCT_SPREAD, DOT_SCORES, SCALE_SCORES
from .sinks import SINK_ATTENTION
from .softmax import SOFTMAX
from .step_cost import DECODE_ATTENTION_COST, DECODE_STEP_COST

METADATA_KEY = "attention_course"
"""Key of the course's entry in a notebook's metadata."""


@dataclass(frozen=True)
class Exercise:
    """One exercise notebook and the checks that grade it."""

    id: str
    """The notebook's stem in solutions/ and exercises/, e.g. "03_softmax"."""
    title: str
    """Human title, shown in tables."""
    chapter: str
    """The book chapter it practises (book/<chapter>.ipynb)."""
    checks: tuple[Check, ...]
    """The checks, in the order the notebook runs them."""
    provided: tuple[str, ...] = ()
    """Names the notebook itself imports from attention_course for the student to use."""
    drawn: Callable[[dict, str | None, int | None], tuple[tuple[Check, ...], tuple[str, ...]]] | None = None
    """For an exercise answered by hand on numbers drawn for each student: (the notebook's metadata, the roster's
    student id or None, the assignment's secret or None) -> the checks of that student's own example, and what
    their feedback should say about it (the notebook made for another id, say). None: `checks` for everyone."""

    @property
    def max_score(self) -> int:
        """Points available when every input of every check is tried."""
        return sum(len(c.cases) for c in self.checks)

    @property
    def functions(self) -> tuple[str, ...]:
        """Names of the functions the student writes."""
        return tuple(c.function for c in self.checks)


EXERCISES: tuple[Exercise, ...] = (
    Exercise("00_worked_example", "A worked example of your own", "worked_example", (WORKED_EXAMPLE,),
             drawn=checks_for),
    Exercise("01_dot_scores", "Dot-product scores", "worked_example", (DOT_SCORES,)),
    Exercise("02_scale_scores", "Scaling the scores", "scaling", (SCALE_SCORES, DOT_PRODUCT_SPREAD)),
    Exercise("03_softmax", "A stable softmax", "stable_softmax", (SOFTMAX,)),
    Exercise("04_attention", "Attention", "worked_example", (ATTENTION,), ("softmax",)),
    Exercise("05_causal_mask", "The causal mask", "masks", (CAUSAL_MASK, MASKED_ATTENTION), ("softmax",)),
    Exercise("06_padding_mask", "Padding", "masks", (PADDING_MASK, PADDED_ATTENTION), ("softmax",)),
    Exercise("07_multi_head_attention", "Multi-head attention", "learned_projections", (MULTI_HEAD_ATTENTION,),
             ("scaled_dot_product_attention",)),
    Exercise("08_flash_attention", "Tiled attention", "cost", (FLASH_ATTENTION,)),
    Exercise("09_rope", "Rotary position embeddings", "positions", (APPLY_ROPE, ROPE_ATTENTION),
             ("scaled_dot_product_attention",)),
    Exercise("10_decode_step", "One decoding step", "decoding", (DECODE_STEP,), ("apply_rope", "softmax")),
    Exercise("11_attention_backward", "The tiled backward pass", "backward", (BACKWARD_QUERY_TILE,)),
    Exercise("12_sink_attention", "Sinks and sliding windows", "todays_models", (SINK_ATTENTION,), ("softmax",)),
    Exercise("13_decode_step_cost", "What a decoding step costs", "generating_cost",
             (DECODE_ATTENTION_COST, DECODE_STEP_COST)),
)

BY_ID = {e.id: e for e in EXERCISES}


def exercise(exercise_id: str) -> Exercise:
    """The exercise with this id; ValueError listing the ids if there is none."""
    try:
        return BY_ID[exercise_id]
    except KeyError:
        raise ValueError(f"unknown exercise {exercise_id!r}; the exercises are {', '.join(BY_ID)}") from None


def identify(metadata: dict, path: Path | str, code: str) -> Exercise | None:
    """Which exercise a notebook is: by metadata, then file name, then defined functions."""
    entry = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    if isinstance(entry, dict) and entry.get("exercise") in BY_ID:
        return BY_ID[entry["exercise"]]
    stem = Path(path).stem
    for ex in EXERCISES:
        if ex.id in stem:
            return ex
    defined = set(re.findall(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", code, flags=re.MULTILINE))
    matches = [ex for ex in EXERCISES if set(ex.functions) <= defined]
    # The most specific match: exercise 5 defines masked_attention, exercise 6 also padded_attention.
    return max(matches, key=lambda ex: len(ex.functions)) if matches else None


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
                trees.append(ast.parse(_as_python(source)))
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


def _as_python(source: str) -> str:
    """A cell in IPython's syntax made Python (`%time x = 1` -> get_ipython().run_line_magic(...)); IPython is
    imported only for such a cell, since plain Python is left as it is."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)


def _course_module(name: str) -> bool:
    """attention_course or one of its modules, except the grading package and the links to the book."""
    parts = name.split(".")
    return parts[0] == "attention_course" and parts[1:2] not in (["grading"], ["book"])

"""Check for exercise 0: a worked example of your own, attention computed by hand (book/worked_example.ipynb).

Each student gets an example of their own, drawn from their id and the
assignment's secret (`example_for`; no id: the bank-bot example), and writes
each step's numbers into a plain dict, `answers`, after working them on
paper. The engine reads that dict as an answer sheet (`calls.read_answers`);
the check judges one step per input:

    dot_products   q·k for each token, in the sentence's order     2 decimals (they are exact)
    scaled_scores  each divided by sqrt(d_k)                       2 decimals
    exponentials   e to the power of each scaled score             2 decimals
    exp_sum        their sum                                       2 decimals
    weights        each exponential divided by the sum             3 decimals
    output         the weights times the values, added up          2 decimals
    masked         under a causal mask, for the query of an earlier token: the positions whose weight is 0
    meaning        which of four statements says what the largest weight means

A number is right within one unit of the last decimal its step asks for,
against the example's own numbers or against what the student's own earlier
answers give: a later step computed right from a wrong earlier answer loses
only the earlier step's mark, as a marker would (carried forward), and says
so (`carried_note`). The two questions are graded exactly. Every wrong step
is shown, named by its input's label, each with its own hint; a mistake
(`StepMistake`) is named only when its prediction, from the example's
numbers or from the student's own earlier answers, reproduces the step. The
sheet is shown as a person writes it (`written`: 1, not 1.). Numbers written by hand have no dtype: ints, floats, lists and numpy
arrays are all read as numbers.

The questions asked about an example (which earlier token question 6
follows, the order of question 7's statements) come from its numbers
(`questions`), so the notebook need carry nothing but the numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ....chapters.worked_example import BANK_BOT, WorkedExample, draw_worked_example
from ....core.softmax import softmax
from ..engine import results
from ..engine.calls import Opaque
from ..engine.cases import SHOW_MAX_ELEMENTS, Case, format_value
from ..engine.check import Check
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from ..engine.run import check_in_process

EXERCISE = "00_worked_example"
"""The exercise's id."""

ENTRIES = ("dot_products", "scaled_scores", "exponentials", "exp_sum", "weights", "output", "masked", "meaning")
"""The answer sheet's entries, in the order of the steps."""

DECIMALS = {"dot_products": 2, "scaled_scores": 2, "exponentials": 2, "exp_sum": 2, "weights": 3, "output": 2}
"""The decimals each numeric entry is asked to; one unit of the last is its tolerance. The questions are exact."""

LABELS = {
    "dot_products": "step 2: the dot products q·k",
    "scaled_scores": "step 3: the scaled scores",
    "exponentials": "step 4: the exponentials",
    "exp_sum": "step 4: the sum of the exponentials",
    "weights": "step 4: the weights",
    "output": "step 5: the output",
    "masked": "question 6: the causal mask",
    "meaning": "question 7: what the largest weight means",
}
"""Each entry's input label: the step a student's feedback names."""

STATEMENTS = ("right", "most_important_word", "its_vector_changes", "roles_swapped")
"""The kinds of question 7's statements; `questions` shuffles them for each example."""


# --- the example: drawn for a student, read from a notebook ------------------------------------------------------

def normalised_id(student: str) -> str:
    """A student id as the draw reads it: without surrounding spaces, case folded ("S123 " and "s123" agree)."""
    if not isinstance(student, str) or not student.strip():
        raise ValueError(f"student: expected a student id (a non-empty string), got {student!r}")
    return student.strip().casefold()


def student_rng(student: str, secret: int | None = None) -> np.random.Generator:
    """The generator a student's example is drawn from: a stable hash of their id, mixed with the secret.

    The hash is sha256 (the same on every machine and in every run, unlike
    Python's salted `hash`); `secret` is the assignment's secret number
    (`hidden.seed`), which only the instructor's file holds. Without it,
    anyone with the package can draw anyone's example.
    """
    digest = hashlib.sha256(f"attention-course {EXERCISE}\0{normalised_id(student)}".encode()).digest()
    number = int.from_bytes(digest[:8], "big")
    return np.random.default_rng([number] if secret is None else [int(secret), number])


@functools.lru_cache(maxsize=4096)
def _drawn(student: str, secret: int | None) -> WorkedExample:
    return draw_worked_example(student_rng(student, secret), accept=distinguishable)


def example_for(student: str | None, secret: int | None = None) -> WorkedExample:
    """A student's own example (drawn from their id and `secret`); without an id, the bank-bot example."""
    return BANK_BOT if student is None else _drawn(normalised_id(student), secret)


def _number(x: float):
    """An entry as it is written by hand: 1, not 1.0; 0.4, not 0.40000000000000002."""
    x = float(x)
    return int(x) if x == int(x) else round(x, 6)


def written(value) -> str:
    """Numbers as a person writes them (1, not 1.; 0.5; [1, 2]), in the fewest digits that read back as the same
    float64: `np.array(eval(written(x)))` is x again."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim:
        return "[" + ", ".join(written(row) for row in arr) + "]"
    x = float(arr)
    return repr(x) if not np.isfinite(x) else np.format_float_positional(x, trim="-")


def _as_read(value: np.ndarray) -> str:
    """An entry of the sheet in a sentence: as written (`written`), or described if it is too long to print."""
    return written(value) if value.size <= SHOW_MAX_ELEMENTS else format_value(value)


def example_dict(example: WorkedExample) -> dict:
    """The example as plain JSON-able data: tokens, query (of the last token), keys, values."""
    return {"tokens": list(example.tokens), "query": [_number(x) for x in example.query],
            "keys": [[_number(x) for x in row] for row in example.keys],
            "values": [[_number(x) for x in row] for row in example.values]}


def example_from_dict(data, name: str = "example") -> WorkedExample:
    """The example a notebook holds (`example_dict`'s form); ValueError or TypeError naming what is wrong."""
    if not isinstance(data, dict):
        raise TypeError(f"{name}: expected a dict with tokens, query, keys and values, got {type(data).__name__}")
    missing = [k for k in ("tokens", "query", "keys", "values") if k not in data]
    if missing:
        raise ValueError(f"{name}: no {', '.join(missing)}; an example has tokens, query, keys and values")
    tokens = data["tokens"]
    if (not isinstance(tokens, (list, tuple)) or not 2 <= len(tokens) <= 8
            or not all(isinstance(t, str) and 0 < len(t) <= 40 for t in tokens)):
        raise ValueError(f"{name}['tokens']: expected 2 to 8 words, got {tokens!r:.100}")
    arrays = {}
    for key in ("query", "keys", "values"):
        try:
            arrays[key] = np.array(data[key], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name}[{key!r}]: expected numbers, got {data[key]!r:.100}") from None
        if not np.isfinite(arrays[key]).all() or arrays[key].size > 4096:
            raise ValueError(f"{name}[{key!r}]: expected a few finite numbers, got {data[key]!r:.100}")
    query, keys, values = arrays["query"], arrays["keys"], arrays["values"]
    if query.ndim != 1 or keys.shape != (len(tokens), query.size) or values.ndim != 2 or len(values) != len(tokens):
        raise ValueError(f"{name}: expected a query (d_k,), keys (n, d_k) and values (n, d_v) for n = {len(tokens)} "
                         f"tokens; got {query.shape}, {keys.shape} and {values.shape}")
    for arr in (query, keys, values):
        arr.flags.writeable = False
    return WorkedExample(tuple(tokens), tokens[-1], query, keys, values)


def same_example(a: WorkedExample, b: WorkedExample) -> bool:
    """Whether two examples hold the same sentence and numbers."""
    return (a.tokens == b.tokens and a.query.shape == b.query.shape and a.keys.shape == b.keys.shape
            and a.values.shape == b.values.shape and bool(np.array_equal(a.query, b.query))
            and bool(np.array_equal(a.keys, b.keys)) and bool(np.array_equal(a.values, b.values)))


def example_code(example: WorkedExample) -> str:
    """The notebook's `example = {...}` cell: the numbers, one key and one value per line, each named."""
    def vector(row) -> str:
        return "[" + ", ".join(str(_number(x)) for x in row) + "]"

    width = max(len(vector(r)) for r in (*example.keys, *example.values))
    lines = ["example = {",
             f"    \"tokens\": {json.dumps(list(example.tokens))},  # the query is that of the last token",
             f"    \"query\": {vector(example.query)},  # q, d_k = {example.d_k}",
             "    \"keys\": ["]
    lines += [f"        {vector(k) + ',':{width + 1}}  # {i + 1} {example.tokens[i]}" for i, k in enumerate(example.keys)]
    lines += ["    ],", "    \"values\": ["]
    lines += [f"        {vector(v) + ',':{width + 1}}  # {i + 1} {example.tokens[i]}" for i, v in enumerate(example.values)]
    lines += ["    ],", "}"]
    return "\n".join(lines)


# --- the questions asked about an example, and its answers ---------------------------------------------------------

@dataclass(frozen=True)
class Questions:
    """The two questions asked about an example, made from its numbers."""

    masked_query: int
    """Question 6 follows the query of this earlier token (its position, counted from 1)."""
    statements: tuple[str, ...]
    """Question 7's statements (kinds of `STATEMENTS`), in the order they are numbered."""

    @property
    def right_statement(self) -> int:
        """The number (from 1) of the statement that is right."""
        return self.statements.index("right") + 1


def questions(example: WorkedExample) -> Questions:
    """The questions asked about `example`, drawn from a hash of its numbers (the same wherever it is made)."""
    numbers = json.dumps(example_dict(example), sort_keys=True)
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(numbers.encode()).digest()[:8], "big"))
    n = len(example.tokens)
    return Questions(int(rng.integers(1, n)), tuple(str(s) for s in rng.permutation(STATEMENTS)))


def token_name(example: WorkedExample, position: int) -> str:
    """A token named for a student: "card" (token 2), or with its position where its word appears twice."""
    word = example.tokens[position - 1]
    return f'"{word}" (token {position})' if example.tokens.count(word) > 1 else f'"{word}"'


def largest(example: WorkedExample) -> int:
    """The position (from 1) of the token with the largest weight."""
    return int(np.argmax(example.trace().weights)) + 1


def statement_texts(example: WorkedExample, asked: Questions | None = None) -> list[str]:
    """Question 7's statements, in the order they are numbered (none names the token: that is for the student)."""
    asked = asked or questions(example)
    q, t = token_name(example, len(example.tokens)), "the token with the largest weight"
    text = {
        "right": f"The output of {q} is mostly the value of {t}: {q} takes most of what it reads from that token.",
        "most_important_word": f"{t[0].upper() + t[1:]} is the most important word of the sentence, for every token.",
        "its_vector_changes": f"The vector of {t} changes the most in this layer.",
        "roles_swapped": f"The key of {q} matches the query of {t} best.",
    }
    return [text[kind] for kind in asked.statements]


def answer_key(example: WorkedExample) -> dict[str, np.ndarray]:
    """Every entry's right answer, exact (not rounded): the sheet a student aims for."""
    trace, asked = example.trace(), questions(example)
    n = len(example.tokens)
    return {"dot_products": trace.scores, "scaled_scores": trace.scaled_scores, "exponentials": trace.exponentials,
            "exp_sum": np.asarray(trace.exp_sum), "weights": trace.weights, "output": trace.output,
            "masked": np.arange(asked.masked_query + 1, n + 1, dtype=np.float64),
            "meaning": np.asarray(float(asked.right_statement))}


def rounded_answers(example: WorkedExample) -> dict:
    """The answers as a student writes them: each step to its decimals, the questions as whole numbers."""
    key = answer_key(example)
    out: dict = {}
    for entry in ENTRIES:
        value = key[entry]
        if entry in DECIMALS:
            rounded = np.round(value, DECIMALS[entry])
            out[entry] = float(rounded) if rounded.ndim == 0 else [float(x) for x in rounded]
        else:
            out[entry] = int(value) if value.ndim == 0 else [int(x) for x in value]
    return out


# --- reading a sheet, and judging one step ---------------------------------------------------------------------

def _tolerance(entry: str) -> float:
    return 10.0 ** -DECIMALS[entry] + 1e-9


def _shape(example: WorkedExample, entry: str) -> tuple[int, ...]:
    n = len(example.tokens)
    return {"exp_sum": (), "output": (example.values.shape[1],)}.get(entry, (n,))


def _usable(example: WorkedExample, entry: str, value) -> np.ndarray | None:
    """A numeric entry as an array of its step's shape (a sum given as [x] too), or None if it is not one."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf" or not np.isfinite(value).all():
        return None
    shape = _shape(example, entry)
    if value.size == int(np.prod(shape)) and (value.shape == shape or value.ndim <= 1):
        return value.astype(np.float64).reshape(shape)
    return None


def _positions(value) -> frozenset[int] | None:
    """Whole numbers given for a question (one, or a list): as a set; None if they are not whole numbers."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf" or value.ndim > 1:
        return None
    flat = value.astype(np.float64).ravel()
    if not np.isfinite(flat).all() or np.any(flat != np.round(flat)):
        return None
    return frozenset(int(x) for x in flat)


def _sheet(got) -> dict | None:
    """The entries of a read sheet by name, or None if what came back is not a sheet."""
    if isinstance(got, tuple) and len(got) == len(ENTRIES):
        return dict(zip(ENTRIES, got))
    return None


def _carried_from(example: WorkedExample, entry: str, own: dict) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """What this entry is when computed right from the student's own earlier answers (those that are usable): each
    with the entries it was computed from.

    An earlier answer counts as written (rounded, as on the sheet) and as computed, unrounded, from the answers
    before it: e^(5/3) = 5.29 and e^1.67 = 5.31 are both right from one's own dot product of 5, so that one
    mistake costs one step, whichever number was carried.
    """
    u = {e: _usable(example, e, own.get(e)) for e in ("dot_products", "scaled_scores", "exponentials", "exp_sum",
                                                       "weights")}
    root = np.sqrt(example.d_k)

    def written(name: str) -> list[tuple[tuple[str, ...], np.ndarray]]:
        return [] if u[name] is None else [((name,), u[name])]

    scaled = ([] if u["dot_products"] is None else [(("dot_products",), u["dot_products"] / root)])
    exps = [(sources, np.exp(x)) for sources, x in written("scaled_scores") + scaled]
    sums = [(sources, np.asarray(e.sum())) for sources, e in written("exponentials") + exps]
    weights = []
    if u["exponentials"] is not None and u["exp_sum"] is not None and u["exp_sum"] != 0:
        weights.append((("exponentials", "exp_sum"), u["exponentials"] / u["exp_sum"]))
    weights += [(sources, e / e.sum()) for sources, e in written("exponentials") + exps if e.sum() != 0]
    weights += [(sources, softmax(x)) for sources, x in written("scaled_scores") + scaled]
    outputs = [(sources, w @ example.values) for sources, w in written("weights") + weights]  # (n,) x (n, d_v)
    found = {"scaled_scores": scaled, "exponentials": exps, "exp_sum": sums, "weights": weights,
             "output": outputs}.get(entry, [])
    unique: list[tuple[tuple[str, ...], np.ndarray]] = []
    for sources, value in found:  # one of each number, the first way of reaching it
        if np.all(np.isfinite(value)) and not any(v.shape == value.shape and np.allclose(v, value, rtol=0, atol=1e-12)
                                                  for _, v in unique):
            unique.append((sources, value))
    return unique


def _carried(example: WorkedExample, entry: str, own: dict) -> list[np.ndarray]:
    """What this entry is when computed right from the student's own earlier answers (those that are usable)."""
    return [value for _, value in _carried_from(example, entry, own)]


_NAMES = {"dot_products": "dot products", "scaled_scores": "scaled scores", "exponentials": "exponentials",
          "exp_sum": "sum of the exponentials", "weights": "weights"}
"""Each numeric entry as a sentence names it."""


def _carried_roots(example: WorkedExample, entry: str, own: dict, key: dict) -> tuple[tuple[str, ...], list[str]]:
    """(the entries of the sheet this entry is computed from, the wrong earlier entries it was carried forward from
    through the sheet's own numbers); ((), []) if it is the example's own number, or no wrong entry explains it."""
    value = _usable(example, entry, own.get(entry)) if entry in _FROM else None
    if value is None or _close(value, key[entry], entry):
        return (), []
    for sources, carried in _carried_from(example, entry, own):
        if not _close(value, carried, entry):
            continue
        roots: list[str] = []
        for source in sources:
            if step_problem(example, source, own, key):
                roots.append(source)  # wrong itself
            else:
                roots += _carried_roots(example, source, own, key)[1]  # right only from a wrong one before it
        if roots:
            return sources, list(dict.fromkeys(roots))
    return (), []


def carried_note(example: WorkedExample, entry: str, own: dict, key: dict | None = None) -> str:
    """What a right step says when it is right only from a wrong earlier answer of the student's ("" otherwise).

    It says, each checked here: the step is not the example's own number
    (not within its tolerance), it is what the named entries of the sheet
    give (within it), and the steps it names are wrong, the step having been
    computed from them through the sheet's own numbers.
    """
    key = answer_key(example) if key is None else key
    sources, roots = _carried_roots(example, entry, own, key)
    if not roots:
        return ""
    wrong = " and ".join("{} ({})".format(*LABELS[e].split(": ", 1)) for e in roots)
    return (f"right from your own {' and '.join(_NAMES[e] for e in sources)}: carried forward from the wrong {wrong}, "
            "this step keeps its mark")


_FROM = {"scaled_scores": "your own dot products", "exponentials": "your own scaled scores",
         "exp_sum": "your own exponentials", "weights": "your own exponentials and sum (or scaled scores)",
         "output": "your own weights"}


def _within(value: np.ndarray, target, entry: str) -> np.ndarray:
    """Entry by entry: within one unit of the last decimal asked (of a number as large as e^36, its last digits)."""
    target = np.asarray(target, dtype=np.float64)
    return np.abs(value - target) <= _tolerance(entry) + 1e-12 * np.abs(target)


def _close(value: np.ndarray | None, target, entry: str) -> bool:
    if value is None or target is None:
        return False
    return value.shape == np.shape(target) and bool(np.all(_within(value, target, entry)))


def _same_answer(entry: str, value, target) -> bool:
    """Whether an entry equals a target (of any shape): within the step's tolerance, or exactly for the questions."""
    if target is None or not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        return False
    target = np.asarray(target, dtype=np.float64)
    if entry in DECIMALS:
        return value.size == target.size and _close(value.astype(np.float64).reshape(target.shape), target, entry)
    return _positions(value) is not None and _positions(value) == _positions(target)


def step_problem(example: WorkedExample, entry: str, own: dict, key: dict | None = None) -> str | None:
    """What is wrong with one step of a sheet (a sentence naming it), or None if it is right.

    `key`: the example's `answer_key`, if the caller has it already.
    """
    key = answer_key(example) if key is None else key
    value = own.get(entry)
    where = f'answers["{entry}"]'
    if value is None:
        return f"not answered yet: {where} is missing, None or still ..."
    if isinstance(value, Opaque) or not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        return f"{where} is {value}, not numbers: write a number, a list of numbers or a numpy array"
    if entry == "masked":
        chosen = _positions(value)
        if chosen is None:
            return f"{where} should be the positions of tokens (whole numbers, counted from 1), got {_as_read(value)}"
        return None if chosen == _positions(key[entry]) else "these are not the tokens whose weights become 0"
    if entry == "meaning":
        chosen = _positions(value)
        if chosen is None or value.size != 1:
            return f"{where} should be the number of one statement, 1 to {len(STATEMENTS)}, got {_as_read(value)}"
        return None if chosen == _positions(key[entry]) else f"statement {next(iter(chosen))} is not the right one"
    usable = _usable(example, entry, value)
    if usable is None:
        shape = _shape(example, entry)
        wanted = "one number" if shape == () else f"{shape[0]} numbers" + (
            " (one per coordinate of a value)" if entry == "output" else ", one per token")
        return f"{where} should be {wanted}, got {value.size} (shape {value.shape})"
    carried = _carried(example, entry, own)
    if _close(usable, key[entry], entry) or any(_close(usable, c, entry) for c in carried):
        return None
    tol = f"{_tolerance(entry):.{DECIMALS[entry]}f}"
    also = f" and from what {_FROM[entry]} give" if carried else ""
    if entry == "exp_sum":
        return f"the sum is more than {tol} away from the right one{also}"
    off = ~_within(usable, key[entry], entry)
    for c in carried:
        off &= ~_within(usable, c, entry)
    if entry == "output":
        coords = [str(i + 1) for i in np.flatnonzero(off)] or ["some"]
        return (f"coordinate {' and '.join(coords)} of the output {'is' if len(coords) == 1 else 'are'} more than "
                f"{tol} away from the right one{also}")
    names = [token_name(example, i + 1) for i in np.flatnonzero(off)]
    names = names or ["some tokens"]
    which = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (f"{int(off.sum()) or 'some'} of {off.size} are more than {tol} away from the right ones{also}: "
            f"those of {which}")


# --- the mistakes, one step each ------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepMistake(Mistake):
    """A mistake made at one step of a sheet, recognised by what that step's entry then is."""

    step: str = ""
    """The entry it shows in (one of ENTRIES)."""
    wrong: Callable[[dict], object] | None = None
    """That entry with this mistake, from the earlier entries (the example's own answers, or the student's)."""
    right: tuple[str, ...] = ()
    """Earlier entries its hint says are right: it is named only when they are."""


def _ordinal(k: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(k, f"{k}th")


def _rounding_hint(example: WorkedExample) -> str:
    """What rounding the exponentials to 1 decimal does to this example's weights, in numbers."""
    trace = example.trace()
    rounded = np.round(trace.exponentials, 1)
    early = rounded / rounded.sum()
    j = int(np.argmax(np.abs(early - trace.weights)))
    was, now = f"{trace.weights[j]:.3f}", f"{early[j]:.3f}"
    start = (f"The exponentials were rounded to 1 decimal before the division ({rounded[j]:.1f} for "
             f"{trace.exponentials[j]:.2f}, the exponential of {token_name(example, j + 1)}). ")
    if was == now:
        return start + ("In this example the weights happen to keep their 3 decimals, but rounding that early "
                        "usually changes the third: keep 2 decimals or more until the last step.")
    decimal = next(i for i, (a, b) in enumerate(zip(was, now)) if a != b) - 1  # "0.782": index 2 is decimal 1
    return start + (f"Rounded that early, they change the {_ordinal(decimal)} decimal of the weights: {now} instead "
                    f"of {was} for {token_name(example, j + 1)}. Keep 2 decimals or more until the last step.")


_DECIMALS_HINT = ("These numbers are rounded to one decimal fewer than the step asks for. Keep the decimals asked "
                  "(2, and 3 for the weights): each step starts from the last one's numbers.")


class _Mistakes:
    """Collects an example's mistakes; `add` makes each one's prediction from the example's right answers."""

    def __init__(self, example: WorkedExample):
        self.example, self.key, self.found = example, answer_key(example), []

    def add(self, mistake_id: str, step: str, hint: str, wrong: Callable[[dict], object], right: tuple[str, ...] = ()):
        key = self.key

        def predict(*names):  # from the example's right answers; None where it cannot show in these numbers
            value = wrong(key)
            if value is None or _same_answer(step, np.asarray(value, dtype=np.float64), key[step]):
                return None
            return np.asarray(value, dtype=np.float64)

        self.found.append(StepMistake(mistake_id, hint, predict, step=step, wrong=wrong, right=right))


def _score_mistakes(m: _Mistakes) -> None:
    """Steps 2 and 3: the dot products and their scale."""
    q, K, d_k = m.example.query, m.example.keys, m.example.d_k
    root = int(round(np.sqrt(d_k)))
    m.add("dot_products_reversed", "dot_products",
          "Your dot products are the right numbers in the reverse order of the tokens. Keep the sentence's order: "
          "the first number is the query against the key of the first token.",
          lambda a: a["dot_products"][::-1])
    m.add("added_not_multiplied", "dot_products",
          "Each of your dot products adds the query's and the key's entries together. A dot product multiplies "
          "them entry by entry, then adds the products.",
          lambda a: (q[None, :] + K).sum(axis=1))  # (1, d_k) + (n, d_k) -> (n,)
    m.add("divided_by_d_k", "scaled_scores",
          f"You divided the dot products by d_k = {d_k}. The scale is 1/sqrt(d_k): divide by sqrt({d_k}) = {root}.",
          lambda a: a["dot_products"] / d_k)
    m.add("missing_scale", "scaled_scores",
          f"Your scaled scores are the dot products themselves: each is divided by sqrt(d_k) = {root}.",
          lambda a: a["dot_products"])
    m.add("multiplied_by_sqrt_d_k", "scaled_scores",
          f"You multiplied the dot products by sqrt(d_k) = {root}; the scores are divided by it.",
          lambda a: a["dot_products"] * root)
    # Each "rounded" prediction is made from the step's own inputs: made from the answer itself, it would call
    # any answer near a number of one decimal fewer (0.91 near 0.9) rounded.
    m.add("too_few_decimals", "scaled_scores", _DECIMALS_HINT, lambda a: np.round(a["dot_products"] / np.sqrt(d_k), 1))


def _softmax_mistakes(m: _Mistakes) -> None:
    """Step 4: the exponentials, their sum and the weights."""
    rounding = _rounding_hint(m.example)
    m.add("exp_rounded_too_early", "exponentials", rounding, lambda a: np.round(np.exp(a["scaled_scores"]), 1))
    m.add("exp_of_unscaled_scores", "exponentials",
          "Your scaled scores are right, but your exponentials are those of the dot products, before the scale: "
          "take e to the power of each scaled score.",
          lambda a: np.exp(a["dot_products"]), right=("scaled_scores",))
    m.add("powers_of_10", "exponentials",
          "Your exponentials are powers of 10. The softmax uses e = 2.718...: on a calculator, the e^x key, "
          "not 10^x.",
          lambda a: 10.0 ** a["scaled_scores"])
    m.add("sum_of_scores", "exp_sum",
          "Your sum adds up the scaled scores. The softmax divides by the sum of the exponentials.",
          lambda a: np.asarray(a["scaled_scores"].sum()))
    m.add("softmax_of_unscaled_scores", "weights",
          "Your scaled scores are right, but your weights are the softmax of the unscaled scores (the dot "
          "products): the softmax takes the scaled ones.",
          lambda a: softmax(a["dot_products"]), right=("scaled_scores",))
    m.add("weights_reversed", "weights",
          "Your weights sum to 1 but follow the keys' order reversed: the first weight belongs to the first token.",
          lambda a: (a["exponentials"] / a["exp_sum"])[::-1])
    m.add("exp_rounded_too_early", "weights", rounding,
          lambda a: np.round(np.exp(a["scaled_scores"]), 1) / np.round(np.exp(a["scaled_scores"]), 1).sum())
    m.add("weights_without_exponentials", "weights",
          "Your weights are the scaled scores divided by their sum, without the exponentials: the softmax divides "
          "each exponential by the sum of the exponentials (which makes every weight positive).",
          lambda a: a["scaled_scores"] / a["scaled_scores"].sum())
    m.add("weights_in_percent", "weights",
          "Your weights are percentages. Give each as a fraction of 1, to 3 decimals: the weights sum to 1.",
          lambda a: 100 * a["weights"])
    m.add("too_few_decimals", "weights", _DECIMALS_HINT, lambda a: np.round(a["exponentials"] / a["exp_sum"], 2))


def _output_mistakes(m: _Mistakes) -> None:
    """Step 5: the mix of the values."""
    K, V = m.example.keys, m.example.values
    m.add("mixed_the_keys", "output",
          f"Your output mixes the keys, not the values: the output is the weights times the value vectors "
          f"({V.shape[1]} numbers), added up.",
          lambda a: a["weights"] @ K)  # (n,) x (n, d_k) -> (d_k,)
    scores_hint = "Your output mixes the values with the scores, not with the weights: multiply each value by its weight."
    m.add("mixed_with_scores", "output", scores_hint, lambda a: a["scaled_scores"] @ V)  # (n,) x (n, d_v) -> (d_v,)
    m.add("mixed_with_scores", "output", scores_hint, lambda a: a["dot_products"] @ V)
    m.add("mixed_with_exponentials", "output",
          "Your output mixes the values with the exponentials: divide them by their sum first, which gives the "
          "weights, so that the output is an average of the values.",
          lambda a: a["exponentials"] @ V)
    m.add("value_of_largest_only", "output",
          "Your output is the value of the token with the largest weight alone. Attention mixes every value, each "
          "times its weight.",
          lambda a: V[int(np.argmax(a["weights"]))])
    m.add("too_few_decimals", "output", _DECIMALS_HINT, lambda a: np.round(a["weights"] @ V, 1))


def _question_mistakes(m: _Mistakes) -> None:
    """Questions 6 (the causal mask) and 7 (what the largest weight means)."""
    example, asked = m.example, questions(m.example)
    n, p = len(example.tokens), asked.masked_query
    last, top = token_name(example, n), token_name(example, largest(example))
    past = ("The causal mask hides the tokens that come after a query's own token, not those before it: a query may "
            "attend to its own token and to the earlier ones.")
    m.add("mask_hides_the_past", "masked", past, lambda a: np.arange(1, p, dtype=np.float64) if p > 1 else None)
    m.add("mask_hides_the_past", "masked", past, lambda a: np.arange(1, p + 1, dtype=np.float64))
    m.add("mask_hides_itself", "masked",
          "A query may attend to its own token: under the causal mask only the tokens after it get weight 0.",
          lambda a: np.arange(p, n + 1, dtype=np.float64))
    m.add("positions_from_zero", "masked",
          "Your positions look counted from 0. Count them from 1, as the table numbers the tokens.",
          lambda a: np.arange(p, n, dtype=np.float64))  # tokens p + 1 to n, counted from 0
    m.add("mask_hides_nothing", "masked",
          "Under a causal mask a query may not attend to the tokens after its own: their weights become 0.",
          lambda a: np.zeros(0))
    hints = {
        "most_important_word": (
            f"These weights are those of one query, the query of {last}: the query of another token gives other "
            f"weights. The largest weight says how much of the value of {top} the output of {last} takes."),
        "its_vector_changes": (
            f"Attention changes the vector of the token whose query it follows, {last}: its output, mostly the "
            f"value of {top}, is added to the vector of {last}. This query changes nothing of {top}."),
        "roles_swapped": (
            f"A score is the query of {last} against the key of each token: the query of {last} matches the key of "
            f"{top} best, not the other way round."),
    }
    for kind, hint in hints.items():
        number = float(asked.statements.index(kind) + 1)
        m.add(f"meaning_{kind}", "meaning", hint, lambda a, number=number: np.asarray(number))


def step_mistakes(example: WorkedExample) -> tuple[StepMistake, ...]:
    """Every mistake the check recognises on this example, step by step, the most specific first."""
    found = _Mistakes(example)
    for group in (_score_mistakes, _softmax_mistakes, _output_mistakes, _question_mistakes):
        group(found)
    return tuple(found.found)


def distinguishable(example: WorkedExample) -> bool:
    """Whether every recognised mistake shows in this example's numbers, each its own way.

    Each mistake's prediction differs from the right answer by more than
    twice its step's tolerance, no two mistakes of a step predict the same
    numbers, the four statements of question 7 differ (the largest weight is
    not the query's own token's), and the sentence names no token twice.
    """
    if len(set(example.tokens)) != len(example.tokens) or largest(example) == len(example.tokens):
        return False
    key = answer_key(example)
    seen: dict[str, list[tuple[str, np.ndarray]]] = {}
    for m in step_mistakes(example):
        value = m.wrong(key)
        if value is None:
            continue
        value = np.asarray(value, dtype=np.float64)
        if m.step in DECIMALS:
            right = np.asarray(key[m.step])
            if value.shape == right.shape and np.all(np.abs(value - right) <= 2 * _tolerance(m.step)):
                return False
            for other_id, other in seen.get(m.step, []):
                if other_id != m.id and other.shape == value.shape and np.all(
                        np.abs(other - value) <= 2 * _tolerance(m.step)):
                    return False
        seen.setdefault(m.step, []).append((m.id, value))
    return True


# --- the check ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepCase(Case):
    """One step of an answer sheet: its arguments are the entry names the sheet is read by."""

    step: str = ""
    """The entry judged here (one of ENTRIES)."""


def _compare(example: WorkedExample, mistakes: tuple[StepMistake, ...]):
    key = answer_key(example)

    def compare(case: StepCase, expected, got, predictions: dict) -> tuple[str, Mistake | None] | None:
        own = _sheet(got)
        if own is None:
            return f"expected the answer sheet, a dict of the steps' numbers; got {got}", None
        message = step_problem(example, case.step, own, key)
        if message is None:
            return None
        value = own[case.step]
        for position in sorted(predictions):
            mistake = mistakes[position]
            if mistake.step != case.step or any(step_problem(example, r, own, key) for r in mistake.right):
                continue
            try:  # the same mistake made on the student's own earlier answers
                mine = mistake.wrong(own_inputs(example, own))
            except (TypeError, ValueError, IndexError, ZeroDivisionError, AttributeError):  # an entry not usable
                mine = None
            if any(_same_answer(case.step, value, p) for p in (predictions[position], mine)):
                return message, mistake
        return message, None

    return compare


def _pass_note(example: WorkedExample):
    key = answer_key(example)

    def note(case: StepCase, expected, got) -> str:
        own = _sheet(got)
        return "" if own is None else carried_note(example, case.step, own, key)

    return note


def own_inputs(example: WorkedExample, own: dict) -> dict:
    """The student's earlier entries as arrays of their steps' shapes (None where unusable), for a mistake's rule."""
    return {e: _usable(example, e, own.get(e)) if e in DECIMALS else own.get(e) for e in ENTRIES}


def _expected_text(example: WorkedExample):
    n, d_v = len(example.tokens), example.values.shape[1]
    what = {
        "dot_products": f"{n} numbers, q·k for each token in order",
        "scaled_scores": f"{n} numbers, each dot product divided by sqrt(d_k) = {np.sqrt(example.d_k):g}",
        "exponentials": f"{n} numbers, e to the power of each scaled score",
        "exp_sum": "one number, the sum of the exponentials",
        "weights": f"{n} numbers, each exponential divided by their sum",
        "output": f"{d_v} numbers, the weights times the values, added up",
    }

    def text(case: StepCase, expected) -> str:
        if case.step == "masked":
            return "the positions (counted from 1) of the tokens whose weights become 0: the right ones are not shown"
        if case.step == "meaning":
            return f"the number of the right statement, 1 to {len(STATEMENTS)}: not shown"
        tol = f"{_tolerance(case.step):.{DECIMALS[case.step]}f}"
        since = f", or of what {_FROM[case.step]} give" if case.step in _FROM else ""
        return (f"{what[case.step]}, to {DECIMALS[case.step]} decimals: within {tol} of the right ones{since} "
                "(the right ones are not shown: this is your own example)")

    return text


def _sheet_text(case: StepCase, got) -> str:
    """The sheet as the check read it, each entry's numbers as a person writes them (`written`)."""
    own = _sheet(got)
    if own is None:
        return format_value(got)
    lines = ["your answers, as the check read them:"]
    for entry in ENTRIES:
        value = own[entry]
        if value is None:
            text = "(not answered)"
        elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            one = entry in ("exp_sum", "meaning") and value.size == 1  # one number (the engine reads it as [x])
            text = _as_read(value.reshape(()) if one else value)
        else:  # words: described
            text = format_value(value)
        lines.append(f"  {entry} = {text}")
    return "\n".join(lines)


def _sheet_wording(cases: tuple[Case, ...], found: list[results.CaseResult]) -> list[results.CaseResult]:
    """A missing `answers` told as an answer sheet, not as a function."""
    out = []
    for r in found:
        if r.status == results.CheckStatus.MISSING:
            r = dataclasses.replace(r, got="(no `answers`)", message="the notebook defines no `answers`",
                                    hint="Keep the answers cell: a dict named `answers`, with one entry per step.")
        out.append(r)
    return out


def worked_example_check(example: WorkedExample) -> Check:
    """The check of an answer sheet for `example`: one input per step (see the module docstring)."""
    key = answer_key(example)
    mistakes = step_mistakes(example)
    code = example_code(example)
    cases = [StepCase(LABELS[entry], ENTRIES, code=code, step=entry) for entry in ENTRIES]
    return Check(
        name="worked_example",
        function="answers",
        params=(),
        reference=lambda *names: tuple(key[e] for e in ENTRIES),
        make_cases=lambda rngs: cases,
        mistakes=mistakes,
        output_names=ENTRIES,
        compare=_compare(example, mistakes),
        pass_note=_pass_note(example),
        expected_text=_expected_text(example),
        got_text=_sheet_text,
        refine=_sheet_wording,
        dtype_graded=False,  # numbers written by hand: no dtype to keep
        every_failure_shown=True,  # each step is a question of its own: each wrong one is shown with its hint
    )


WORKED_EXAMPLE = worked_example_check(BANK_BOT)
"""The check of the bank-bot example: what a notebook made without a student id is graded with."""


# --- one notebook's check in the batch grader ---------------------------------------------------------------------

def recorded(metadata) -> tuple[str | None, WorkedExample | None, str | None]:
    """(student id, example, what could not be read) as a notebook's metadata records them."""
    entry = metadata.get("attention_course") if isinstance(metadata, dict) else None
    if not isinstance(entry, dict):
        return None, None, None
    student = entry.get("student") if isinstance(entry.get("student"), str) and entry.get("student").strip() else None
    if "example" not in entry:
        return student, None, None
    try:
        return student, example_from_dict(entry["example"], "the notebook's recorded example"), None
    except (TypeError, ValueError) as err:
        return student, None, str(err)


def checks_for(metadata: dict, student: str | None, secret: int | None) -> tuple[tuple[Check, ...], tuple[str, ...]]:
    """The checks of one notebook of this exercise, and what its feedback says about the example graded.

    With the roster's `student` id, their own example (drawn with `secret`),
    whatever the notebook records; a notebook made for another id, or whose
    numbers are not those drawn for this student here, is said to be so.
    Without one (a student's own check, no roster), the example the notebook
    records, else the bank-bot example.
    """
    mine, example, problem = recorded(metadata)
    notes = []
    if student is not None:
        drawn = example_for(student, secret)
        if mine is None:
            notes.append(f"this notebook records no student id: graded against the example drawn for {student!r}, "
                         "the roster's id")
        elif normalised_id(mine) != normalised_id(student):
            notes.append(f"this notebook was made for the student id {mine!r}, not {student!r} (the roster's): "
                         f"graded against the example drawn for {student!r}")
        elif example is not None and not same_example(example, drawn):
            notes.append(f"the numbers in this notebook are not those drawn for {student!r} in this assignment: "
                         "graded against the ones drawn for them")
        return (worked_example_check(drawn),), tuple(notes)
    if problem:
        notes.append(f"{problem}: graded against the bank-bot example")
    return ((WORKED_EXAMPLE if example is None else worked_example_check(example)),), tuple(notes)


# --- the notebook's check cell -----------------------------------------------------------------------------------

def check_worked_example(answers, example=None, *, hidden: bool = False) -> CheckResult:
    """Check the answers of exercise 00_worked_example (book/worked_example.ipynb), worked by hand.

    answers: a dict with one entry per step (`ENTRIES`): numbers, lists or
    numpy arrays, ints or floats alike. example: the notebook's `example`
    dict (tokens, query, keys, values); None for the bank-bot example. Each
    step is one input; `hidden` changes nothing (the example is the input).
    """
    check = WORKED_EXAMPLE if example is None else worked_example_check(example_from_dict(example))
    result = check_in_process(check, answers, hidden=hidden)
    if result.status == results.CheckStatus.NOT_ATTEMPTED:
        result = dataclasses.replace(result, message="not attempted yet: every entry of `answers` is still `...`. "
                                                     "Work the steps on paper, then write your numbers in.")
    return result


CHECKS = {c.name: c for c in (WORKED_EXAMPLE,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""

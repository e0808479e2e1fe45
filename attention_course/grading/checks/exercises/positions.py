"""Checks for exercise 9: rotary position embeddings, and attention with them.

The references are the package's `apply_rope` in its default convention (the
two halves of each vector, as Hugging Face's Llama), and
`scaled_dot_product_attention` of the rotated queries and keys. Every
recognised mistake is the package's `apply_rope` or that attention called with
one thing done wrong: the neighbouring pairs, frequencies with the wrong
exponent or an exponent rounded to 0, angles not multiplied by the positions, positions off by one,
ignored or matched with the wrong axis, cos and sin swapped, the position in the exponent, the
values rotated too, the base ignored, a causal mask added.
"""

from __future__ import annotations

import numpy as np

from ....chapters.worked_example import BANK_BOT
from ....core.attention import scaled_dot_product_attention
from ....core.positions import apply_rope
from ....core.softmax import softmax
from ..engine.calls import error_line
from ..engine.cases import Case, Rngs, generated, random_qkv
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_overflows
from ..engine.mistakes import Mistake
from ..engine.results import CheckResult
from .attention import reference as attention_reference
from .attention import DIVIDED_BY_D_K_HINT, MISSING_SCALE_HINT
from .softmax import NO_MAX_SUBTRACTION, naive_softmax

DEFAULT_BASE = 10000.0
"""RoFormer's and Llama 2's base: what a function that ignores its `base` argument uses."""


# ---- apply_rope(x, positions, base) ------------------------------------------------------------

def _base_ignored(x, positions, base):
    return None if base == DEFAULT_BASE else apply_rope(x, positions, DEFAULT_BASE)


def _positions_on_the_head_axis(x, positions, base):
    """What the angle table of shape (n, 1, d) does, as if x were (n, h, d): token axis and head axis swapped.

    NumPy broadcasts (n, 1, d) against x (..., h, n, d); where that works, the
    vector x[..., a, b, :] is turned by positions[a] instead of positions[b].
    """
    n = x.shape[-2]
    shape = np.broadcast_shapes(x.shape, (n, 1, x.shape[-1]))  # ValueError where the student's code fails too
    spread = np.broadcast_to(x, shape)  # (..., n, n', d) with the positions' axis third from the end
    return np.swapaxes(apply_rope(np.swapaxes(spread, -2, -3), positions, base), -2, -3)


ROPE_MISTAKES = (
    Mistake("interleaved_pairs",
            "Your pairs are neighbours, (0, 1), (2, 3), ...: the convention of RoFormer and GPT-J. This exercise "
            "uses the halves, as Llama in Hugging Face: coordinate i turns together with coordinate i + d/2.",
            lambda x, positions, base: apply_rope(x, positions, base, interleaved=True)),
    Mistake("wrong_frequency_exponent",
            "Check the frequencies. Pair i (i = 0, 1, ..., d/2 - 1) turns by base^(-2i/d) per position: "
            "the exponent runs from 0 towards -1 across the pairs (with d = 8: 0, -1/4, -1/2, -3/4).",
            lambda x, positions, base: apply_rope(x, positions, np.sqrt(base))),  # exponent -i/d
    Mistake("wrong_frequency_exponent",
            "Check the frequencies. Pair i (i = 0, 1, ..., d/2 - 1) turns by base^(-2i/d) per position: "
            "the exponent runs from 0 towards -1 across the pairs (with d = 8: 0, -1/4, -1/2, -3/4).",
            lambda x, positions, base: apply_rope(x, positions, base**2)),  # exponent -4i/d
    Mistake("integer_exponent",
            "Every pair turned at the same speed, 1 radian per position, as if each exponent -2i/d were 0: "
            "floor division (//) rounds 2i/d down to 0. Compute the exponent with true division (/).",
            lambda x, positions, base: apply_rope(x, positions, 1.0)),  # base^0 = 1 for every pair
    Mistake("positions_off_by_one",
            "Every token was turned as if it stood one position later (or earlier) than `positions` says. "
            "Use the positions exactly as given: a token at position 0 is not turned at all.",
            lambda x, positions, base: apply_rope(x, positions + 1, base)),
    Mistake("positions_off_by_one",
            "Every token was turned as if it stood one position later (or earlier) than `positions` says. "
            "Use the positions exactly as given: a token at position 0 is not turned at all.",
            lambda x, positions, base: apply_rope(x, positions - 1, base)),
    Mistake("angles_not_times_position",
            "Every token was turned by the same angles, the frequencies themselves. The angle of pair i for "
            "the token at position p is p × base^(-2i/d): multiply by each token's position.",
            lambda x, positions, base: apply_rope(x, np.ones_like(positions), base)),
    Mistake("positions_ignored",
            "The tokens were turned as if they stood at 0, 1, 2, ..., whatever `positions` said. A sequence "
            "that continues after 300 cached tokens starts at position 300: use the positions you are given.",
            lambda x, positions, base: apply_rope(x, np.arange(x.shape[-2]), base)),
    Mistake("rotates_backwards",
            "Each pair turned the wrong way. A pair (a, b) turned by the angle t becomes "
            "(a cos t - b sin t, b cos t + a sin t): check the two signs.",
            lambda x, positions, base: apply_rope(x, -positions, base)),
    Mistake("base_ignored",
            "These are the angles of base 10000, but this input has another base: use the `base` argument "
            "(rope_theta in a model's configuration), not a number written into the function.",
            _base_ignored),
    Mistake("positions_on_wrong_axis",
            "The positions were matched with the wrong axis of x. They belong to the tokens, the axis n of "
            "(..., n, d), the second to last; the axes before it (heads, batch) share them. Build the angle "
            "table with shape (n, d/2) or (n, d) and let it broadcast over the leading axes.",
            _positions_on_the_head_axis),
    Mistake("second_half_from_rotated_first",
            "The first half of each vector (columns 0 to d/2 - 1) is right and the second half is not: it was "
            "computed from the first half already turned. A pair (a, b) turned by t becomes (a cos t - b sin t, "
            "b cos t + a sin t), both from the a and b before the turn: keep the input's first half for the second "
            "line (write into a new array, not into the one you read from).",
            lambda x, positions, base: _second_half_from_rotated_first(x, positions, base)),
    Mistake("cos_and_sin_swapped",
            "cos and sin changed places: x * sin + rotate_half(x) * cos. A pair (a, b) turned by the angle t "
            "becomes (a cos t - b sin t, b cos t + a sin t): the vector itself goes with cos, so that angle 0 "
            "leaves it unchanged.",
            lambda x, positions, base: _cos_sin_swapped(x, positions, base)),
    Mistake("position_times_exponent",
            "The angle of pair i must be position * base^(-2i/d): the frequency base^(-2i/d) is computed first, "
            "then multiplied by the position. Here the position went into the exponent instead.",
            lambda x, positions, base: _position_in_exponent(x, positions, base)),
)


def _halves_rotated(x, angles):
    """x (..., n, d) with pair (i, i + d/2) turned by angles (..., n, d/2), as apply_rope does."""
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    cos, sin = np.cos(angles), np.sin(angles)
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def _cos_sin_swapped(x, positions, base):
    half = x.shape[-1] // 2
    angles = np.asarray(positions)[:, None] * base ** (-2 * np.arange(half) / x.shape[-1])  # (n, d/2)
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.sin(angles) - b * np.cos(angles), b * np.sin(angles) + a * np.cos(angles)], axis=-1)


def _second_half_from_rotated_first(x, positions, base):
    """The first half turned, then the second half computed from the turned first half (written in place)."""
    half = x.shape[-1] // 2
    angles = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2 * np.arange(half) / x.shape[-1])  # (n, d/2)
    a, b = x[..., :half], x[..., half:]
    turned = a * np.cos(angles) - b * np.sin(angles)
    return np.concatenate([turned, b * np.cos(angles) + turned * np.sin(angles)], axis=-1)


def _position_in_exponent(x, positions, base):
    half = x.shape[-1] // 2
    pos = np.asarray(positions, dtype=np.float64)[:, None]  # (n, 1)
    return _halves_rotated(x, base ** (-2 * np.arange(half) * pos / x.shape[-1]))


def _rope_cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (positions from 0 and from an offset, heads and a batch in front, another
    base, one token, float32 kept, positions out of order or with gaps, d = 2, float64's digits), then hidden
    inputs that vary the values."""
    rng = rngs(9)

    def x(*shape, dtype=np.float64):
        return rng.standard_normal(shape).astype(dtype)

    def pos(*values):
        return np.array(values, dtype=np.int64)

    return [
        Case("the bank bot's four keys at positions 0..3", (BANK_BOT.keys.copy(), pos(0, 1, 2, 3), 10000.0)),
        generated("two heads, five tokens from position 3, d = 8", (
            "rng = np.random.default_rng(91)\n"
            "x = rng.standard_normal((2, 5, 8))\n"
            "positions = np.arange(3, 8)\n"
            "base = 10000.0"), ("x", "positions", "base"), rngs),
        generated("six tokens from position 10, d = 16, base 500000 (Llama 3)", (
            "rng = np.random.default_rng(92)\n"
            "x = rng.standard_normal((6, 16))\n"
            "positions = np.arange(10, 16)\n"
            "base = 500000.0"), ("x", "positions", "base"), rngs),
        Case("three heads, one new token at position 300", (x(3, 1, 8), pos(300), 10000.0)),
        generated("a batch of 2 x 3 heads, four tokens from position 17, d = 6", (
            "rng = np.random.default_rng(93)\n"
            "x = rng.standard_normal((2, 3, 4, 6))\n"
            "positions = np.arange(17, 21)\n"
            "base = 10000.0"), ("x", "positions", "base"), rngs),
        Case("float32, three tokens from position 20, d = 4, base 1000000", (x(3, 4, dtype=np.float32), pos(20, 21, 22), 1e6)),
        Case("three heads of three tokens at positions 5, 9, 2, base 500", (x(3, 3, 4), pos(5, 9, 2), 500.0)),
        Case("one head, tokens at the even positions 0..6, d = 6", (x(1, 4, 6), pos(0, 2, 4, 6), 10000.0)),
        Case("d = 2: one pair, four tokens from position 1000", (x(4, 2), pos(1000, 1001, 1002, 1003), 10000.0)),
        Case("two heads, one new token at position 517", (x(2, 1, 6), pos(517), 10000.0), hidden=True),
        Case("a batch of 3 x 2 heads, three tokens from position 40, d = 4",
             (x(3, 2, 3, 4), pos(40, 41, 42), 10000.0), hidden=True),
        Case("float32, seven tokens from position 20, d = 12, base 1000000",
             (x(7, 12, dtype=np.float32), pos(*range(20, 27)), 1e6), hidden=True),
        Case("two heads of four tokens at positions 8, 1, 30, 2, base 2000", (x(2, 4, 4), pos(8, 1, 30, 2), 2000.0),
             hidden=True),
        Case("one head, tokens at the even positions 0..8, d = 10", (x(1, 5, 10), pos(0, 2, 4, 6, 8), 10000.0),
             hidden=True),
        Case("d = 2: one pair, three tokens from position 7000", (x(3, 2), pos(7000, 7001, 7002), 10000.0),
             hidden=True),
    ] + _assumption_cases_rope(rngs)


def _assumption_cases_rope(rngs: Rngs) -> list[Case]:
    """Inputs that break what a rotation could silently assume."""
    rng = rngs(91)
    # float64 kept: angles near 1 000 000 radians; in float32 (steps of 0.0625) cos and sin are far off. Their last
    # digits depend on how the angle is formed (10**6 times a frequency), so they are compared to 6 digits.
    return [
        Case("float64 precision: positions near 1 000 000", (rng.standard_normal((3, 4)),
             np.arange(1_000_000, 1_000_003, dtype=np.int64), 10000.0), precision=(1e-6, 1e-8)),
        # a base that is not a whole number: read as one (int(base)), it gives other frequencies.
        Case("a base that is not a whole number: 2.5, two tokens at positions 3 and 9, d = 4",
             (np.array([[1.0, 0.5, -0.3, 2.0], [0.2, -1.0, 0.7, 0.4]]), np.array([3, 9], dtype=np.int64), 2.5)),
        Case("float64 precision: positions near 2 000 000", (rng.standard_normal((2, 6)),
             np.arange(2_000_000, 2_000_002, dtype=np.int64), 10000.0), precision=(1e-6, 1e-8), hidden=True),
    ]


def _fixed_axis_hint(line: str) -> str:
    """A hint for a failing line that names axis 0 or 1 (or uses .T) where x may have axes before (n, d)."""
    if ".T" in line:
        return (f"The line that failed, `{line}`, uses `.T`, which reverses ALL the axes of an array with heads or "
                "a batch in front. Swap only the last two: np.swapaxes(k, -1, -2).")
    named = next((a for a in ("axis=0", "axis=1", "axis = 0", "axis = 1") if a in line), None)
    if named:
        return (f"The line that failed, `{line}`, names `{named}`. The arrays are (..., n, d) and may have axes "
                "before n (heads, a batch): count from the end, d is axis -1 and n is axis -2.")
    return ""


def _rope_error_hint(case: Case, error: str, code: Code) -> str:
    fixed = _fixed_axis_hint(error_line(error))
    if fixed:
        return fixed
    if "broadcast" in error:
        line = error_line(error)
        where = f"The line that failed, `{line}`, combines" if line else "One operation combined"
        return (f"{where} two arrays whose shapes do not fit. If one of them is the angle table, it belongs to "
                "the token axis n of x (..., n, d), the second to last, whatever axes come before it.")
    if "index" in error or "shape" in error:
        return "Compare the shapes you slice and build with x's (..., n, d): print them for this input."
    return ""


APPLY_ROPE = Check(
    name="apply_rope",
    function="apply_rope",
    params=("x", "positions", "base"),
    reference=lambda x, positions, base: apply_rope(x, positions, base),
    sizes=Sizes({"x": ("n", "d"), "positions": ("n",)}),
    make_cases=_rope_cases,
    mistakes=ROPE_MISTAKES,
    error_hint=_rope_error_hint,
)


def check_apply_rope(apply_rope, *, hidden: bool = False) -> CheckResult:
    """Check `apply_rope(x, positions, base) -> (..., n, d)`: x (..., n, d), positions (n,) integers.

    The half rotation (pair i with i + d/2), as Hugging Face's Llama; float32
    stays float32. The exercise 09_rope (book/positions.ipynb).
    """
    return check_in_process(APPLY_ROPE, apply_rope, hidden=hidden)


# ---- rope_attention(q, k, v, positions, base) ---------------------------------------------------

def _rotated(q, k, positions, base):
    return apply_rope(q, positions, base), apply_rope(k, positions, base)


def _rope_attention(q, k, v, positions, base, scale=None):
    q_rot, k_rot = _rotated(q, k, positions, base)
    return scaled_dot_product_attention(q_rot, k_rot, v, scale=scale)  # (..., n, d_v)


ONE_SIDE_HINT = (
    "Only one of the queries and the keys was rotated. The score of a query at m and a key at n depends on "
    "m - n only when both are turned, each by its own position."
)

def _no_max_subtraction(q, k, v, positions, base):
    """RoPE attention with exp taken of the scores themselves: inf / inf = nan where a score passes exp's limit."""
    q_rot, k_rot = _rotated(q, k, positions, base)
    scores = q_rot @ np.swapaxes(k_rot, -1, -2) / np.sqrt(q.shape[-1])  # (..., n, d) x (..., d, n) -> (..., n, n)
    with np.errstate(all="ignore"):
        return naive_softmax(scores) @ v  # (..., n, n) x (..., n, d_v) -> (..., n, d_v)


ATTENTION_MISTAKES = (
    Mistake(NO_MAX_SUBTRACTION.id, NO_MAX_SUBTRACTION.hint, _no_max_subtraction,
            premise=exp_overflows(lambda case: _rope_softmax_scores(case))),
    Mistake("values_rotated",
            "The values were rotated too. RoPE turns the queries and the keys, so that their dot product, the "
            "score, depends on the distance between the tokens; the values are mixed as they are.",
            lambda q, k, v, positions, base: _rope_attention(q, k, apply_rope(v, positions, base), positions, base)),
    Mistake("one_side_rotated", ONE_SIDE_HINT,
            lambda q, k, v, positions, base: scaled_dot_product_attention(apply_rope(q, positions, base), k, v)),
    Mistake("one_side_rotated", ONE_SIDE_HINT,
            lambda q, k, v, positions, base: scaled_dot_product_attention(q, apply_rope(k, positions, base), v)),
    Mistake("not_rotated",
            "Nothing was rotated: this is attention without positions. Turn the queries and the keys with your "
            "apply_rope before the scores are computed.",
            lambda q, k, v, positions, base: scaled_dot_product_attention(q, k, v)),
    Mistake("missing_scale", MISSING_SCALE_HINT,
            lambda q, k, v, positions, base: _rope_attention(q, k, v, positions, base, scale=1.0)),
    Mistake("divided_by_d_k", DIVIDED_BY_D_K_HINT,
            lambda q, k, v, positions, base: _rope_attention(q, k, v, positions, base, scale=1 / q.shape[-1])),
    Mistake("scaled_by_d_v",
            "The scores were divided by the square root of d_v, the size of a value; the scale is 1/sqrt(d), "
            "the size of the query and key vectors whose dot product makes a score.",
            lambda q, k, v, positions, base: _rope_attention(q, k, v, positions, base, scale=1 / np.sqrt(v.shape[-1]))
            if v.shape[-1] != q.shape[-1] else None),
    Mistake("positions_ignored",
            "The queries and keys were turned as if they stood at 0, 1, 2, ..., whatever `positions` said. "
            "Where the positions follow each other that changes nothing (a score depends only on the distance "
            "between two tokens), but here they have gaps: pass the positions on to apply_rope.",
            lambda q, k, v, positions, base: None if np.array_equal(positions, np.arange(len(positions)))
            else _rope_attention(q, k, v, np.arange(len(positions)), base)),
    Mistake("base_ignored",
            "These are the angles of base 10000, but this input has another base: pass `base` on to apply_rope.",
            lambda q, k, v, positions, base: None if base == DEFAULT_BASE else _rope_attention(q, k, v, positions, DEFAULT_BASE)),
    Mistake("causal_mask_added",
            "A causal mask was applied, but this function asks for attention over every key (no mask): each "
            "query attends to all n tokens.",
            lambda q, k, v, positions, base: scaled_dot_product_attention(*_rotated(q, k, positions, base), v, is_causal=True)),
)


def _attention_cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (positions from 0, heads, an offset, gaps, one token, float32 kept,
    d_v != d, another base), then hidden inputs that vary the values."""
    rng = rngs(10)

    def qkv(batch, n, d, d_v, dtype=np.float64):
        return random_qkv(rng, n, n, d, d_v, batch=batch, dtype=dtype)

    def pos(start, n):
        return np.arange(start, start + n, dtype=np.int64)

    return [
        Case("four tokens at positions 0..3, d = 4", (*qkv((), 4, 4, 4), pos(0, 4), 10000.0)),
        generated("two heads, six tokens from position 10, d = 8", (
            "rng = np.random.default_rng(101)\n"
            "q, k, v = (rng.standard_normal((2, 6, 8)) for _ in range(3))\n"
            "positions = np.arange(10, 16)\n"
            "base = 10000.0"), ("q", "k", "v", "positions", "base"), rngs),
        generated("four tokens at positions 0, 3, 4, 9 (with gaps), d = 4", (
            "rng = np.random.default_rng(102)\n"
            "q, k, v = (rng.standard_normal((4, 4)) for _ in range(3))\n"
            "positions = np.array([0, 3, 4, 9])\n"
            "base = 10000.0"), ("q", "k", "v", "positions", "base"), rngs),
        Case("two heads, one token at position 300", (*qkv((2,), 1, 4, 4), pos(300, 1), 10000.0)),
        Case("float32, three tokens from position 7, d = 4", (*qkv((), 3, 4, 4, np.float32), pos(7, 3), 10000.0)),
        Case("values of width 3, three tokens from position 2, d = 4", (*qkv((), 3, 4, 3), pos(2, 3), 10000.0)),
        Case("three heads, one token at position 300", (*qkv((3,), 1, 8, 8), pos(300, 1), 10000.0), hidden=True),
        Case("float32, five tokens from position 7, d = 6", (*qkv((), 5, 6, 6, np.float32), pos(7, 5), 10000.0),
             hidden=True),
        Case("two heads, values of width 5, four tokens from position 2", (*qkv((2,), 4, 8, 5), pos(2, 4), 10000.0),
             hidden=True),
        Case("seven tokens from position 100, d = 16, base 1000000", (*qkv((), 7, 16, 16), pos(100, 7), 1e6),
             hidden=True),
        Case("five tokens at positions 1, 4, 5, 11, 12 (with gaps), d = 6",
             (*qkv((), 5, 6, 6), np.array([1, 4, 5, 11, 12]), 10000.0), hidden=True),
    ] + _large_scores(rngs) + _assumption_cases_rope_attention(rngs)


def _large_scores(rngs: Rngs) -> list[Case]:
    """Scores far beyond exp's limit (about 709): a softmax without its max subtracted overflows. (Drawn from their
    own generators, so that the other inputs keep their values.)"""
    visible, hidden = rngs(93), rngs(94)
    return [Case("large scores, three tokens from position 0, d = 4",
                 (*random_qkv(visible, 3, 3, 4, 4, scale=60.0), np.arange(3, dtype=np.int64), 10000.0)),
            Case("large scores, five tokens from position 4, d = 4",
                 (*random_qkv(hidden, 5, 5, 4, 3, scale=60.0), np.arange(4, 9, dtype=np.int64), 10000.0), hidden=True)]


def _rope_softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(the rotated queries' scaled scores against the rotated keys, -1): what `Check.scores` reads to tell a
    saturated input."""
    q, k = _rotated(*(np.asarray(a, dtype=np.float64) for a in case.args[:2]), case.args[3], case.args[4])
    return q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), -1  # (..., n, d) x (..., d, n) -> (..., n, n)


def _assumption_cases_rope_attention(rngs: Rngs) -> list[Case]:
    """The base used: every other visible input has base 10000."""
    rng = rngs(92)
    return [Case("three tokens from position 0, d = 4, base 100",
                 (*random_qkv(rng, 3, 3, 4, 4), np.arange(3, dtype=np.int64), 100.0)),
            Case("four tokens from position 5, d = 4, base 300",
                 (*random_qkv(rng, 4, 4, 4, 2), np.arange(5, 9, dtype=np.int64), 300.0), hidden=True)]


ROPE_ATTENTION = Check(
    name="rope_attention",
    helpers={"apply_rope": apply_rope, "softmax": softmax, "attention": attention_reference},
    function="rope_attention",
    params=("q", "k", "v", "positions", "base"),
    reference=_rope_attention,
    sizes=Sizes({"q": ("n", "d"), "k": ("n", "d"), "v": ("n", "d_v"), "positions": ("n",)}),
    make_cases=_attention_cases,
    scores=_rope_softmax_scores,
    mistakes=ATTENTION_MISTAKES,
    error_hint=lambda case, error, code: _fixed_axis_hint(error_line(error)),
)


def check_rope_attention(rope_attention, *, hidden: bool = False) -> CheckResult:
    """Check `rope_attention(q, k, v, positions, base) -> (..., n, d_v)`.

    Attention of the queries and keys rotated by `apply_rope` (the values as
    they are), scaled by 1/sqrt(d). The exercise 09_rope (book/positions.ipynb).
    """
    return check_in_process(ROPE_ATTENTION, rope_attention, hidden=hidden)


CHECKS = {c.name: c for c in (APPLY_ROPE, ROPE_ATTENTION)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""

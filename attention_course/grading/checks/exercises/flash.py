"""Check for exercise 8: tiled attention with an online softmax.

Right numbers are not enough here: one input is large enough that the n x n
score matrix would take megabytes, and the call's peak memory is measured
(tracemalloc). A version that builds the whole matrix is told so, with the
numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ....core.softmax import softmax
from ....tiled.flash import flash_attention
from ..engine.cases import Case, Rngs, generated, random_qkv
from ..engine.check import Check
from ..engine.code import Code
from ..engine.run import check_in_process
from ..engine.shrink import Sizes
from ..engine.premises import exp_limits, exp_overflows, line_below_underflow
from ..engine.mistakes import Lead, Mistake, Premise, compose
from ..engine.results import CaseResult, CheckResult, CheckStatus

MEMORY_FRACTION = 0.25
"""The peak memory of the measured call must stay under this fraction of the
n_q x n_k float64 score matrix (a tiled loop needs a few tiles of it)."""

BUILDS_FULL_MATRIX = Mistake(
    "builds_full_matrix",
    "The numbers are right, but the call's peak memory was a large part of the n x n score matrix: if the "
    "function builds the whole score matrix (or something as large), that is why. Visit the keys one tile "
    "at a time and keep, for each query, only a running max, a running sum and a running weighted sum of values.",
)
NO_RESCALE_HINT = (
    "When a new tile raises a query's running max from m to m', what was accumulated so far (the running sum "
    "and the weighted values) was computed relative to m: multiply it by exp(m - m') before adding the new tile."
)
DROPS_LAST_TILE_HINT = (
    "The last tile is shorter than block_size when block_size does not divide the number of tokens, and "
    "it must be visited too (for queries and for keys): this loop stopped before it."
)
RUNNING_MAX_AT_ZERO_HINT = (
    "Every score of some query is very negative here, and that query came back as nan: these are the numbers a "
    "loop gives whose running max starts at 0 instead of -inf (exp(score - 0) underflows to 0 for every key, and "
    "0/0 is nan)."
)
RUNNING_MAX_AT_ZERO_LEADS = (
    # What the code may do is said only as it can be: a loop that writes no infinity cannot start its max at -inf;
    # one that does may still start it, or hold it, above the scores.
    Lead("finite_start", "Your code writes no -inf: if its running max starts at a finite number (0, or any number "
         "above such scores), start it at -inf, so that the first tile's own max is subtracted.",
         lambda case, code: code.known and not code.infinity),
    Lead("max_held_above", "If the running max can start, or be kept, above a query's scores (a start at 0, a "
         "maximum taken with 0), that is the difference: it must start at -inf and follow the scores alone.",
         lambda case, code: not (code.known and not code.infinity)),
)
NO_RUNNING_MAX_HINT = (
    "exp overflowed on large scores: these are the numbers a loop gives that adds up exp(score) with no running "
    "maximum. Keep a running maximum of the scores seen so far for each query and subtract it before exp, as "
    "the stable softmax does."
)


def _loop(Q, K, V, b, *, m0=-np.inf, use_max=True, rescale_sum=True, rescale_values=True, full_tiles_only=False,
          overlap=0, divide=True, tile_max=False, sum_all=False, flipped=False):
    """The tiled loop with an online softmax, with one part changed (all defaults: right).

    `tile_max`: one running max for the whole tile of queries; `sum_all`: one running sum for the whole tile;
    `flipped`: the rescaling factor exp(m' - m) instead of exp(m - m').
    """
    n_q, n_k = Q.shape[0], K.shape[0]
    stop_q = n_q // b * b if full_tiles_only else n_q
    stop_k = n_k // b * b if full_tiles_only else n_k
    out = np.zeros((n_q, V.shape[1]))  # queries of a dropped tile keep their zeros
    for i in range(0, stop_q, b):
        q = Q[i:i + b] / np.sqrt(Q.shape[1])  # (bq, d_k)
        rows = 1 if tile_max else len(q)
        m = np.full((rows, 1), m0)
        l = np.zeros((1 if sum_all else len(q), 1))
        acc = np.zeros((len(q), V.shape[1]))
        for j in range(0, stop_k, b):
            keys = slice(j, j + b + overlap)
            s = q @ K[keys].T  # (bq, d_k) x (d_k, bk) -> (bq, bk)
            tile = s.max(keepdims=True).reshape(1, 1) if tile_max else s.max(axis=1, keepdims=True)
            m_new = np.maximum(m, tile) if use_max else m
            p = np.exp(s - m_new)
            alpha = (np.exp(m_new - m) if flipped else np.exp(m - m_new)) if use_max else 1.0
            l = (alpha if rescale_sum else 1.0) * l + (p.sum(keepdims=True).reshape(1, 1) if sum_all
                                                       else p.sum(axis=1, keepdims=True))
            acc = (alpha if rescale_values else 1.0) * acc + p @ V[keys]  # (bq, bk) x (bk, d_v)
            m = m_new
        out[i:i + b] = acc / l if divide else acc
    return out


def _far_below_its_tile(case: Case) -> bool:
    """Some query's scores all lie so far below its query tile's largest score that exp of them, shifted by it,
    underflows to 0, and a loop with one running max per tile of queries gives nan there."""
    Q, K, V, b = case.args[:4]
    scores = np.asarray(_softmax_scores(case)[0], dtype=np.float64)  # (n_q, n_k)
    tops = scores.max(axis=1)
    tile_tops = np.array([tops[i // b * b: i // b * b + b].max() for i in range(len(tops))])
    if not np.any(tops < tile_tops - exp_limits(case)[1]):
        return False
    with np.errstate(all="ignore"):
        return bool(np.isnan(_loop(Q, K, V, b, tile_max=True)).any())


LARGE_SCORES = exp_overflows(lambda case: _softmax_scores(case))
"""What the hint of a loop with no running max says of its input: some score lies above exp's limit."""
QUERY_BELOW_UNDERFLOW = line_below_underflow(lambda case: _softmax_scores(case))
"""What the hint of a running max started at 0 says: every score of some query lies below exp's underflow."""


def _only_if(condition, predict):
    """A prediction that applies only to inputs where `condition(Q, K, V, b)` holds."""
    return lambda Q, K, V, b: predict(Q, K, V, b) if condition(Q, K, V, b) else None


def _reference(Q, K, V, block_size):
    """flash_attention's readable loop: the same numbers as the compiled one, with no compiler to wait for."""
    return flash_attention(Q, K, V, block_size=block_size, backend="numpy")


def _cases(rngs: Rngs) -> list[Case]:
    """Every property on a visible input (several tiles, a short last tile, one tile, n_q != n_k, large and very
    negative scores, a running max that rises, blocks of 1, float32 kept, one query, n_q > n_k, the memory
    budget), then hidden inputs that vary the values."""
    rng = rngs(8)

    def qkv(n_q, n_k, d_k, d_v, b, scale=1.0, dtype=np.float64):
        return (*random_qkv(rng, n_q, n_k, d_k, d_v, scale=scale, dtype=dtype), b)

    return [
        Case("8 tokens, blocks of 4", qkv(8, 8, 4, 3, 4)),
        Case("10 tokens, blocks of 4 (the last tile is shorter)", qkv(10, 10, 4, 3, 4)),
        Case("one tile holds everything: 6 tokens, blocks of 8", qkv(6, 6, 4, 2, 8)),
        Case("6 queries, 11 keys, blocks of 4", qkv(6, 11, 4, 2, 4)),
        Case("large scores, 7 tokens, blocks of 3", qkv(7, 7, 4, 2, 3, scale=30.0)),
        generated("very negative scores: every score of a query below -1000, 6 tokens, blocks of 4", (
            "rng = np.random.default_rng(81)\n"
            "Q = -30 * np.abs(rng.standard_normal((6, 4))) - 10  # every entry negative\n"
            "K = 30 * np.abs(rng.standard_normal((6, 4))) + 10  # every entry positive\n"
            "V = rng.standard_normal((6, 2))\n"
            "block_size = 4"), ("Q", "K", "V", "block_size"), rngs),
        generated("very negative scores, alike for every query: all near -3200, 6 tokens, blocks of 4", (
            "rng = np.random.default_rng(84)\n"
            "Q = -40 + 0.1 * rng.standard_normal((6, 4))\n"
            "K = 40 + 0.1 * rng.standard_normal((6, 4))\n"
            "V = rng.standard_normal((6, 2))\n"
            "block_size = 4"), ("Q", "K", "V", "block_size"), rngs),
        generated("scores that grow from tile to tile: 8 queries, 12 keys, blocks of 4", (
            "rng = np.random.default_rng(85)\n"
            "Q = np.abs(rng.standard_normal((8, 4)))\n"
            "K = np.abs(rng.standard_normal((12, 4))) * np.arange(1, 13)[:, None] / 4  # later keys score higher\n"
            "V = rng.standard_normal((12, 2))\n"
            "block_size = 4"), ("Q", "K", "V", "block_size"), rngs),
        Case("blocks of 1", qkv(5, 5, 3, 2, 1)),
        Case("float32, 5 tokens, blocks of 2", qkv(5, 5, 2, 2, 2, dtype=np.float32)),
        Case("one query, 5 keys, blocks of 2", qkv(1, 5, 2, 2, 2)),
        generated("768 tokens, blocks of 32", (
            "rng = np.random.default_rng(82)\n"
            "Q, K, V = (rng.standard_normal((768, 8)) for _ in range(3))\n"
            "block_size = 32"), ("Q", "K", "V", "block_size"), rngs, measure_memory=True,
            note="the peak memory of this call is measured"),
        Case("scores that grow from tile to tile, 9 keys", _rising(rng), hidden=True),
        Case("blocks of 1, 4 tokens", qkv(4, 4, 3, 3, 1), hidden=True),
        Case("float32, 9 tokens, blocks of 4", qkv(9, 9, 4, 3, 4, dtype=np.float32), hidden=True),
        Case("one query, 9 keys, blocks of 2", qkv(1, 9, 4, 2, 2), hidden=True),
        Case("large scores, 9 tokens, blocks of 4", qkv(9, 9, 4, 2, 4, scale=30.0), hidden=True),
        Case("9 tokens, blocks of 3", qkv(9, 9, 5, 3, 3), hidden=True),
    ] + _assumption_cases_flash(rngs)


def _rising(rng) -> tuple:
    """6 queries and 9 keys whose scores grow from tile to tile (blocks of 3): the running max rises every tile."""
    Q = np.abs(rng.standard_normal((6, 4)))
    K = np.abs(rng.standard_normal((9, 4))) * np.arange(1, 10)[:, None] / 3
    return Q, K, rng.standard_normal((9, 3)), 3


def _assumption_cases_flash(rngs: Rngs) -> list[Case]:
    """Inputs that break what a tiled loop could silently assume (block divides n, n_q < n_k, d_v = d_k, some
    score >= 0 are above)."""
    rng = rngs(83)
    return [
        # n_q > n_k: more query tiles than key tiles.
        Case("5 queries, 3 keys, blocks of 2", (*random_qkv(rng, 5, 3, 2, 2), 2)),
        Case("11 queries, 5 keys, blocks of 4", (*random_qkv(rng, 11, 5, 4, 3), 4), hidden=True),
    ]


def _memory(case: Case, obs) -> tuple[str, Mistake] | None:
    """Fail a right answer whose peak memory grows like the n x n score matrix."""
    if not case.measure_memory:
        return None
    n_q, n_k = case.args[0].shape[0], case.args[1].shape[0]
    matrix = n_q * n_k * 8
    if obs.peak_bytes is None:
        return "its memory could not be measured", BUILDS_FULL_MATRIX
    if obs.peak_bytes > MEMORY_FRACTION * matrix:
        return (
            f"right values, but the call's peak memory was {obs.peak_bytes / 1e6:.1f} MB; the {n_q} x {n_k} "
            f"score matrix alone takes {matrix / 1e6:.1f} MB, and a tiled version needs under "
            f"{MEMORY_FRACTION * matrix / 1e6:.1f} MB",
            BUILDS_FULL_MATRIX,
        )
    return None


def _specific(case: Case, expected, got, code: Code) -> Mistake | None:
    """nan or inf that no prediction explains: what was observed, and the possibilities this input allows."""
    if isinstance(got, np.ndarray) and got.dtype.kind == "f" and got.shape == expected.shape and not np.isfinite(got).all():
        Q, K = (np.asarray(a, dtype=np.float64) for a in case.args[:2])
        b = case.args[3]
        scores = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, n_k), to describe the input
        row = int(np.argwhere(~np.isfinite(got))[0][0])
        top, bottom = float(scores[row].max()), float(scores[row].min())
        tile = slice(row // b * b, row // b * b + b)  # the query tile of this row
        below = top < float(scores[tile].max()) - 745
        return Mistake(
            "not_finite",
            f"Query {row} came back with nan or inf; its scores run from {bottom:.4g} to {top:.4g}.",
            leads=(
                Lead("overflow", "If exp was taken of scores above about 709 without subtracting a running max, it "
                     "overflowed to inf.", lambda case, code, t=top: t > 709),
                Lead("max_at_zero", "If the running max started at 0, exp(score - 0) underflowed to 0 for every key "
                     "of this query (all its scores are below about -745), and 0/0 is nan.",
                     lambda case, code, t=top: t < -745),
                Lead("tile_max", "If one running max was kept for the whole tile of queries, this query's scores lie "
                     "more than 745 below it, so exp underflowed to 0 for every key, and 0/0 is nan.",
                     lambda case, code, f=below: f),
            ),
            facts=(("row", row), ("scores", (bottom, top))),
        )
    return None


def _tiles(case: Case) -> tuple[bool, bool]:
    """(several tiles?, does block_size divide both n_q and n_k?)"""
    Q, K, _, b = case.args
    n_q, n_k = Q.shape[0], K.shape[0]
    return n_k > b, n_q % b == 0 and n_k % b == 0


def _max_rises(case: Case) -> bool:
    """True if some query's running max rises after the first key tile on this input (rescaling then matters)."""
    Q, K, _, b = case.args
    scores = np.asarray(Q, dtype=np.float64) @ np.asarray(K, dtype=np.float64).T  # (n_q, n_k), unscaled: same order
    return bool(np.any(scores[:, b:].max(axis=1, initial=-np.inf) > scores[:, :b].max(axis=1)))


SEVERAL_TILES_WRONG = Mistake(
    "several_tiles_wrong",
    "Right on the inputs where one tile holds every key, wrong on this one, which has several key tiles.",
    leads=(
        Lead("no_rescale", "If your loop does not multiply what it accumulated by exp(m - m') when a tile raises "
             "the running max from m to m' (it does on this input), that is the difference.",
             lambda case, code: _max_rises(case)),
        Lead("tiles_skipped", "If it skips some tiles or counts some keys twice, so is that.", lambda case, code: True),
    ),
)
SHORT_TILE_WRONG = Mistake(
    "short_tile_wrong",
    "Right on the inputs where block_size divides the number of tokens, wrong on this one, where it does "
    "not: the last tile is shorter than block_size.",
    leads=(Lead("short_tile", "If your loop stops before that tile or assumes every tile has block_size rows, that "
                "is the difference.", lambda case, code: True),),
)


def _refine(cases: tuple[Case, ...], results: list[CaseResult]) -> list[CaseResult]:
    """Say which inputs pass and which do not when no prediction named the mistake, when that separates them: a
    kind of input named as where the function goes wrong has none of its inputs passing (a short last tile), or
    none where the tiles matter (several key tiles, the running max rising on a later one)."""
    single_ok = any(r.passed for c, r in zip(cases, results) if not _tiles(c)[0])
    dividing_multi_ok = any(r.passed for c, r in zip(cases, results) if _tiles(c) == (True, True))
    short_ok = any(r.passed for c, r in zip(cases, results) if _tiles(c) == (True, False))
    rising_ok = any(r.passed for c, r in zip(cases, results) if _tiles(c)[0] and _max_rises(c))
    refined = []
    for case, result in zip(cases, results):
        several, divides = _tiles(case)
        if result.status == CheckStatus.FAILED and result.mistake is None and several and single_ok:
            if dividing_multi_ok and not divides and not short_ok:
                guess = SHORT_TILE_WRONG
            elif not rising_ok:
                guess = SEVERAL_TILES_WRONG
            else:  # some inputs of this kind pass: the tiles are not what separates right from wrong
                refined.append(result)
                continue
            hint, leads = compose(guess, case)  # leads that depend on the input alone
            result = dataclasses.replace(result, hint=hint, mistake=guess.id, leads=leads)
        refined.append(result)
    return refined


def _softmax_scores(case: Case) -> tuple[np.ndarray, int]:
    """(Q K^T / sqrt(d_k), -1): what `Check.scores` reads to tell a saturated input."""
    Q, K = (np.asarray(a, dtype=np.float64) for a in case.args[:2])
    return Q @ K.T / np.sqrt(Q.shape[1]), -1  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)


FLASH_ATTENTION = Check(
    name="flash_attention",
    helpers={"softmax": softmax},
    function="flash_attention",
    params=("Q", "K", "V", "block_size"),
    reference=_reference,
    scores=_softmax_scores,
    sizes=Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v")}, {"block_size": "block"}),
    make_cases=_cases,
    mistakes=(
        Mistake("running_max_starts_at_zero", RUNNING_MAX_AT_ZERO_HINT, lambda Q, K, V, b: _loop(Q, K, V, b, m0=0.0),
                leads=RUNNING_MAX_AT_ZERO_LEADS, premise=QUERY_BELOW_UNDERFLOW),
        Mistake("no_rescale", NO_RESCALE_HINT, lambda Q, K, V, b: _loop(Q, K, V, b, rescale_sum=False, rescale_values=False)),
        Mistake("values_not_rescaled",
                "The running sum is rescaled when the running max rises, but the weighted sum of values is not: "
                "both were computed relative to the old max m, so both need the factor exp(m - m').",
                lambda Q, K, V, b: _loop(Q, K, V, b, rescale_values=False)),
        Mistake("sum_not_rescaled",
                "The weighted sum of values is rescaled when the running max rises, but the running sum is not: "
                "both were computed relative to the old max m, so both need the factor exp(m - m').",
                lambda Q, K, V, b: _loop(Q, K, V, b, rescale_sum=False)),
        Mistake("drops_last_tile", DROPS_LAST_TILE_HINT,
                _only_if(lambda Q, K, V, b: Q.shape[0] % b or K.shape[0] % b,
                         lambda Q, K, V, b: _loop(Q, K, V, b, full_tiles_only=True))),
        Mistake("overlapping_tiles",
                "Each key tile took one key too many (a slice such as j : j + block_size + 1), so the key at "
                "every tile boundary was counted twice. A slice's end is excluded: j : j + block_size.",
                lambda Q, K, V, b: _loop(Q, K, V, b, overlap=1)),
        Mistake("rescale_sign_flipped",
                "Every query came back nan, even on the input whose keys fit in one tile: these are the numbers of a "
                "loop that rescales by exp(m' - m), the sign flipped. At the first tile m = -inf makes that factor "
                "inf, and inf times the empty sums (0) is nan. The factor is exp(m - m'), at most 1: 0 at the "
                "first tile.",
                lambda Q, K, V, b: _loop(Q, K, V, b, flipped=True)),
        Mistake("no_final_division",
                "Each output row must be divided by the running sum at the end: the accumulated values are "
                "the softmax's numerator only.",
                lambda Q, K, V, b: _loop(Q, K, V, b, divide=False)),
        Mistake("no_running_max", NO_RUNNING_MAX_HINT, lambda Q, K, V, b: _loop(Q, K, V, b, m0=0.0, use_max=False),
                premise=LARGE_SCORES),
        Mistake("running_max_per_tile",
                "Some queries came back as nan on this input, whose queries' scores lie far apart: these are the "
                "numbers a loop gives that keeps one running max for the whole tile of queries instead of one per "
                "query. A query far below the tile's max underflows to 0 for every key, and 0/0 is nan. Keep one "
                "running max per query, the max of each row of the tile's scores.",
                lambda Q, K, V, b: _loop(Q, K, V, b, tile_max=True),
                premise=Premise("query_far_below_its_tile", _far_below_its_tile)),
        Mistake("running_sum_per_tile",
                "Each output row was divided by one running sum for the whole tile of queries: these are the numbers "
                "a loop gives that adds up exp(score - m) over every query of the tile. Keep one running sum per "
                "query, the sum of each row of the tile's weights.",
                lambda Q, K, V, b: _loop(Q, K, V, b, sum_all=True)),
    ),
    specific=_specific,
    after_pass=_memory,
    refine=_refine,
)


def check_flash_attention(flash_attention, *, hidden: bool = False) -> CheckResult:
    """Check `flash_attention(Q, K, V, block_size) -> (n_q, d_v)`, tiled with an online softmax.

    Must equal plain attention on every input, including tiles that do not
    divide n, and keep its peak memory well under the n x n score matrix.
    The exercise 08_flash_attention (book/cost.ipynb).
    """
    return check_in_process(FLASH_ATTENTION, flash_attention, hidden=hidden)


CHECKS = {c.name: c for c in (FLASH_ATTENTION,)}
"""This module's checks by name: what the registry's `Exercise.checks` reads."""

"""Check for exercise 8: tiled attention with an online softmax.

Right numbers are not enough here: one input is large enough that the n x n
score matrix would take megabytes, and the call's peak memory is measured
(tracemalloc). A version that builds the whole matrix is told so, with the
numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...tiled.flash import flash_attention
from ...tiled.online_softmax import OnlineSoftmaxState, online_softmax_update, tiled_attention
from ..engine.cases import Case, random_qkv
from ..engine.check import Check, run_check
from ..engine.shrink import Sizes
from ..engine.mistakes import Mistake
from ..engine.results import FAILED, CaseResult, CheckResult

MEMORY_FRACTION = 0.25
"""The peak memory of the measured call must stay under this fraction of the
n_q x n_k float64 score matrix (a tiled loop needs a few tiles of it)."""

BUILDS_FULL_MATRIX = Mistake(
    "builds_full_matrix",
    "The numbers are right, but the function's memory grows like n x n: it builds the whole score matrix "
    "(or something as large). Visit the keys one tile at a time and keep, for each query, only a running "
    "max, a running sum and a running weighted sum of values.",
)
NO_RESCALE = Mistake(
    "no_rescale",
    "Right when one tile holds all the keys, wrong with several tiles. When a new tile raises a query's "
    "running max from m to m', what was accumulated so far (the running sum and the weighted values) was "
    "computed relative to m: multiply it by exp(m - m') before adding the new tile.",
)
DROPS_LAST_TILE = Mistake(
    "drops_last_tile",
    "Right when block_size divides the number of tokens, wrong otherwise: the last tile is shorter than "
    "block_size, and it must be visited too (for queries and for keys).",
)
NO_RUNNING_MAX = Mistake(
    "no_running_max",
    "nan or inf on large scores: exp overflowed. Keep a running maximum of the scores seen so far for each "
    "query and subtract it before exp, as the stable softmax does.",
)


def _tiled(Q, K, V, block_size, update=online_softmax_update):
    """The readable tiled loop (as the reference computes it), with the online-softmax step `update`."""
    return tiled_attention(Q, K, V, block_size, block_size, scale=1 / np.sqrt(Q.shape[-1]), update=update)


def _update_without_rescale(state: OnlineSoftmaxState, scores, values) -> OnlineSoftmaxState:
    """The online-softmax step that forgets to re-base what was summed under the old max."""
    new = online_softmax_update(state, scores, values)
    p = np.exp(scores - new.m[:, None])  # (bq, bk) the tile's terms, on the new max
    l = state.l + p.sum(axis=-1)  # old sums added as they are: no factor exp(m - m')
    acc = state.acc + p @ values  # (bq, bk) x (bk, d_v) -> (bq, d_v)
    return OnlineSoftmaxState(m=new.m, l=l, acc=acc, alpha=np.ones_like(new.alpha))


def _drops_last_tile(Q, K, V, block_size):
    """What a loop over full tiles only returns: the short last tile of queries and of keys never visited."""
    n_q = Q.shape[0] // block_size * block_size  # queries in full tiles
    n_k = K.shape[0] // block_size * block_size  # keys in full tiles
    out = np.zeros((Q.shape[0], V.shape[1]))  # queries of a dropped tile keep their zeros
    if n_q:
        out[:n_q] = _tiled(Q[:n_q], K[:n_k], V[:n_k], block_size) if n_k else np.nan  # 0 / 0: no key seen
    return out


def _no_running_max(Q, K, V, block_size):
    """exp of the raw scores, no maximum subtracted: inf / inf = nan in every row whose exp overflows."""
    s = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    if s.max() <= np.log(np.finfo(s.dtype).max):
        return None  # nothing overflows here, and the hint speaks of overflow
    e = np.exp(s)
    return (e @ V) / e.sum(axis=-1, keepdims=True)


def _no_final_division(Q, K, V, block_size):
    s = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    return np.exp(s - s.max(axis=-1, keepdims=True)) @ V  # the numerator only


def _reference(Q, K, V, block_size):
    """flash_attention's readable loop: the same numbers as the compiled one, with no compiler to wait for."""
    return flash_attention(Q, K, V, block_size=block_size, backend="numpy")


def _cases() -> list[Case]:
    rng = np.random.default_rng(8)

    def qkv(n_q, n_k, d_k, d_v, b, scale=1.0, dtype=np.float64):
        return (*random_qkv(rng, n_q, n_k, d_k, d_v, scale=scale, dtype=dtype), b)

    rising = qkv(8, 12, 4, 2, 4)
    rising[1][:] = np.abs(rising[1]) * np.arange(1, 13)[:, None] / 4  # later keys score higher
    rising[0][:] = np.abs(rising[0])
    return [
        Case("8 tokens, blocks of 4", qkv(8, 8, 4, 3, 4)),
        Case("10 tokens, blocks of 4 (the last tile is shorter)", qkv(10, 10, 4, 3, 4)),
        Case("one tile holds everything: 6 tokens, blocks of 8", qkv(6, 6, 4, 2, 8)),
        Case("6 queries, 11 keys, blocks of 4", qkv(6, 11, 4, 2, 4)),
        Case("large scores, 7 tokens, blocks of 3", qkv(7, 7, 4, 2, 3, scale=30.0)),
        Case("768 tokens, blocks of 32", qkv(768, 768, 8, 8, 32), measure_memory=True,
             note="random normal; the peak memory of this call is measured"),
        Case("scores that grow from tile to tile", rising, hidden=True),
        Case("blocks of 1", qkv(5, 5, 3, 2, 1), hidden=True),
        Case("float32, 9 tokens, blocks of 4", qkv(9, 9, 4, 3, 4, dtype=np.float32), hidden=True),
        Case("one query, 9 keys, blocks of 2", qkv(1, 9, 4, 2, 2), hidden=True),
    ] + _assumption_cases_flash()


def _assumption_cases_flash() -> list[Case]:
    """Inputs that break what a tiled loop could silently assume (block divides n, n_q = n_k, d_v = d_k are above)."""
    rng = np.random.default_rng(81)
    Q, K, V = random_qkv(rng, 5, 6, 4, 2)
    return [
        # some score >= 0: every score is near -1000, so a running max started at 0 makes exp underflow to 0/0.
        Case("every score very negative, 5 queries, 6 keys, blocks of 4",
             (np.abs(Q) * 20 + 10, -np.abs(K) * 20 - 10, V, 4), hidden=True),
        # n_q > n_k: more query tiles than key tiles.
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


def _specific(case: Case, expected, got) -> Mistake | None:
    Q, K = case.args[0], case.args[1]
    overflows = (Q @ K.T / np.sqrt(Q.shape[-1])).max() > np.log(np.finfo(np.float64).max)  # (n_q, n_k) scores
    if isinstance(got, np.ndarray) and got.dtype.kind == "f" and not np.isfinite(got).all() and overflows:
        return NO_RUNNING_MAX  # said only where exp of these scores does overflow
    return None


def _tiles(case: Case) -> tuple[bool, bool]:
    """(several tiles?, does block_size divide both n_q and n_k?)"""
    Q, K, _, b = case.args
    n_q, n_k = Q.shape[0], K.shape[0]
    return n_k > b, n_q % b == 0 and n_k % b == 0


def _refine(cases: tuple[Case, ...], results: list[CaseResult]) -> list[CaseResult]:
    """Say which kinds of tiling the function gets right, as observed across the inputs (no cause is named).

    A pattern such as "right where one tile holds every key, wrong with
    several" points at the step between tiles, but only a prediction that
    reproduces the output names the mistake itself.
    """
    single_ok = any(r.passed for c, r in zip(cases, results) if not _tiles(c)[0])
    dividing_multi_ok = any(r.passed for c, r in zip(cases, results) if _tiles(c) == (True, True))
    refined = []
    for case, result in zip(cases, results):
        several, divides = _tiles(case)
        if result.status == FAILED and result.mistake is None and several and single_ok:
            seen = ("right on an input where block_size divides the number of tokens, wrong on this one, where the "
                    "last tile is shorter" if dividing_multi_ok and not divides else
                    "right on an input where one tile holds every key, wrong on this one, with several tiles")
            result = dataclasses.replace(result, message=f"{result.message}; {seen}")
        refined.append(result)
    return refined


FLASH_ATTENTION = Check(
    name="flash_attention",
    function="flash_attention",
    params=("Q", "K", "V", "block_size"),
    reference=_reference,
    sizes=Sizes({"Q": ("n_q", "d_k"), "K": ("n_k", "d_k"), "V": ("n_k", "d_v")}, {"block_size": "block"}),
    make_cases=_cases,
    mistakes=(
        Mistake(NO_RESCALE.id, NO_RESCALE.hint, lambda Q, K, V, b: _tiled(Q, K, V, b, update=_update_without_rescale)),
        Mistake(DROPS_LAST_TILE.id, DROPS_LAST_TILE.hint, _drops_last_tile),
        Mistake(NO_RUNNING_MAX.id, NO_RUNNING_MAX.hint, _no_running_max),
        Mistake("no_final_division",
                "Each output row must be divided by the running sum at the end: the accumulated values are "
                "the softmax's numerator only.",
                _no_final_division),
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
    return run_check(FLASH_ATTENTION, flash_attention, hidden=hidden)

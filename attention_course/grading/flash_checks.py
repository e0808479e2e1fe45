"""Check for exercise 8: tiled attention with an online softmax.

Right numbers are not enough here: one input is large enough that the n x n
score matrix would take megabytes, and the call's peak memory is measured
(tracemalloc). A version that builds the whole matrix is told so, with the
numbers.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..flash import flash_attention
from .cases import Case
from .check import Check, run_check
from .mistakes import Mistake
from .results import FAILED, CaseResult, CheckResult

MEMORY_FRACTION = 0.25
"""The peak memory of the measured call must stay under this fraction of the
n_q x n_k float64 score matrix (the reference needs about 2% of it)."""

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


def _online(Q, K, V, block_size, rescale=True, last_tile=True):
    """Tiled attention with optional bugs: no rescaling, or short last tiles skipped."""
    n_q, d_k = Q.shape
    n_k, d_v = V.shape
    b = block_size
    out = np.zeros((n_q, d_v))
    stop_q = n_q if last_tile else n_q - b + 1
    stop_k = n_k if last_tile else n_k - b + 1
    for i0 in range(0, max(stop_q, 0), b):
        q = Q[i0:i0 + b] / np.sqrt(d_k)  # (bq, d_k)
        m = np.full((q.shape[0], 1), -np.inf)
        l = np.zeros((q.shape[0], 1))
        acc = np.zeros((q.shape[0], d_v))
        for j0 in range(0, max(stop_k, 0), b):
            s = q @ K[j0:j0 + b].T  # (bq, d_k) x (d_k, bk) -> (bq, bk)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            p = np.exp(s - m_new)
            alpha = np.exp(m - m_new) if rescale else 1.0
            l = alpha * l + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ V[j0:j0 + b]  # (bq, bk) x (bk, d_v) -> (bq, d_v)
            m = m_new
        out[i0:i0 + b] = acc / l
    return out


def _no_final_division(Q, K, V, block_size):
    s = Q @ K.T / np.sqrt(Q.shape[1])  # (n_q, d_k) x (d_k, n_k) -> (n_q, n_k)
    return np.exp(s - s.max(axis=-1, keepdims=True)) @ V  # the numerator only


def _reference(Q, K, V, block_size):
    return flash_attention(Q, K, V, block_size=block_size)


def _cases() -> list[Case]:
    rng = np.random.default_rng(8)

    def qkv(n_q, n_k, d_k, d_v, b, scale=1.0, dtype=np.float64):
        arrays = [(rng.standard_normal(s) * f).astype(dtype)
                  for s, f in (((n_q, d_k), scale), ((n_k, d_k), scale), ((n_k, d_v), 1.0))]
        return (*arrays, b)

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
    if isinstance(got, np.ndarray) and got.dtype.kind == "f" and not np.isfinite(got).all():
        return NO_RUNNING_MAX
    return None


def _tiles(case: Case) -> tuple[bool, bool]:
    """(several tiles?, does block_size divide both n_q and n_k?)"""
    Q, K, _, b = case.args
    n_q, n_k = Q.shape[0], K.shape[0]
    return n_k > b, n_q % b == 0 and n_k % b == 0


def _refine(cases: tuple[Case, ...], results: list[CaseResult]) -> list[CaseResult]:
    """Name tiling bugs from the pattern of which inputs pass."""
    single_ok = any(r.passed for c, r in zip(cases, results) if not _tiles(c)[0])
    dividing_multi_ok = any(r.passed for c, r in zip(cases, results) if _tiles(c) == (True, True))
    refined = []
    for case, result in zip(cases, results):
        several, divides = _tiles(case)
        if result.status == FAILED and result.mistake is None and several and single_ok:
            guess = DROPS_LAST_TILE if (dividing_multi_ok and not divides) else NO_RESCALE
            result = dataclasses.replace(result, hint=guess.hint, mistake=guess.id)
        refined.append(result)
    return refined


FLASH_ATTENTION = Check(
    name="flash_attention",
    function="flash_attention",
    params=("Q", "K", "V", "block_size"),
    reference=_reference,
    make_cases=_cases,
    mistakes=(
        Mistake(NO_RESCALE.id, NO_RESCALE.hint, lambda Q, K, V, b: _online(Q, K, V, b, rescale=False)),
        Mistake(DROPS_LAST_TILE.id, DROPS_LAST_TILE.hint, lambda Q, K, V, b: _online(Q, K, V, b, last_tile=False)),
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
    Exercise 8; chapter "Cost" (book/cost).
    """
    return run_check(FLASH_ATTENTION, flash_attention, hidden=hidden)

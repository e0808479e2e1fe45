"""The compiled path of `flash_attention`: query tiles on every core, each through the compiled loop.

What makes it fast (benchmarks/bench_attention.py and bench_tile.py measure
each part; benchmarks/README.md has the figures):

- One query tile's whole loop over its key tiles is compiled (`loop`): the
  two matrix products of each tile call BLAS from the compiled code (`gemm`),
  writing straight into a scratch tile and adding into the output (beta = 1),
  and everything between them, exp(score - max), the row max and the row
  sums, is one pass over the tile with a vectorised exponential (`exp2`). As
  NumPy calls that is five passes over the tile, and NumPy's float64 exp is
  not vectorised on AVX2 processors.
- Scores in base 2: the queries are multiplied by log2(e) along with the
  scale, so exp(score) is 2**x of what the product gives, and splitting x
  into an integer and a remainder takes no multiplication (as FlashAttention
  does).
- A compiled loop pays nothing per tile in Python and holds no GIL, so tile
  shapes can follow the cache rather than Python's costs, and the query
  tiles, which are independent, are shared among threads, one per core
  (`threads.run_jobs`).
- Under `is_causal`, key tiles that lie entirely after a query tile's last
  query are never computed: that halves the work.
- Grouped-query attention: each query head reads its shared key/value head
  in place (`online_softmax.kv_index`); K and V are never copied per query head.
- Subtracting the running max only keeps exp from overflowing; the softmax
  does not change when all of a row's scores move by the same amount. When
  the scores of a query tile are provably small (|q . k| <= |q| |k|, the
  Cauchy-Schwarz inequality), exp(score) can neither overflow nor underflow,
  and the tile is computed without a max: no max pass, no subtraction, no
  rescaling. For the usual scaled scores (a few units in size) that is every
  tile; large scores, float masks or huge values take the running max.
"""

from __future__ import annotations

import functools

import numpy as np

from ..online_softmax import keys_seen, kv_batch, kv_index, tiles
from .threads import cpu_count, forget_blas_libraries, run_jobs

MIN_SCORES_FOR_THREADS = 1 << 20
"""Below this many scores (1024 x 1024) one thread is used: small calls stay simple and repeatable."""

DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The dtypes the loop is compiled for."""


def unshifted_exp_limit(dtype) -> float:
    """How large |score| may be for exp(score) to be summed without subtracting a max.

    A third of the exponent range: exp(score) then lies between max**(-1/3)
    and max**(1/3) of the dtype (1.5e-13 and 7e12 in float32), so a tile's
    weights never overflow, the largest one is never lost to underflow, and
    n_k weights times values up to size max**(1/3) / n_k still sum to a
    finite number.
    """
    return float(np.log(np.finfo(dtype).max)) / 3


def _threads_for(n_scores: int) -> int:
    """How many threads share the query tiles of a call that computes `n_scores` scores."""
    return cpu_count() if n_scores >= MIN_SCORES_FOR_THREADS else 1


@functools.cache
def _kernels():
    """The compiled loop (`loop`): numba and SciPy's BLAS are loaded on the first call, not with the package."""
    from . import loop

    forget_blas_libraries()  # SciPy's BLAS is new in this process: the thread limits must cover it too
    return loop


def _attend(q_tile, k, v, mask, is_causal: bool, rows: slice, keep_max: bool, block_k: int, buffers, out) -> int:
    """Attention for one tile of queries, into `out`; returns how many key tiles were computed.

    Args:
        q_tile: (bq, d_k) the queries of `rows`, already multiplied by the scale and log2(e).
        k: (n_k, d_k) keys; v: (n_k, d_v) values; row-major, q_tile's dtype.
        mask: None, or a (n_q, n_k) bool or float mask in q_tile's dtype (a broadcast view).
        is_causal: apply the top-left causal mask.
        rows: which queries q_tile holds.
        keep_max: keep a running max; False for scores shown to be small (`_scores_are_small`).
        block_k: keys per tile.
        buffers: this thread's scratch tile (block_q, block_k) and its (block_q,) m, l and alpha.
        out: (bq, d_v) row-major view of the output.
    """
    n_keys = keys_seen(rows, k.shape[0], is_causal)
    return _kernels().attend_query_tile(q_tile, k, v, mask, rows.start, n_keys, is_causal, keep_max, block_k, *buffers, out)


def _scores_are_small(q_tile: np.ndarray, key_norm, limit: float) -> bool:
    """True if every score q . k of this tile (q scaled, in base 2) is at most `limit` in size.

    |q . k| <= |q| |k| (Cauchy-Schwarz), so the largest query norm times the
    largest key norm bounds them all. NaN or inf anywhere gives False.
    """
    query_norms = np.sqrt(np.einsum("qd,qd->q", q_tile, q_tile))  # (bq,) |q|, q already scaled
    return bool(query_norms.max() * key_norm <= limit)


def _row_major(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """x in `dtype`, copied only if its last two axes are not rows of unit stride (what BLAS reads)."""
    x = x.astype(dtype, copy=False)
    rows, cols = x.shape[-2:]
    row_stride, col_stride = x.strides[-2:]
    if (cols > 1 and col_stride != x.itemsize) or (rows > 1 and row_stride < cols * x.itemsize):
        x = np.ascontiguousarray(x)
    return x


def _unshifted_allowed(k: np.ndarray, v: np.ndarray, mask, batch: tuple) -> tuple[np.ndarray, bool]:
    """What `_scores_are_small` needs, computed once per call: (key norms, may any tile skip the max?).

    Args:
        k: (..., n_k, d_k) keys; v: (..., n_k, d_v) values, one dtype.
        mask: None, or the checked bool or float mask.
        batch: the broadcast batch shape of k and v (their heads, with grouped-query attention).

    Returns:
        (batch) the largest |k_j| of each batch index, and False where the
        max may never be skipped: a float mask (it can move scores anywhere)
        or values so large that n_k of them times exp(limit) could overflow.
    """
    key_norms = np.sqrt(np.einsum("...kd,...kd->...k", k, k))  # (..., n_k) |k_j|
    key_norm = np.broadcast_to(key_norms.max(axis=-1, initial=0.0), batch)  # (batch) largest |k_j|
    limit = unshifted_exp_limit(k.dtype)
    value_size = np.maximum(v.max(initial=0.0), -v.min(initial=0.0))  # largest |v|; NaN if v holds one: the test is False
    small_values = bool(v.shape[-2] * value_size <= np.exp(limit))
    return key_norm, small_values and (mask is None or mask.dtype == bool)


def attention(q, k, v, mask, is_causal: bool, scale: float, block_q: int, block_k: int, batch: tuple,
              groups: int = 1) -> np.ndarray:
    """softmax(q k^T * scale + mask) v for every batch index, each query tile through the compiled loop.

    Args:
        q: (..., n_q, d_k); k: (..., n_k, d_k); v: (..., n_k, d_v): checked,
            of one dtype in `DTYPES`, leading dims broadcasting to `batch`
            (for k and v, to `kv_batch(batch, groups)`).
        mask: None, or a checked bool or float mask broadcasting to batch + (n_q, n_k).
        is_causal, scale, block_q, block_k: as `flash_attention` took them.
        batch: the broadcast leading dims of the queries (heads last).
        groups: query heads per key/value head (grouped-query attention):
            query head i reads key/value head i // groups, in place.

    Returns:
        (batch..., n_q, d_v) in q's dtype.
    """
    dtype = q.dtype
    n_q, d_k = q.shape[-2:]
    n_k, d_v = v.shape[-2:]
    q, k, v = (_row_major(x, dtype) for x in (q, k, v))  # rows BLAS can read, so no tile converts
    if mask is not None and mask.dtype != bool:
        mask = mask.astype(dtype, copy=False)  # scores + mask in the scores' dtype, as the plain path adds them
    # Loaded before the threads start, so that their BLAS limits cover SciPy's BLAS.
    log2_e = _kernels().LOG2_E  # scores come out in base 2, ready for 2**s = exp(natural score) (see exp2)
    shared = kv_batch(batch, groups)  # (..., h_kv): the heads of k and v
    key_norm, may_skip_max = _unshifted_allowed(k, v, mask, shared)
    limit = unshifted_exp_limit(dtype) * log2_e  # the same bound on scores in base 2
    # Views (no copies) with the full batch shape, so each batch index picks its own (n, d) matrices.
    q = np.broadcast_to(q, batch + q.shape[-2:])
    k, v = (np.broadcast_to(x, shared + x.shape[-2:]) for x in (k, v))
    if mask is not None:
        mask = mask.reshape((1,) * (2 - mask.ndim) + mask.shape)  # a (n_k,) mask becomes (1, n_k)
        mask = np.broadcast_to(mask, batch + (n_q, n_k))  # (..., n_q, n_k), a view: no copy
    out = np.empty(batch + (n_q, d_v), dtype=dtype)  # (..., n_q, d_v)
    scale = dtype.type(scale * log2_e)

    def make_worker():
        # This thread's scratch, whatever n is: one (block_q, block_k) tile of scores and (block_q,) m, l, alpha,
        # and a (block_q, d_k) tile of scaled queries (a fresh array per tile cost the page faults of a new one).
        buffers = (np.empty((block_q, block_k), dtype=dtype),) + tuple(np.empty(block_q, dtype=dtype) for _ in range(3))
        q_scaled = np.empty((block_q, d_k), dtype=dtype)

        def attend(job: tuple[tuple, slice]) -> None:
            b, rows = job  # b: index into the batch dims; rows: one tile of queries
            b_kv = kv_index(b, groups)  # the key/value head query head b reads (itself unless grouped)
            q_tile = np.multiply(q[b][rows], scale, out=q_scaled[: rows.stop - rows.start])  # (bq, d_k), times log2(e)
            keep_max = not (may_skip_max and _scores_are_small(q_tile, key_norm[b_kv], limit))
            mask_b = None if mask is None else mask[b]  # (n_q, n_k)
            _attend(q_tile, k[b_kv], v[b_kv], mask_b, is_causal, rows, keep_max, block_k, buffers, out[b][rows])

        return attend

    row_tiles = tiles(n_q, block_q)
    if is_causal:  # the last query tiles see the most keys: start them first so the threads finish together
        row_tiles.reverse()
    jobs = [(b, rows) for b in np.ndindex(batch) for rows in row_tiles]
    n_scores = int(np.prod(batch, dtype=np.int64)) * n_q * n_k
    run_jobs(jobs, make_worker, _threads_for(n_scores))
    return out

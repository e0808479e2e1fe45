"""Tiled attention with an online softmax, the idea behind FlashAttention (chapter 7).

The plain computation builds the whole (n_q, n_k) score matrix. Here the keys
are visited one tile at a time for each tile of queries, and the softmax is
accumulated on the fly: for each query we keep

    m    the largest score seen so far        (running max)
    l    sum of exp(score - m) so far          (running denominator)
    acc  sum of exp(score - m) * value so far  (running numerator)

When a new tile raises the max from m to m', what was accumulated is rescaled
by exp(m - m'), so at the end acc / l is exactly softmax(scores) @ V. Memory
holds one (block_q, block_k) tile of scores per core instead of n_q x n_k; the
arithmetic is the same O(n_q n_k d) as the plain version.

What makes it fast (measured in benchmarks/bench_attention.py):

- The two matrix products of a tile run in BLAS (NumPy's matmul); everything
  between them, exp(score - max), the row max and the row sums, is one
  compiled pass over the tile (`tile_softmax`, with numba), with a vectorised
  exponential. As NumPy calls that was five passes over the tile, and NumPy's
  float64 exp is not vectorised on AVX2 processors: the compiled pass takes
  0.55-0.75 of the time of a whole call in NumPy (n = 4096 and 8192, d = 64).
- Large tiles, 256 queries x 512 keys: spreading the fixed cost of a tile's
  calls over 128K scores instead of 64K (128 x 512) made the whole call 7-10%
  faster; other shapes (512 x 512, 256 x 1024, 512 x 256) were within the
  noise of it.
- Every pass over a tile writes into the same scratch buffers (`out=`), so no
  temporary (block_q, block_k) array is allocated per tile.
- Query tiles are independent, so they are shared among threads, one per core
  (`_threads.run_jobs`): NumPy releases the GIL in BLAS and in its ufuncs.
- Under `is_causal`, key tiles that lie entirely after a query tile's last
  query are never computed: that halves the work.
- Subtracting the running max only keeps exp from overflowing; the softmax
  does not change when all of a row's scores move by the same amount. When
  the scores of a query tile are provably small (|q . k| <= |q| |k|, the
  Cauchy-Schwarz inequality), exp(score) can neither overflow nor underflow,
  and the tile is computed without a max: no max pass, no subtraction, no
  rescaling (`_attend_query_tile_unshifted`). For the usual scaled scores
  (a few units in size) that is every tile, and it saves 5-15% of a call;
  large scores, float masks or huge values take the running max.

What is left is mostly the two products: per score, on one core, they take
about 4.4 ns in float32, near OpenBLAS's peak, and the whole of PyTorch's
fused CPU kernel about 4.9 ns (benchmarks/bench_tile.py). So in float32 this
comes out level with PyTorch, and in float64 faster; benchmarks/README.md has
the measurements.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from ._checks import broadcast_batch, check_scale, positive_int
from ._threads import cpu_count, run_jobs
from .attention import check_qkv
from .masks import check_attn_mask

DEFAULT_BLOCK_SIZE = (256, 512)
"""(block_q, block_k): queries and keys per tile, chosen by measurement (benchmarks/bench_attention.py --blocks)."""

MIN_SCORES_FOR_THREADS = 1 << 20
"""Below this many scores (1024 x 1024) one thread is used: small calls stay simple and repeatable."""


def unshifted_exp_limit(dtype) -> float:
    """How large |score| may be for exp(score) to be summed without subtracting a max.

    A third of the exponent range: exp(score) then lies between max**(-1/3)
    and max**(1/3) of the dtype (1.5e-13 and 7e12 in float32), so a tile's
    weights never overflow, the largest one is never lost to underflow, and
    n_k weights times values up to size max**(1/3) / n_k still sum to a
    finite number.
    """
    return float(np.log(np.finfo(dtype).max)) / 3


def _working_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype the tiles are computed in: float32 or float64, the two the kernels are compiled for."""
    if dtype == np.float16:
        return np.dtype(np.float32)  # as PyTorch does on the CPU: float16 storage, float32 arithmetic
    if dtype not in (np.float32, np.float64):
        raise TypeError(
            f"flash_attention computes in float16, float32 or float64; got {dtype}. "
            "scaled_dot_product_attention takes any float dtype."
        )
    return dtype


def _threads_for(n_scores: int) -> int:
    """How many threads share the query tiles of a call that computes `n_scores` scores."""
    return cpu_count() if n_scores >= MIN_SCORES_FOR_THREADS else 1


def _block_sizes(block_size) -> tuple[int, int]:
    """(block_q, block_k) from an int (both the same) or a pair of positive ints."""
    if isinstance(block_size, (tuple, list)):
        if len(block_size) != 2:
            raise ValueError(
                f"block_size must be a positive int or a pair (block_q, block_k); got {block_size!r}"
            )
        return positive_int(block_size[0], "block_size[0] (block_q)"), positive_int(block_size[1], "block_size[1] (block_k)")
    size = positive_int(block_size, "block_size")
    return size, size


def _tiles(n: int, block: int) -> list[slice]:
    """Consecutive slices of at most `block` positions covering 0..n-1."""
    return [slice(start, min(start + block, n)) for start in range(0, n, block)]


def _key_tiles(rows: slice, n_k: int, block_k: int, is_causal: bool) -> Iterator[slice]:
    """The key tiles that the queries in `rows` can see.

    Under the causal mask query i sees keys 0..i, so keys from `rows.stop` on
    are hidden from every query of the tile and are not visited at all.
    """
    last_key = min(n_k, rows.stop) if is_causal else n_k
    return iter(_tiles(last_key, block_k))


def _causal_tile(rows: slice, cols: slice) -> np.ndarray:
    """(bq, bk) bool: key j may be seen by query i iff j <= i (top-left aligned)."""
    i = np.arange(rows.start, rows.stop)[:, None]  # (bq, 1) query positions
    j = np.arange(cols.start, cols.stop)[None, :]  # (1, bk) key positions
    return j <= i


def _mask_tile(mask: np.ndarray, rows: slice, cols: slice) -> np.ndarray:
    """The part of a (n_q or 1, n_k or 1) mask that covers one tile of scores."""
    if mask.shape[-2] != 1:
        mask = mask[rows, :]
    if mask.shape[-1] != 1:
        mask = mask[:, cols]
    return mask


def _apply_mask(scores: np.ndarray, allowed: np.ndarray) -> None:
    """Mask one tile of scores in place: False -> -inf (bool), or add the float mask."""
    if allowed.dtype == bool:
        np.copyto(scores, -np.inf, where=~allowed)  # (bq, bk); `allowed` broadcasts
    else:
        scores += allowed.astype(scores.dtype, copy=False)  # same rounding as the plain path


def _tile_scores(q_tile, k, mask, is_causal, rows: slice, cols: slice, scratch) -> np.ndarray:
    """One tile of masked scores, computed into the scratch buffer.

    Args:
        q_tile: (bq, d_k) the queries of `rows`, already scaled; k: (n_k, d_k).
        mask, is_causal: as in `_attend_query_tile`.
        rows, cols: the queries and keys of the tile.
        scratch: (>= bq, >= bk) C-contiguous buffer.

    Returns:
        (bq, bk) a view of `scratch` holding q . k, -inf where masked (or plus the float mask).
    """
    s = scratch[: q_tile.shape[0], : cols.stop - cols.start]
    np.matmul(q_tile, k[cols].T, out=s)  # (bq, d_k) x (d_k, bk) -> (bq, bk)
    if is_causal and cols.stop - 1 > rows.start:  # the tile crosses the diagonal
        _apply_mask(s, _causal_tile(rows, cols))
    if mask is not None:
        _apply_mask(s, _mask_tile(mask, rows, cols))
    return s


@functools.cache
def _kernels():
    """The compiled per-tile passes (`tile_softmax`): numba is imported (0.5 s) on the first call, not with the package."""
    from . import tile_softmax

    return tile_softmax


def _attend_query_tile(q_tile, k, v, mask, is_causal, rows, block_k, scratch, pv) -> np.ndarray:
    """The online softmax for one tile of queries against all the keys it can see.

    Args:
        q_tile: (bq, d_k) the queries of `rows`, already multiplied by the scale.
        k: (n_k, d_k) keys; v: (n_k, d_v) values.
        mask: None or a 2-D (n_q or 1, n_k or 1) bool or float mask.
        is_causal: apply the top-left causal mask.
        rows: which queries q_tile holds.
        block_k: keys per tile.
        scratch: (>= bq, >= block_k) C-contiguous buffer that holds one tile of scores.
        pv: (>= bq, d_v) buffer for one tile's product of weights and values.

    Returns:
        (bq, d_v) the attention output of these queries (zeros for a query
        with nothing to attend to).
    """
    bq, d_v = q_tile.shape[0], v.shape[-1]
    dtype = scratch.dtype
    m = np.full(bq, -np.inf, dtype=dtype)  # (bq,) running max
    l = np.zeros(bq, dtype=dtype)  # (bq,) running denominator
    alpha = np.empty(bq, dtype=dtype)  # (bq,) rescales what was summed under the old max
    acc = np.zeros((bq, d_v), dtype=dtype)  # (bq, d_v) running numerator
    for cols in _key_tiles(rows, k.shape[0], block_k, is_causal):
        bk = cols.stop - cols.start
        s = _tile_scores(q_tile, k, mask, is_causal, rows, cols, scratch)  # (bq, bk)
        # One compiled pass: m_new = max(m, row max); s = exp(s - m_new) (bq, bk), this tile's
        # unnormalised weights; alpha = exp(m - m_new); l = l * alpha + row sums of s; m = m_new.
        _kernels().exp_rows_shifted(scratch, bq, bk, m, l, alpha)
        acc *= alpha[:, None]
        acc += np.matmul(s, v[cols], out=pv[:bq])  # (bq, bk) x (bk, d_v) -> (bq, d_v)
    # A row that saw only -inf has l == 0: it attends to nothing and gets zeros, as in torch.
    l = l[:, None]  # (bq, 1)
    return np.divide(acc, l, out=np.zeros_like(acc), where=l != 0)


def _attend_query_tile_unshifted(q_tile, k, v, mask, is_causal, rows, block_k, scratch, pv) -> np.ndarray:
    """The same sums as `_attend_query_tile`, for scores known to be small: no running max.

    Arguments as in `_attend_query_tile` (mask: None or bool). The caller has
    checked that every score is at most `unshifted_exp_limit` in size, so
    exp(score) is safe as it is: l and acc are plain sums over the tiles,
    never rescaled. A masked score
    is -inf and adds exp(-inf) = 0.
    """
    bq, d_v = q_tile.shape[0], v.shape[-1]
    dtype = scratch.dtype
    l = np.zeros(bq, dtype=dtype)  # (bq,) denominator: sum of exp(score)
    acc = np.zeros((bq, d_v), dtype=dtype)  # (bq, d_v) numerator: sum of exp(score) * value
    for cols in _key_tiles(rows, k.shape[0], block_k, is_causal):
        bk = cols.stop - cols.start
        s = _tile_scores(q_tile, k, mask, is_causal, rows, cols, scratch)  # (bq, bk)
        _kernels().exp_rows(scratch, bq, bk, l)  # one compiled pass: s = exp(s) (bq, bk); l += row sums
        acc += np.matmul(s, v[cols], out=pv[:bq])  # (bq, bk) x (bk, d_v) -> (bq, d_v)
    # A row whose keys are all masked has l == 0: it attends to nothing and gets zeros, as in torch.
    return np.divide(acc, l[:, None], out=np.zeros_like(acc), where=l[:, None] != 0)


def _scores_are_small(q_tile: np.ndarray, key_norm, limit: float) -> bool:
    """True if every score q . k of this tile is at most `limit` in size.

    |q . k| <= |q| |k| (Cauchy-Schwarz), so the largest query norm times the
    largest key norm bounds them all. NaN or inf anywhere gives False.
    """
    query_norms = np.sqrt(np.einsum("qd,qd->q", q_tile, q_tile))  # (bq,) |q|, q already scaled
    return bool(query_norms.max() * key_norm <= limit)


def _unshifted_allowed(k: np.ndarray, v: np.ndarray, mask, batch: tuple) -> tuple[np.ndarray, bool]:
    """What `_scores_are_small` needs, computed once per call: (key norms, may any tile skip the max?).

    Args:
        k: (..., n_k, d_k) keys; v: (..., n_k, d_v) values, one dtype.
        mask: None, or the checked bool or float mask.
        batch: the broadcast batch shape.

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


def flash_attention(
    query,
    key,
    value,
    attn_mask=None,
    is_causal: bool = False,
    scale=None,
    block_size: int | tuple[int, int] = DEFAULT_BLOCK_SIZE,
) -> np.ndarray:
    """Exactly `scaled_dot_product_attention`, computed tile by tile.

    Args:
        query: (..., n_q, d_k); key: (..., n_k, d_k); value: (..., n_k, d_v).
        attn_mask, is_causal, scale: as in `scaled_dot_product_attention`.
            Under is_causal, key tiles that every query of a tile is masked
            from are skipped, which halves the work.
        block_size: queries and keys per tile, an int for square tiles or a
            pair (block_q, block_k). Peak extra memory grows with
            block_q * block_k (one tile per core), not with n_q * n_k.

    Returns:
        (..., n_q, d_v), equal to the plain computation up to rounding; float32
        in gives float32 out (float16 is computed in float32 and rounded to
        float16 at the end); the inputs are not modified. A query with nothing
        to attend to gets zeros. NaN reaches every output that can see it; a
        NaN key or value in a tile that is skipped (under is_causal) leaves the
        queries that cannot see it untouched, where the plain path, which
        multiplies it by a zero weight, gives NaN.
    """
    q, k, v = check_qkv(query, key, value)
    block_q, block_k = _block_sizes(block_size)
    n_q, d_k = q.shape[-2:]
    n_k, d_v = v.shape[-2:]
    scale = check_scale(scale, d_k)
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    shapes = {"query": q.shape, "key": k.shape, "value": v.shape}
    if mask is not None and mask.ndim > 2:
        shapes["attn_mask"] = mask.shape
    batch = broadcast_batch(shapes)
    out_dtype = np.result_type(q, k, v)
    dtype = _working_dtype(out_dtype)
    q, k, v = (x.astype(dtype, copy=False) for x in (q, k, v))  # one dtype, so BLAS never converts per tile
    key_norm, may_skip_max = _unshifted_allowed(k, v, mask, batch)
    limit = unshifted_exp_limit(dtype)
    # Views (no copies) with the full batch shape, so each batch index picks its own (n, d) matrices.
    q, k, v = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (q, k, v))
    if mask is not None:
        mask = mask.reshape((1,) * (2 - mask.ndim) + mask.shape)  # a (n_k,) mask becomes (1, n_k)
        mask = np.broadcast_to(mask, batch + mask.shape[-2:])  # (..., n_q or 1, n_k or 1)
    out = np.empty(batch + (n_q, d_v), dtype=dtype)  # (..., n_q, d_v)
    scale = dtype.type(scale)

    def make_worker():
        scratch = np.empty((block_q, block_k), dtype=dtype)  # this thread's tile of scores, whatever n is
        pv = np.empty((block_q, v.shape[-1]), dtype=dtype)  # this thread's (block_q, d_v) weights x values

        def attend(job: tuple[tuple, slice]) -> None:
            b, rows = job  # b: index into the batch dims; rows: one tile of queries
            q_tile = q[b][rows] * scale  # (bq, d_k), scaled once per tile
            mask_b = None if mask is None else mask[b]
            args = (q_tile, k[b], v[b], mask_b, is_causal, rows, block_k, scratch, pv)
            if may_skip_max and _scores_are_small(q_tile, key_norm[b], limit):
                out[b][rows] = _attend_query_tile_unshifted(*args)
            else:
                out[b][rows] = _attend_query_tile(*args)

        return attend

    row_tiles = _tiles(n_q, block_q)
    if is_causal:  # the last query tiles see the most keys: start them first so the threads finish together
        row_tiles.reverse()
    jobs = [(b, rows) for b in np.ndindex(batch) for rows in row_tiles]
    n_scores = int(np.prod(batch, dtype=np.int64)) * n_q * n_k
    run_jobs(jobs, make_worker, _threads_for(n_scores))
    return out.astype(out_dtype, copy=False)

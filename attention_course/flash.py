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

What makes it fast (measured in benchmarks/bench_attention.py and bench_tile.py):

- One query tile's whole loop over its key tiles is compiled (`flash_kernel`,
  with numba): the two matrix products of each tile call BLAS (SciPy's, from
  the compiled code, `_gemm`), writing straight into a scratch tile and adding
  into the output (beta = 1), and everything between them, exp(score - max),
  the row max and the row sums, is one pass over the tile with a vectorised
  exponential (`tile_softmax`). As NumPy calls that was five passes over the
  tile, and NumPy's float64 exp is not vectorised on AVX2 processors.
- Scores in base 2: the queries are multiplied by log2(e) along with the
  scale, so exp(score) is 2**x of what the product gives, and splitting x
  into an integer and a remainder takes no multiplication (as FlashAttention
  does). That made the compiled pass 15-25% faster than with exp.
- A compiled loop pays nothing per tile in Python: the loop written in Python
  around NumPy calls spent about 4% of its time on one core between the calls
  (n = 4096), and its threads handed the GIL to each other at every tile. Tile
  shapes are then free to follow the cache rather than Python's costs.
- Tiles of 512 queries x 256 keys: one tile of float32 scores is 512 KiB, and
  each key tile, loaded once, serves 512 queries. Measured against 256 x 512
  and 1024 x 128, it was the fastest or level with the fastest.
- Query tiles are independent, so they are shared among threads, one per core
  (`_threads.run_jobs`); the compiled loop runs without the GIL.
- Under `is_causal`, key tiles that lie entirely after a query tile's last
  query are never computed: that halves the work.
- Subtracting the running max only keeps exp from overflowing; the softmax
  does not change when all of a row's scores move by the same amount. When
  the scores of a query tile are provably small (|q . k| <= |q| |k|, the
  Cauchy-Schwarz inequality), exp(score) can neither overflow nor underflow,
  and the tile is computed without a max: no max pass, no subtraction, no
  rescaling. For the usual scaled scores (a few units in size) that is every
  tile, and it saves 5-15% of a call; large scores, float masks or huge
  values take the running max.

What is left is mostly the two products, which run near the processor's
peak: per score, on one core, they take about 3.4-3.6 ns in float32, the
compiled pass about 0.45 ns, and the whole of PyTorch's fused CPU kernel,
built the same way, about 4.1-5 ns (benchmarks/bench_tile.py). So in float32
this comes out level with PyTorch or a little faster, and in float64 clearly
faster; benchmarks/README.md has the measurements.
"""

from __future__ import annotations

import functools

import numpy as np

from ._checks import broadcast_batch, check_scale, positive_int
from ._threads import cpu_count, forget_blas_libraries, run_jobs
from .attention import check_qkv
from .masks import check_attn_mask

DEFAULT_BLOCK_SIZE = (512, 256)
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


def _keys_seen(rows: slice, n_k: int, is_causal: bool) -> int:
    """How many keys (0, 1, ...) the queries in `rows` can see: all, or under the causal mask up to the last query.

    Under the causal mask query i sees keys 0..i, so keys from `rows.stop` on
    are hidden from every query of the tile and their tiles are not computed.
    """
    return min(n_k, rows.stop) if is_causal else n_k


@functools.cache
def _kernels():
    """The compiled loop (`flash_kernel`): numba and SciPy's BLAS are loaded (about 1 s) on the first call, not with the package."""
    from . import flash_kernel

    forget_blas_libraries()  # SciPy's BLAS is new in this process: the thread limits must cover it too
    return flash_kernel


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
    n_keys = _keys_seen(rows, k.shape[0], is_causal)
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

    The tile loop is compiled with numba: the first call on a machine
    compiles it (several seconds per dtype, a second or two more per kind of
    mask) and caches the machine code; a new process then loads it (about a
    second, on its first call) instead of compiling.

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
    q, k, v = (_row_major(x, dtype) for x in (q, k, v))  # one dtype and rows BLAS can read, so no tile converts
    if mask is not None and mask.dtype != bool:
        mask = mask.astype(dtype, copy=False)  # scores + mask in the scores' dtype, as the plain path adds them
    # Loaded before the threads start, so that their BLAS limits cover SciPy's BLAS.
    log2_e = _kernels().LOG2_E  # scores come out in base 2, ready for 2**s = exp(natural score) (see tile_softmax)
    key_norm, may_skip_max = _unshifted_allowed(k, v, mask, batch)
    limit = unshifted_exp_limit(dtype) * log2_e  # the same bound on scores in base 2
    # Views (no copies) with the full batch shape, so each batch index picks its own (n, d) matrices.
    q, k, v = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (q, k, v))
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
            q_tile = np.multiply(q[b][rows], scale, out=q_scaled[: rows.stop - rows.start])  # (bq, d_k), times log2(e)
            keep_max = not (may_skip_max and _scores_are_small(q_tile, key_norm[b], limit))
            mask_b = None if mask is None else mask[b]  # (n_q, n_k)
            _attend(q_tile, k[b], v[b], mask_b, is_causal, rows, keep_max, block_k, buffers, out[b][rows])

        return attend

    row_tiles = _tiles(n_q, block_q)
    if is_causal:  # the last query tiles see the most keys: start them first so the threads finish together
        row_tiles.reverse()
    jobs = [(b, rows) for b in np.ndindex(batch) for rows in row_tiles]
    n_scores = int(np.prod(batch, dtype=np.int64)) * n_q * n_k
    run_jobs(jobs, make_worker, _threads_for(n_scores))
    return out.astype(out_dtype, copy=False)

"""`flash_attention`: exactly `scaled_dot_product_attention`, computed tile by tile (book/cost.ipynb).

Two backends compute the same numbers:

- "numpy": the readable loop of `online_softmax.tiled_attention`, in NumPy,
  one head and one tile at a time. Always available.
- "numba": the compiled accelerator (`tiled/_compiled`), which runs the same
  online softmax in one compiled loop per tile of queries, on every core.
  It needs the `[fast]` extra (`pip install "attention-course[fast]"`).

By default `flash_attention` uses the accelerator when it is installed and
the readable loop otherwise; `default_backend()` says which.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import broadcast_batch, check_scale, compute_dtype, positive_int, result_dtype
from ..core.attention import _shared_heads, check_qkv, kv_groups
from ..core.masks import check_attn_mask
from . import _compiled
from .online_softmax import kv_batch, kv_index, tiled_attention

DEFAULT_BLOCK_SIZE = (512, 256)
"""(block_q, block_k): queries and keys per tile, chosen by measurement (benchmarks/bench_attention.py --blocks)."""

BACKENDS = ("numpy", "numba")
"""The backends of `flash_attention`: the readable NumPy loop, and the compiled accelerator."""


def available_backends() -> tuple[str, ...]:
    """The backends that can run here: "numpy" always, "numba" with the `[fast]` extra installed."""
    return BACKENDS if _compiled.available() else ("numpy",)


def default_backend() -> str:
    """The backend `flash_attention` uses when none is named: "numba" if installed, else "numpy"."""
    return available_backends()[-1]


def _choose_backend(backend: str | None, dtype: np.dtype) -> str:
    """The backend to run: `backend` checked, or the default for this dtype."""
    if backend is None:
        # The compiled loop exists for float32 and float64 only; other dtypes take the readable loop.
        return default_backend() if dtype in _compiled_dtypes() else "numpy"
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(map(repr, BACKENDS))} or None; got {backend!r}")
    if backend == "numba":
        if not _compiled.available():
            raise ImportError(
                f"backend='numba' needs the [fast] extra, which is not installed (missing: {', '.join(_compiled.missing())}): "
                "pip install \"attention-course[fast]\", or use backend='numpy'"
            )
        if dtype not in _compiled_dtypes():
            raise TypeError(
                f"backend='numba' is compiled for float32 and float64 (float16 and bfloat16 are computed in "
                f"float32); got {dtype}. backend='numpy' and scaled_dot_product_attention take any float dtype."
            )
    return backend


def _compiled_dtypes() -> tuple[np.dtype, ...]:
    from ._compiled.driver import DTYPES

    return DTYPES


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


def _readable(q, k, v, mask, is_causal: bool, scale: float, block_q: int, block_k: int, batch: tuple,
              groups: int = 1) -> np.ndarray:
    """The "numpy" backend: `tiled_attention` on each batch index (each head) in turn.

    With groups > 1 (grouped-query attention), query head i reads key/value
    head i // groups: the shared head is indexed, never copied.
    """
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    q = np.broadcast_to(q, batch + q.shape[-2:])  # a view: no copy
    k, v = (np.broadcast_to(x, kv_batch(batch, groups) + x.shape[-2:]) for x in (k, v))  # views of h_kv heads
    if mask is not None:
        mask = np.broadcast_to(mask.reshape((1,) * (2 - mask.ndim) + mask.shape), batch + (n_q, n_k))
    out = np.empty(batch + (n_q, d_v), dtype=q.dtype)  # (..., n_q, d_v)
    for b in np.ndindex(batch):
        b_kv = kv_index(b, groups)  # the key/value head this query head shares
        tiled_attention(q[b], k[b_kv], v[b_kv], block_q, block_k, scale=scale, mask=None if mask is None else mask[b],
                        is_causal=is_causal, out=out[b])
    return out


def flash_attention(
    query,
    key,
    value,
    attn_mask=None,
    is_causal: bool = False,
    scale=None,
    block_size: int | tuple[int, int] = DEFAULT_BLOCK_SIZE,
    backend: str | None = None,
    enable_gqa: bool = False,
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
        backend: "numpy" (the readable loop), "numba" (the compiled
            accelerator of the `[fast]` extra) or None: the accelerator when
            it is installed and the dtype is one it is compiled for, else the
            readable loop. The accelerator's first call on a machine compiles
            it and caches the machine code; later processes load it.
        enable_gqa: grouped-query attention, as in
            `scaled_dot_product_attention`: query (..., h_q, n_q, d_k), key and
            value (..., h_kv, n_k, d); query head i reads key/value head
            i // (h_q / h_kv), which both backends index without copying it.

    Returns:
        (..., n_q, d_v), equal to the plain computation up to rounding; float32
        in gives float32 out (float16 and bfloat16 are computed in float32, on
        either backend, and rounded to their dtype at the end); the inputs are
        not modified. A query with nothing
        to attend to gets zeros. NaN reaches every output that can see it; a
        NaN key or value in a tile that is skipped (under is_causal) leaves the
        queries that cannot see it untouched, where the plain path, which
        multiplies it by a zero weight, gives NaN.
    """
    q, k, v = check_qkv(query, key, value, enable_gqa=enable_gqa)
    groups = kv_groups(q, k, v) if enable_gqa else 1  # query heads per key/value head
    block_q, block_k = _block_sizes(block_size)
    n_q, d_k = q.shape[-2:]
    n_k = k.shape[-2]
    scale = check_scale(scale, d_k)
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    shapes = {"query": q.shape, "key": _shared_heads(k.shape, groups), "value": _shared_heads(v.shape, groups)}
    if mask is not None and mask.ndim > 2:
        shapes["attn_mask"] = mask.shape
    batch = broadcast_batch(shapes)
    out_dtype = result_dtype(q, k, v)
    dtype = compute_dtype(out_dtype)  # the dtype of every tile: float32 for 16-bit inputs
    backend = _choose_backend(backend, dtype)
    q, k, v = (x.astype(dtype, copy=False) for x in (q, k, v))  # one dtype, so no tile converts
    if backend == "numba":
        from ._compiled import driver

        out = driver.attention(q, k, v, mask, is_causal, scale, block_q, block_k, batch, groups)
    else:
        out = _readable(q, k, v, mask, is_causal, scale, block_q, block_k, batch, groups)
    return out.astype(out_dtype, copy=False)

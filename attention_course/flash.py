"""Tiled attention with an online softmax, the idea behind FlashAttention (chapter 7).

The plain computation builds the whole (n_q, n_k) score matrix. Here the keys
are visited one tile at a time for each tile of queries, and the softmax is
accumulated on the fly: for each query we keep

    m    the largest score seen so far        (running max)
    l    sum of exp(score - m) so far          (running denominator)
    acc  sum of exp(score - m) * value so far  (running numerator)

When a new tile raises the max from m to m', what was accumulated is rescaled
by exp(m - m'), so at the end acc / l is exactly softmax(scores) @ V. Memory
holds one (block, block) tile of scores instead of n_q x n_k; the arithmetic is
the same O(n_q n_k d) as the plain version.
"""

from __future__ import annotations

import numpy as np

from ._checks import broadcast_batch, check_scale, positive_int
from .attention import check_qkv
from .masks import check_attn_mask, mask_to_bias

DEFAULT_BLOCK_SIZE = 128


def _mask_tile(mask: np.ndarray, rows: slice, cols: slice) -> np.ndarray:
    """The part of a (broadcastable) mask that covers one tile of scores."""
    if mask.ndim >= 2 and mask.shape[-2] != 1:
        mask = mask[..., rows, :]
    if mask.shape[-1] != 1:
        mask = mask[..., cols]
    return mask


def _causal_tile(rows: slice, cols: slice) -> np.ndarray:
    """(bq, bk) bool: key j may be seen by query i iff j <= i (top-left aligned)."""
    i = np.arange(rows.start, rows.stop)[:, None]  # (bq, 1) query positions
    j = np.arange(cols.start, cols.stop)[None, :]  # (1, bk) key positions
    return j <= i


def flash_attention(
    query,
    key,
    value,
    attn_mask=None,
    is_causal: bool = False,
    scale=None,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> np.ndarray:
    """Exactly `scaled_dot_product_attention`, computed tile by tile.

    Args:
        query: (..., n_q, d_k); key: (..., n_k, d_k); value: (..., n_k, d_v).
        attn_mask, is_causal, scale: as in `scaled_dot_product_attention`.
            Under is_causal, key tiles that every query of a tile is masked
            from are skipped, which halves the work.
        block_size: rows of queries and of keys per tile. Peak extra memory
            grows with block_size**2, not with n_q * n_k.

    Returns:
        (..., n_q, d_v), equal to the plain computation up to rounding.
    """
    q, k, v = check_qkv(query, key, value)
    block_size = positive_int(block_size, "block_size")
    n_q, d_k = q.shape[-2:]
    n_k, d_v = v.shape[-2:]
    scale = check_scale(scale, d_k)
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    shapes = {"query": q.shape, "key": k.shape, "value": v.shape}
    if mask is not None and mask.ndim > 2:
        shapes["attn_mask"] = mask.shape
    batch = broadcast_batch(shapes)
    dtype = np.result_type(q, k, v)
    out = np.empty(batch + (n_q, d_v), dtype=dtype)  # (..., n_q, d_v)
    k_t = np.swapaxes(k, -1, -2)  # (..., n_k, d_k) -> (..., d_k, n_k), a view

    for i0 in range(0, n_q, block_size):
        rows = slice(i0, min(i0 + block_size, n_q))
        q_tile = q[..., rows, :] * np.asarray(scale, dtype=dtype)  # (..., bq, d_k), scaled once
        m = np.full(batch + (rows.stop - i0, 1), -np.inf, dtype=dtype)  # (..., bq, 1) running max
        l = np.zeros_like(m)  # (..., bq, 1) running denominator
        acc = np.zeros(batch + (rows.stop - i0, d_v), dtype=dtype)  # (..., bq, d_v) running numerator
        # Under the causal mask, keys after the tile's last query are hidden from all its rows.
        last_key = min(n_k, rows.stop) if is_causal else n_k
        for j0 in range(0, last_key, block_size):
            cols = slice(j0, min(j0 + block_size, last_key))
            s = q_tile @ k_t[..., :, cols]  # (..., bq, d_k) x (..., d_k, bk) -> (..., bq, bk)
            if is_causal and cols.stop - 1 > rows.start:  # the tile crosses the diagonal
                s = np.where(_causal_tile(rows, cols), s, -np.inf)
            if mask is not None:
                s = s + mask_to_bias(_mask_tile(mask, rows, cols), dtype)
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))  # (..., bq, 1)
            m_safe = np.where(m_new == -np.inf, 0.0, m_new).astype(dtype)  # rows masked so far: avoid -inf - -inf
            p = np.exp(s - m_safe)  # (..., bq, bk) unnormalised weights of this tile
            alpha = np.exp(m - m_safe)  # (..., bq, 1) rescales what was summed under the old max
            l = alpha * l + p.sum(axis=-1, keepdims=True)
            acc = alpha * acc + p @ v[..., cols, :]  # (..., bq, bk) x (..., bk, d_v) -> (..., bq, d_v)
            m = m_new
        # A row that saw only -inf has l == 0: it attends to nothing and gets zeros.
        out[..., rows, :] = np.divide(acc, l, out=np.zeros_like(acc), where=l != 0)
    return out

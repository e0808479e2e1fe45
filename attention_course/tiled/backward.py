"""The backward pass of tiled attention, as FlashAttention-2 computes it (book/backward.ipynb).

The plain backward (`core/backward.py`) needs the (n_q, n_k) weights P of the
forward pass. A tiled forward never held them, and storing them would undo
its point. It keeps two things instead: the output O, and one number per
query, the log-sum-exp of its scores,

    lse_i = log sum_j exp(s_ij) = m_i + log(l_i)   (the online softmax's running max and sum)

from which any weight can be rebuilt from its score alone: p_ij = exp(s_ij - lse_i).
The backward then visits the tiles again and, for each one, recomputes the
scores S = Q_i K_j^T * scale, the weights P = exp(S - lse_i), and adds the
tile's share to every gradient:

    dV_j += P^T dO_i
    dP    = dO_i V_j^T
    dS    = P * (dP - D_i),   D_i = rowsum(O_i * dO_i)   (one number per query, from the output)
    dQ_i += scale * dS K_j
    dK_j += scale * dS^T Q_i

Only tiles of scores exist at any time: the extra memory does not grow
with n. The price is work: the scores and their exponentials are computed a
second time, and there are five tile products instead of the forward's two
(`chapters/cost.backward_flops` counts them).

`flash_attention_forward` is the tiled forward that also returns the
log-sum-exp; `backward_query_tile` is the loop over the key tiles of one tile
of queries (what the backward exercise asks for); `flash_attention_backward`
runs it over every tile of queries and every head.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import as_float_array, broadcast_batch, check_scale, compute_dtype, result_dtype
from ..core.attention import check_qkv
from ..core.backward import check_grad_output, sum_to_shape
from ..core.masks import check_attn_mask
from .flash import DEFAULT_BLOCK_SIZE, _block_sizes
from .online_softmax import keys_seen, tile_scores, tiled_attention, tiles


def _checked(query, key, value, attn_mask, is_causal, scale):
    """check_qkv, the mask and the scale; returns (q, k, v, mask, scale, batch)."""
    q, k, v = check_qkv(query, key, value)
    n_q, d_k = q.shape[-2:]
    n_k = k.shape[-2]
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    shapes = {"query": q.shape, "key": k.shape, "value": v.shape}
    if mask is not None and mask.ndim > 2:
        shapes["attn_mask"] = mask.shape
    return q, k, v, mask, check_scale(scale, d_k), broadcast_batch(shapes)


def _full_batch(mask, batch: tuple, n_q: int, n_k: int, *arrays):
    """Views (no copies) of the arrays and the mask with the whole batch shape, so each batch index picks its own."""
    views = tuple(np.broadcast_to(x, batch + x.shape[-2:]) for x in arrays)
    if mask is not None:
        mask = np.broadcast_to(mask.reshape((1,) * (2 - mask.ndim) + mask.shape), batch + (n_q, n_k))
    return views, mask


def _check_lse(lse, batch: tuple, n_q: int) -> np.ndarray:
    """`lse` as a float array of shape batch + (n_q,): one log-sum-exp per query."""
    lse = as_float_array(lse, "lse")
    want = tuple(batch) + (n_q,)
    if lse.shape != want:
        raise ValueError(
            f"lse must hold one log-sum-exp per query, shape (..., n_q) = {want}, as flash_attention_forward "
            f"returns it; got shape {lse.shape}"
        )
    return lse


def flash_attention_forward(query, key, value, attn_mask=None, is_causal: bool = False, scale=None,
                            block_size: int | tuple[int, int] = DEFAULT_BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """The tiled forward pass that also keeps, for the backward pass, each query's log-sum-exp.

    Args:
        query: (..., n_q, d_k); key: (..., n_k, d_k); value: (..., n_k, d_v).
        attn_mask, is_causal, scale: as in `scaled_dot_product_attention`.
        block_size: queries and keys per tile, an int or a pair (block_q, block_k).

    Returns:
        (output, lse): output (..., n_q, d_v), as `flash_attention` returns it
        (in the inputs' dtype); lse (..., n_q), log sum_j exp(s_ij) over the
        scaled, masked scores of query i, in the dtype the tiles are computed
        in (float32 for float16 and bfloat16 inputs, as FlashAttention keeps
        it), -inf for a query with nothing to attend to. This is the readable
        NumPy loop (`tiled_attention`), whatever backend `flash_attention`
        would choose.
    """
    q, k, v, mask, scale, batch = _checked(query, key, value, attn_mask, is_causal, scale)
    block_q, block_k = _block_sizes(block_size)
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    out_dtype = result_dtype(q, k, v)
    work = compute_dtype(out_dtype)  # 16-bit inputs: every tile in float32
    (q, k, v), mask = _full_batch(mask, batch, n_q, n_k, *(x.astype(work, copy=False) for x in (q, k, v)))
    out = np.empty(batch + (n_q, d_v), dtype=work)  # (..., n_q, d_v)
    lse = np.empty(batch + (n_q,), dtype=work)  # (..., n_q)
    for b in np.ndindex(batch):
        tiled_attention(q[b], k[b], v[b], block_q, block_k, scale=scale, mask=None if mask is None else mask[b],
                        is_causal=is_causal, out=out[b], lse=lse[b])
    return out.astype(out_dtype, copy=False), lse


def tile_weights(scores: np.ndarray, lse: np.ndarray) -> np.ndarray:
    """The forward's weights of one tile, rebuilt from its scores: exp(s - lse), with no sum over the keys.

    Args:
        scores: (bq, bk) the tile's scaled, masked scores (-inf where hidden).
        lse: (bq,) each query's log-sum-exp over all its keys.

    Returns:
        (bq, bk) weights p_ij = exp(s_ij - lse_i), already normalised. A query
        with nothing to attend to has lse = -inf and scores -inf; it is
        shifted by 0 instead (-inf - -inf would be NaN), so its weights are 0.
    """
    shift = np.where(lse == -np.inf, 0, lse)  # (bq,)
    return np.exp(scores - shift[:, None])  # (bq, bk)


def backward_query_tile(q: np.ndarray, k: np.ndarray, v: np.ndarray, o: np.ndarray, do: np.ndarray, lse: np.ndarray,
                        block_k: int, *, scale: float, mask: np.ndarray | None = None, first_query: int = 0,
                        is_causal: bool = False, dk: np.ndarray | None = None, dv: np.ndarray | None = None):
    """The gradients from one tile of queries, visiting the keys one tile at a time.

    Args:
        q: (bq, d_k) the tile's queries; o: (bq, d_v) their outputs; do: (bq, d_v)
            dL/dO for them; lse: (bq,) their log-sum-exps from the forward pass.
        k: (n_k, d_k) every key; v: (n_k, d_v) every value. One float dtype throughout.
        block_k: keys per tile.
        scale: multiplies the scores, as in the forward pass.
        mask: None, or the tile's rows of the mask: (bq, n_k), boolean or float.
        first_query: the index of q's first row among all the queries (for is_causal).
        is_causal: hide key j from query i when j > i; key tiles after the tile's last query are skipped.
        dk, dv: None, or (n_k, d_k) and (n_k, d_v) arrays to add this tile's shares into
            (the full backward passes the same ones for every tile of queries).

    Returns:
        (dq, dk, dv): dq (bq, d_k), these queries' whole gradient; dk (n_k, d_k)
        and dv (n_k, d_v), the shares these queries add to the keys' and
        values' gradients (accumulated into the arrays passed in, if any).
    """
    rows = slice(first_query, first_query + q.shape[0])
    dk = np.zeros(k.shape, dtype=q.dtype) if dk is None else dk
    dv = np.zeros(v.shape, dtype=q.dtype) if dv is None else dv
    d = np.sum(o * do, axis=-1)  # (bq,) D = rowsum(O * dO), equal to rowsum(P * dP)
    dq = np.zeros(q.shape, dtype=q.dtype)  # (bq, d_k)
    for keys in tiles(keys_seen(rows, k.shape[0], is_causal), block_k):
        mask_tile = None if mask is None else mask[:, keys]
        s = tile_scores(q, k[keys], scale, mask_tile, rows, keys, is_causal)  # (bq, bk), recomputed
        p = tile_weights(s, lse)  # (bq, bk) the forward's weights, rebuilt
        dv[keys] += p.T @ do  # (bk, bq) x (bq, d_v) -> (bk, d_v): summed over the queries
        dp = do @ v[keys].T  # (bq, d_v) x (d_v, bk) -> (bq, bk)
        ds = p * (dp - d[:, None])  # (bq, bk) dL/dS
        dq += scale * (ds @ k[keys])  # (bq, bk) x (bk, d_k) -> (bq, d_k): summed over the keys
        dk[keys] += scale * (ds.T @ q)  # (bk, bq) x (bq, d_k) -> (bk, d_k): summed over the queries
    return dq, dk, dv


def flash_attention_backward(query, key, value, output, lse, grad_output, attn_mask=None, is_causal: bool = False,
                             scale=None, block_size: int | tuple[int, int] = DEFAULT_BLOCK_SIZE):
    """Gradients for query, key and value from the output and the log-sum-exp alone, tile by tile.

    Equal to `attention_backward` up to rounding, without ever holding an
    (n_q, n_k) array: each tile's scores and weights are recomputed from Q, K
    and the stored lse.

    Args:
        query: (..., n_q, d_k); key: (..., n_k, d_k); value: (..., n_k, d_v):
            the forward pass's inputs.
        output: (..., n_q, d_v) and lse: (..., n_q): what
            `flash_attention_forward` returned for them.
        grad_output: (..., n_q, d_v) dL/dO.
        attn_mask, is_causal, scale: as in the forward pass.
        block_size: queries and keys per tile, an int or a pair (block_q, block_k).

    Returns:
        (dq, dk, dv) with the shapes and dtypes of query, key and value (summed
        over the batch dims an input was broadcast along). float16 and
        bfloat16 are computed and accumulated in float32 and each gradient
        rounded to its input's dtype at the end. The inputs are not modified.
    """
    q, k, v, mask, scale, batch = _checked(query, key, value, attn_mask, is_causal, scale)
    block_q, block_k = _block_sizes(block_size)
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    o = check_grad_output(output, batch, n_q, d_v, name="output")
    do = check_grad_output(grad_output, batch, n_q, d_v)
    lse = _check_lse(lse, batch, n_q)
    shapes, dtypes = (q.shape, k.shape, v.shape), (q.dtype, k.dtype, v.dtype)
    work = compute_dtype(result_dtype(q, k, v, o, do))  # 16-bit inputs: every tile, and the sums, in float32
    q, k, v, o, do, lse = (x.astype(work, copy=False) for x in (q, k, v, o, do, lse))
    (q, k, v), mask = _full_batch(mask, batch, n_q, n_k, q, k, v)
    dq = np.empty(batch + q.shape[-2:], dtype=work)  # (..., n_q, d_k)
    dk = np.zeros(batch + k.shape[-2:], dtype=work)  # (..., n_k, d_k), every query tile adds its share
    dv = np.zeros(batch + v.shape[-2:], dtype=work)  # (..., n_k, d_v)
    for b in np.ndindex(batch):
        for rows in tiles(n_q, block_q):
            dq[b][rows], _, _ = backward_query_tile(
                q[b][rows], k[b], v[b], o[b][rows], do[b][rows], lse[b][rows], block_k, scale=scale,
                mask=None if mask is None else mask[b][rows], first_query=rows.start, is_causal=is_causal,
                dk=dk[b], dv=dv[b])
    return tuple(sum_to_shape(g, shape).astype(dt, copy=False) for g, shape, dt in zip((dq, dk, dv), shapes, dtypes))

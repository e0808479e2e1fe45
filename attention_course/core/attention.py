"""Scaled dot-product attention, the plain readable reference (book/worked_example.ipynb).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + mask) V

Names and semantics follow `torch.nn.functional.scaled_dot_product_attention`
so that what is learned here transfers. This is the version the book shows;
`flash_attention` computes the same numbers tile by tile.

Grouped-query attention (`enable_gqa=True`, book/decoding.ipynb) lets
several query heads share one key/value head, as torch's argument of the same
name does: `repeat_kv` spells out which query heads share which, and the
computation groups the query heads instead of copying the shared heads.
"""

from __future__ import annotations

import numpy as np

from ._checks import (
    as_float_array,
    broadcast_batch,
    check_scale,
    in_compute_dtype,
    require_ndim,
    require_same,
)
from .masks import causal_mask, check_attn_mask, mask_to_bias
from .softmax import softmax


def check_qkv(query, key, value=None, enable_gqa: bool = False):
    """Convert and check query, key (and value); return them as float arrays.

    query: (..., n_q, d_k), key: (..., n_k, d_k), value: (..., n_k, d_v).
    With enable_gqa, query: (..., h_q, n_q, d_k) and key, value:
    (..., h_kv, n_k, d) with h_q a multiple of h_kv (see `kv_groups`).
    Raises TypeError/ValueError naming the argument whose type or shape is wrong.
    """
    if not isinstance(enable_gqa, (bool, np.bool_)):
        raise TypeError(f"enable_gqa must be True or False; got {enable_gqa!r}")
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    require_ndim(q, "query", 2, "(..., n_q, d_k)", hint="For a single query vector q, pass q[None, :].")
    require_ndim(k, "key", 2, "(..., n_k, d_k)")
    require_same(q.shape[-1], k.shape[-1], "d_k (the last axis of query and key)", ("query", q.shape), ("key", k.shape))
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be at least 1; query has shape {q.shape}")
    if k.shape[-2] == 0:
        raise ValueError(f"there must be at least one key; key has shape {k.shape}")
    v = None
    if value is not None:
        v = as_float_array(value, "value")
        require_ndim(v, "value", 2, "(..., n_k, d_v)")
        require_same(k.shape[-2], v.shape[-2], "n_k (the number of keys and of values)", ("key", k.shape), ("value", v.shape))
    if enable_gqa:
        groups = kv_groups(q, k, v)
        shapes = {"query": q.shape, "key": _shared_heads(k.shape, groups)}
        if v is not None:
            shapes["value"] = _shared_heads(v.shape, groups)
    else:
        shapes = {"query": q.shape, "key": k.shape}
        if v is not None:
            shapes["value"] = v.shape
    try:
        broadcast_batch(shapes)
    except ValueError as err:
        h_q, h_kv = q.shape[-3] if q.ndim >= 3 else 1, k.shape[-3] if k.ndim >= 3 else 1
        if not enable_gqa and h_kv < h_q and h_q % h_kv == 0:
            raise ValueError(f"{err}. For grouped-query attention ({h_q} query heads sharing {h_kv} "
                             "key/value heads), pass enable_gqa=True") from None
        raise
    return q, k, v


def kv_groups(query: np.ndarray, key: np.ndarray, value: np.ndarray | None = None) -> int:
    """g = h_q / h_kv, the query heads per key/value head, for grouped-query attention.

    query: (..., h_q, n_q, d_k); key, value: (..., h_kv, n_k, d). Raises
    ValueError unless both have a head axis, key and value have the same
    number of heads and h_q is a multiple of h_kv, as torch requires.
    """
    require_ndim(query, "query", 3, "(..., h_q, n_q, d_k) with enable_gqa")
    require_ndim(key, "key", 3, "(..., h_kv, n_k, d_k) with enable_gqa")
    h_q, h_kv = query.shape[-3], key.shape[-3]
    if value is not None:
        require_ndim(value, "value", 3, "(..., h_kv, n_k, d_v) with enable_gqa")
        require_same(h_kv, value.shape[-3], "the number of key/value heads (axis -3 of key and value)",
                     ("key", key.shape), ("value", value.shape))
    if h_kv == 0 or h_q % h_kv:
        raise ValueError(
            f"with enable_gqa the query heads must be a multiple of the key/value heads: query has shape "
            f"{query.shape} ({h_q} heads), key has shape {key.shape} ({h_kv} heads)"
        )
    return h_q // h_kv


def _shared_heads(shape: tuple, groups: int) -> tuple:
    """The shape of key or value once each of its heads serves `groups` query heads."""
    if groups == 1:
        return shape
    return shape[:-3] + (shape[-3] * groups,) + shape[-2:]


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """(..., h_kv, n, d) -> (..., h_kv * n_rep, n, d): each head repeated n_rep times in a row.

    Head j of key/value serves query heads j*n_rep .. j*n_rep + n_rep - 1:
    with 2 key/value heads and 4 query heads the order is 0, 0, 1, 1 (torch's
    `repeat_interleave`, Hugging Face's `repeat_kv`), not 0, 1, 0, 1.
    `enable_gqa=True` computes the same thing without the copy.
    """
    return np.repeat(x, n_rep, axis=-3)  # (..., h_kv, n, d) -> (..., h_kv * n_rep, n, d), a copy


def _grouped(x: np.ndarray, groups: int) -> np.ndarray:
    """(..., h_q, n, m) -> (..., h_kv, g, n, m): query head i becomes head i % g of group i // g (a view)."""
    return x.reshape(*x.shape[:-3], x.shape[-3] // groups, groups, *x.shape[-2:])


def _ungrouped(x: np.ndarray) -> np.ndarray:
    """(..., h_kv, g, n, m) -> (..., h_q, n, m), the inverse of `_grouped`."""
    return x.reshape(*x.shape[:-4], x.shape[-4] * x.shape[-3], *x.shape[-2:])


def _scores(q: np.ndarray, k: np.ndarray, scale: float, enable_gqa: bool = False) -> np.ndarray:
    """q k^T * scale for already-checked arrays."""
    k_t = np.swapaxes(k, -1, -2)  # (..., d_k, n_k)
    if enable_gqa:  # each group of g query heads meets its one key/value head, which is shared, not copied
        groups = kv_groups(q, k)
        scores = _grouped(q, groups) @ k_t[..., None, :, :]  # (..., h_kv, g, n_q, d_k) x (..., h_kv, 1, d_k, n_k)
        return _ungrouped(scores) * scale  # (..., h_kv, g, n_q, n_k) -> (..., h_q, n_q, n_k)
    return (q @ k_t) * scale  # (..., n_q, d_k) x (..., d_k, n_k) -> (..., n_q, n_k)


def _weights(q: np.ndarray, k: np.ndarray, attn_mask, is_causal: bool, scale, enable_gqa: bool = False) -> np.ndarray:
    """softmax(q k^T * scale + mask) for already-checked arrays."""
    n_q, d_k = q.shape[-2:]
    n_k = k.shape[-2]
    scale = check_scale(scale, d_k)
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    if is_causal:
        mask = causal_mask(n_q, n_k)
    scores = _scores(q, k, scale, enable_gqa)  # (..., n_q, n_k)
    if mask is not None:
        scores = scores + mask_to_bias(mask, scores.dtype)  # masked scores -> -inf; (..., n_q, n_k)
    return softmax(scores, axis=-1)


def _mix(weights: np.ndarray, v: np.ndarray, enable_gqa: bool = False) -> np.ndarray:
    """weights @ V for already-checked arrays; with enable_gqa, each group of query heads mixes its shared values."""
    if not enable_gqa:
        return weights @ v  # (..., n_q, n_k) x (..., n_k, d_v) -> (..., n_q, d_v)
    groups = weights.shape[-3] // v.shape[-3]
    mixed = _grouped(weights, groups) @ v[..., None, :, :]  # (..., h_kv, g, n_q, n_k) x (..., h_kv, 1, n_k, d_v)
    return _ungrouped(mixed)  # (..., h_kv, g, n_q, d_v) -> (..., h_q, n_q, d_v)


def attention_scores(query, key, scale=None, enable_gqa: bool = False) -> np.ndarray:
    """The scores Q K^T * scale, before any mask or softmax.

    Models that change the scores before the softmax (a soft cap, a sink
    column: `core.softcap`, `core.sinks`) start from these.

    Args:
        query: (..., n_q, d_k) queries Q.
        key: (..., n_k, d_k) keys K. Leading batch/head dims broadcast with query's.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).
        enable_gqa: grouped-query attention, as in `attention_weights`.

    Returns:
        (..., n_q, n_k) scores (with enable_gqa, (..., h_q, n_q, n_k)), in
        the inputs' float dtype.
    """
    q, k, _ = check_qkv(query, key, enable_gqa=enable_gqa)
    return _scores(q, k, check_scale(scale, q.shape[-1]), enable_gqa)


def attention_weights(query, key, attn_mask=None, is_causal: bool = False, scale=None,
                      enable_gqa: bool = False) -> np.ndarray:
    """The attention weights softmax(Q K^T * scale + mask).

    Args:
        query: (..., n_q, d_k) queries Q.
        key: (..., n_k, d_k) keys K. Leading batch/head dims broadcast with query's.
        attn_mask: None, a boolean mask (True = may attend) or a float mask
            (added to the scores), broadcastable to (..., n_q, n_k).
        is_causal: apply `causal_mask(n_q, n_k)`; an error together with attn_mask.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).
        enable_gqa: grouped-query attention: query (..., h_q, n_q, d_k) and
            key (..., h_kv, n_k, d_k), key head j shared by query heads
            j*g .. j*g + g - 1 with g = h_q / h_kv (see `repeat_kv`).

    Returns:
        (..., n_q, n_k) weights (with enable_gqa, (..., h_q, n_q, n_k)); each
        row sums to 1, or is all zeros if the mask leaves the query nothing
        to attend to. float16 and bfloat16 are computed in float32 and
        rounded to their dtype at the end.
    """
    q, k, _ = check_qkv(query, key, enable_gqa=enable_gqa)
    (q, k), out_dtype = in_compute_dtype(q, k)  # 16-bit inputs: float32 from here on
    return _weights(q, k, attn_mask, is_causal, scale, enable_gqa).astype(out_dtype, copy=False)


def scaled_dot_product_attention(query, key, value, attn_mask=None, is_causal: bool = False, scale=None,
                                 enable_gqa: bool = False) -> np.ndarray:
    """Attention output softmax(Q K^T * scale + mask) V, like torch's SDPA.

    Args:
        query: (..., n_q, d_k) queries Q.
        key: (..., n_k, d_k) keys K.
        value: (..., n_k, d_v) values V. Leading batch/head dims of the three
            broadcast together.
        attn_mask: None, a boolean mask (True = may attend) or a float mask
            (added to the scores), broadcastable to (..., n_q, n_k).
        is_causal: apply `causal_mask(n_q, n_k)` (lower triangle aligned
            top-left, as in torch); an error together with attn_mask.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).
        enable_gqa: grouped-query attention, as in torch: query
            (..., h_q, n_q, d_k), key and value (..., h_kv, n_k, d) with h_q a
            multiple of h_kv; key/value head j is shared by the g = h_q / h_kv
            consecutive query heads j*g .. j*g + g - 1 (see `repeat_kv`).

    Returns:
        (..., n_q, d_v) outputs, each a weighted mix of the value rows (with
        enable_gqa, (..., h_q, n_q, d_v)). A query with nothing to attend to
        (a fully masked row) gets zeros, as in torch. float32 in gives float32
        out; float16 and bfloat16 in are computed in float32 (scores, softmax
        and the product with V) and rounded to their dtype once, at the end.
        The inputs are not modified.
    """
    q, k, v = check_qkv(query, key, value, enable_gqa=enable_gqa)
    (q, k, v), out_dtype = in_compute_dtype(q, k, v)  # 16-bit inputs: float32 from here on
    weights = _weights(q, k, attn_mask, is_causal, scale, enable_gqa)  # (..., n_q, n_k)
    out = _mix(weights, v, enable_gqa)  # (..., n_q, n_k) x (..., n_k, d_v) -> (..., n_q, d_v)
    return out.astype(out_dtype, copy=False)

"""Scaled dot-product attention, the plain readable reference (book/worked_example.ipynb).

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + mask) V

Names and semantics follow `torch.nn.functional.scaled_dot_product_attention`
so that what is learned here transfers. This is the version the book shows;
`flash_attention` computes the same numbers tile by tile.
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


def check_qkv(query, key, value=None):
    """Convert and check query, key (and value); return them as float arrays.

    query: (..., n_q, d_k), key: (..., n_k, d_k), value: (..., n_k, d_v).
    Raises TypeError/ValueError naming the argument whose type or shape is wrong.
    """
    q = as_float_array(query, "query")
    k = as_float_array(key, "key")
    require_ndim(q, "query", 2, "(..., n_q, d_k)", hint="For a single query vector q, pass q[None, :].")
    require_ndim(k, "key", 2, "(..., n_k, d_k)")
    require_same(q.shape[-1], k.shape[-1], "d_k (the last axis of query and key)", ("query", q.shape), ("key", k.shape))
    if q.shape[-1] == 0:
        raise ValueError(f"d_k must be at least 1; query has shape {q.shape}")
    if k.shape[-2] == 0:
        raise ValueError(f"there must be at least one key; key has shape {k.shape}")
    shapes = {"query": q.shape, "key": k.shape}
    if value is None:
        broadcast_batch(shapes)
        return q, k, None
    v = as_float_array(value, "value")
    require_ndim(v, "value", 2, "(..., n_k, d_v)")
    require_same(k.shape[-2], v.shape[-2], "n_k (the number of keys and of values)", ("key", k.shape), ("value", v.shape))
    shapes["value"] = v.shape
    broadcast_batch(shapes)
    return q, k, v


def _weights(q: np.ndarray, k: np.ndarray, attn_mask, is_causal: bool, scale) -> np.ndarray:
    """softmax(q k^T * scale + mask) for already-checked arrays."""
    n_q, d_k = q.shape[-2:]
    n_k = k.shape[-2]
    scale = check_scale(scale, d_k)
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    if is_causal:
        mask = causal_mask(n_q, n_k)
    scores = (q @ np.swapaxes(k, -1, -2)) * scale  # (..., n_q, d_k) x (..., d_k, n_k) -> (..., n_q, n_k)
    if mask is not None:
        scores = scores + mask_to_bias(mask, scores.dtype)  # masked scores -> -inf; (..., n_q, n_k)
    return softmax(scores, axis=-1)


def attention_weights(query, key, attn_mask=None, is_causal: bool = False, scale=None) -> np.ndarray:
    """The attention weights softmax(Q K^T * scale + mask).

    Args:
        query: (..., n_q, d_k) queries Q.
        key: (..., n_k, d_k) keys K. Leading batch/head dims broadcast with query's.
        attn_mask: None, a boolean mask (True = may attend) or a float mask
            (added to the scores), broadcastable to (..., n_q, n_k).
        is_causal: apply `causal_mask(n_q, n_k)`; an error together with attn_mask.
        scale: multiplies the scores; defaults to 1/sqrt(d_k).

    Returns:
        (..., n_q, n_k) weights; each row sums to 1, or is all zeros if the
        mask leaves the query nothing to attend to. float16 and bfloat16 are
        computed in float32 and rounded to their dtype at the end.
    """
    q, k, _ = check_qkv(query, key)
    (q, k), out_dtype = in_compute_dtype(q, k)  # 16-bit inputs: float32 from here on
    return _weights(q, k, attn_mask, is_causal, scale).astype(out_dtype, copy=False)


def scaled_dot_product_attention(query, key, value, attn_mask=None, is_causal: bool = False, scale=None) -> np.ndarray:
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

    Returns:
        (..., n_q, d_v) outputs, each a weighted mix of the value rows. A query
        with nothing to attend to (a fully masked row) gets zeros, as in torch.
        float32 in gives float32 out; float16 and bfloat16 in are computed in
        float32 (scores, softmax and the product with V) and rounded to their
        dtype once, at the end. The inputs are not modified.
    """
    q, k, v = check_qkv(query, key, value)
    (q, k, v), out_dtype = in_compute_dtype(q, k, v)  # 16-bit inputs: float32 from here on
    weights = _weights(q, k, attn_mask, is_causal, scale)  # (..., n_q, n_k)
    out = weights @ v  # (..., n_q, n_k) x (..., n_k, d_v) -> (..., n_q, d_v)
    return out.astype(out_dtype, copy=False)

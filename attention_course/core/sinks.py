"""Attention sinks: one learned logit per head that joins every softmax row and takes weight from the keys (gpt-oss).

    w_ij = exp(s_ij) / (exp(sink_h) + sum_j' exp(s_ij'))      for each key j of head h

The sink is a column of the softmax with no value behind it: the weight it
takes goes nowhere, so the weights over the keys sum to less than 1 and a
query with nothing worth reading can put most of its weight on the sink
instead of on some key. gpt-oss learns one sink logit per head; transformers
drops the sink's column from the weights it returns, and so does this
module.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, require_ndim
from .attention import _mix, attention_scores, check_qkv
from .masks import check_attn_mask, mask_to_bias
from .softmax import softmax


def sink_softmax(scores, sinks) -> np.ndarray:
    """Softmax of each row of `scores` with its head's sink logit joined as one more column, then dropped.

    Args:
        scores: (..., h, n_q, n_k) scores after scaling and masking (-inf
            for masked keys).
        sinks: (h,) one logit per head.

    Returns:
        (..., h, n_q, n_k) weights over the keys only: each row sums to
        1 - (the sink's weight), less than 1. A row whose keys are all
        masked puts all its weight on the sink and gets zeros.
    """
    s = as_float_array(scores, "scores")
    require_ndim(s, "scores", 3, "(..., h, n_q, n_k)")
    sink = as_float_array(sinks, "sinks")
    if sink.shape != (s.shape[-3],):
        raise ValueError(f"sinks must have shape (h,) = ({s.shape[-3]},), one logit per head of scores "
                         f"(shape {s.shape}); got shape {sink.shape}")
    column = np.broadcast_to(sink.astype(s.dtype)[:, None, None], s.shape[:-1] + (1,))  # (h,) -> (..., h, n_q, 1)
    joined = np.concatenate([s, column], axis=-1)  # (..., h, n_q, n_k + 1): the sink is the last column
    return softmax(joined, axis=-1)[..., :-1]  # (..., h, n_q, n_k): the sink's column dropped


def sink_attention(query, key, value, sinks, attn_mask=None, scale=None, enable_gqa: bool = False):
    """Attention with a sink logit per head: (output (..., h, n_q, d_v), weights (..., h, n_q, n_k)).

    Args:
        query: (..., h, n_q, d_k); key: (..., h_kv, n_k, d_k); value: (..., h_kv, n_k, d_v).
        sinks: (h,) one logit per query head.
        attn_mask: None, a boolean mask (True = may attend) or a float mask,
            broadcastable to (..., h, n_q, n_k).
        scale: multiplies the scores; defaults to 1/sqrt(d_k).
        enable_gqa: key/value head j serves query heads j*g .. j*g + g - 1 (g = h / h_kv).

    Returns:
        The output, each row mixing the values with weights that sum to less
        than 1 (the sink's share mixes nothing), and those weights.
    """
    q, k, v = check_qkv(query, key, value, enable_gqa=enable_gqa)
    require_ndim(q, "query", 3, "(..., h, n_q, d_k)")
    scores = attention_scores(q, k, scale=scale, enable_gqa=enable_gqa)  # (..., h, n_q, n_k)
    mask = check_attn_mask(attn_mask, False, q.shape[-2], k.shape[-2])
    if mask is not None:
        scores = scores + mask_to_bias(mask, scores.dtype)  # masked keys -> -inf
    weights = sink_softmax(scores, sinks)  # (..., h, n_q, n_k)
    return _mix(weights, v, enable_gqa), weights  # (..., h, n_q, n_k) x (..., h_kv, n_k, d_v) -> (..., h, n_q, d_v)

"""Sparse attention chosen by a lightning indexer: each query reads only its k best keys (DeepSeek-V3.2, GLM-5).

Full causal attention scores every query against every earlier key. DeepSeek
Sparse Attention first ranks the keys with a cheap *indexer* and then runs the
ordinary softmax over the `k` keys it ranked highest, the others masked:

    I[t, s] = sum_h w[t, h] * relu(scale * q_I[t, h] . k_I[s])      (indexer_scores)
    keep[t] = the k visible keys s with the largest I[t, s]          (top_k_mask)
    out[t]  = softmax over the kept keys of Q K^T * scale, times V   (sparse_attention)

The indexer has a few heads of its own (h_I of them, d_I wide), one key per
token shared by all its heads (k_I), and a weight per query and head (w)
computed from the hidden state; relu keeps a head from voting against a key.
Its scores pick keys, nothing more: they are never softmaxed, and the main
attention that follows is the model's usual one (multi-head latent attention
in DeepSeek-V3.2 and GLM-5).

Selection follows `torch.topk` as transformers calls it, restricted to the
keys the causal mask lets a query see:

- a query that sees k keys or fewer keeps all of them, so with k >= n_k
  sparse attention is exactly full causal attention;
- a key the query may not see (the future) is never kept, whatever its score;
- ties at the k-th place are broken by position, the earlier key first.
  `torch.topk` leaves the order of exactly equal scores unspecified (on CPU
  it picks neither the earlier nor the later consistently), so where several
  visible keys share the k-th best score, transformers may keep another of
  them; the scores kept are the same either way. Such ties are not rare:
  a key every indexer head scores below zero gets I = 0 exactly (the relu),
  and with few heads several keys often do. `ties="torch"` keeps the keys
  torch.topk keeps on a Linux CPU (`_topk_ties` replays its algorithm), which
  is how the decoder matches transformers key for key.

Masks follow the package's convention: True = may attend.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_scale, in_compute_dtype, positive_int, require_ndim
from .attention import _mix, attention_weights, check_qkv
from .masks import causal_mask, check_attn_mask


def indexer_scores(q_index, k_index, head_weights, scale=None) -> np.ndarray:
    """The lightning indexer's scores I[t, s] = sum_h w[t, h] * relu(scale * q_I[t, h] . k_I[s]).

    Args:
        q_index: (..., h_I, n_q, d_I) the indexer's queries, one per indexer head.
        k_index: (..., n_k, d_I) the indexer's keys, one per token, shared by every indexer head.
        head_weights: (..., n_q, h_I) how much each query trusts each indexer head
            (w; any sign: a negative weight turns a head's vote against a key).
        scale: multiplies each head's dot products before the relu; defaults to 1/sqrt(d_I).

    Returns:
        (..., n_q, n_k) scores, used only to rank the keys (never softmaxed).
        No mask is applied: `top_k_mask` hides the future. float16 and
        bfloat16 are computed in float32 and returned in their dtype.
    """
    q = as_float_array(q_index, "q_index")
    k = as_float_array(k_index, "k_index")
    w = as_float_array(head_weights, "head_weights")
    require_ndim(q, "q_index", 3, "(..., h_I, n_q, d_I)")
    require_ndim(k, "k_index", 2, "(..., n_k, d_I)")
    require_ndim(w, "head_weights", 2, "(..., n_q, h_I)")
    h_i, n_q, d_i = q.shape[-3:]
    if k.shape[-1] != d_i:
        raise ValueError(f"d_I (the last axis of q_index and k_index) must agree: q_index has shape {q.shape}, "
                         f"k_index has shape {k.shape}")
    if w.shape[-2:] != (n_q, h_i):
        raise ValueError(f"head_weights must have shape (..., n_q, h_I) = (..., {n_q}, {h_i}) for q_index of shape "
                         f"{q.shape}; got shape {w.shape}")
    scale = check_scale(scale, d_i)
    (q, k, w), out_dtype = in_compute_dtype(q, k, w)
    try:
        per_head = q @ np.swapaxes(k, -1, -2)[..., None, :, :]  # (..., h_I, n_q, d_I) x (..., 1, d_I, n_k)
        per_head = np.maximum(per_head * scale, 0.0)  # (..., h_I, n_q, n_k): relu, each head votes for or abstains
        per_head = np.swapaxes(per_head, -3, -2)  # (..., h_I, n_q, n_k) -> (..., n_q, h_I, n_k)
        scores = (w[..., :, None, :] @ per_head)[..., 0, :]  # (..., n_q, 1, h_I) x (..., n_q, h_I, n_k) -> (..., n_q, n_k)
    except ValueError:
        raise ValueError(f"the leading (batch) axes of q_index {q.shape[:-3]}, k_index {k.shape[:-2]} and "
                         f"head_weights {w.shape[:-2]} do not broadcast together") from None
    return scores.astype(out_dtype, copy=False)


def top_k_mask(scores, k: int, *, causal: bool = True, attn_mask=None, ties: str = "earlier") -> np.ndarray:
    """Boolean mask (True = may attend) of the k highest-scoring keys each query may see.

    Args:
        scores: (..., n_q, n_k) the indexer's scores (`indexer_scores`).
        k: how many keys each query keeps (the model's `index_topk`); a
            positive int, larger than n_k allowed.
        causal: hide the future first: query i sits at position n_k - n_q + i
            (aligned lower-right, as new queries meet a cache of earlier keys,
            `causal_mask(n_q, n_k, lower_right=True)`) and may see keys
            0 .. n_k - n_q + i.
        attn_mask: None or a boolean mask broadcastable to (..., n_q, n_k),
            True for the keys a query may see (padding, say), combined with the
            causal one.
        ties: which of several keys sharing the k-th best score are kept:
            "earlier" (the earlier ones) or "torch" (those torch.topk keeps
            on a Linux CPU, as transformers' indexer does: the row's n_k scores,
            hidden keys at -inf, selected as torch's C++ code selects them).

    Returns:
        (..., n_q, n_k) bool: True at the min(k, number visible) visible keys
        with the largest scores. A query that sees k keys or fewer keeps them
        all; a key it may not see is never kept; a query that sees none (only
        with n_q > n_k, or a mask hiding every key) keeps none. Ties at the
        k-th place keep the earlier key, or follow torch.topk (see the module
        docstring).
    """
    s = as_float_array(scores, "scores")
    require_ndim(s, "scores", 2, "(..., n_q, n_k)")
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"k must be a positive int; got {k!r}")
    k = positive_int(k, "k")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False; got {causal!r}")
    if ties not in ("earlier", "torch"):
        raise ValueError(f"ties must be 'earlier' or 'torch'; got {ties!r}")
    n_q, n_k = s.shape[-2:]
    visible = causal_mask(n_q, n_k, lower_right=True) if causal else np.ones((n_q, n_k), dtype=bool)  # (n_q, n_k)
    mask = check_attn_mask(attn_mask, False, n_q, n_k)
    if mask is not None:
        if mask.dtype != bool:
            raise TypeError(f"attn_mask must be boolean (True = may see) to choose keys; got dtype {mask.dtype}")
        visible = visible & mask  # (..., n_q, n_k)
    visible = np.broadcast_to(visible, np.broadcast_shapes(visible.shape, s.shape))
    if np.isnan(np.where(visible, s, 0.0)).any():
        raise ValueError("scores has NaN at a key a query may see: NaN cannot be ranked")
    ranked = np.where(visible, s, -np.inf)  # (..., n_q, n_k): a hidden key ranks below every visible one
    order = np.argsort(-ranked, axis=-1, kind="stable")  # (..., n_q, n_k): keys best first, earlier first on ties
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(n_k), axis=-1)  # rank[..., t, s] = place of key s in query t's order
    keep = visible & (rank < k)  # (..., n_q, n_k)
    if ties == "torch" and n_k > k:
        keep = _torch_ties(ranked, keep, order, k)
    return keep


def _torch_ties(ranked: np.ndarray, keep: np.ndarray, order: np.ndarray, k: int) -> np.ndarray:
    """keep, with each row whose k-th best score is shared by a key left out chosen again as torch.topk chooses."""
    from ._topk_ties import torch_topk_indices  # only needed where a tie decides

    kth = np.take_along_axis(ranked, order[..., k - 1:k], axis=-1)  # (..., n_q, 1) the k-th best score
    tied = ((ranked == kth) & ~keep).any(axis=-1) & np.isfinite(kth[..., 0])  # (..., n_q): an equal key left out
    if not tied.any():
        return keep
    keep = keep.copy()
    for row in zip(*np.nonzero(tied)):
        chosen = np.zeros(ranked.shape[-1], dtype=bool)
        chosen[list(torch_topk_indices(ranked[row].tolist(), k))] = True
        keep[row] = chosen & np.isfinite(ranked[row])  # a hidden key (-inf) is never kept
    return keep


def sparse_attention(query, key, value, index_scores, k: int, *, scale=None, causal: bool = True,
                     enable_gqa: bool = False):
    """Attention over each query's k best keys: (output (..., h, n_q, d_v), weights (..., h, n_q, n_k)).

    Args:
        query: (..., h, n_q, d_k) queries Q.
        key: (..., h_kv, n_k, d_k) keys K; value: (..., h_kv, n_k, d_v) values V.
        index_scores: (..., n_q, n_k) the indexer's scores, one ranking shared
            by every head (`indexer_scores`).
        k: keys kept per query (`top_k_mask`).
        scale: multiplies Q K^T; defaults to 1/sqrt(d_k).
        causal: queries aligned lower-right, as in `top_k_mask`.
        enable_gqa: key/value head j serves query heads j*g .. j*g + g - 1 (g = h / h_kv).

    Returns:
        The output and the weights: a softmax over the kept keys only, zero at
        every other key (the kept ones then sum to 1). With k >= n_k this is
        full causal attention.
    """
    q, kk, v = check_qkv(query, key, value, enable_gqa=enable_gqa)
    require_ndim(q, "query", 3, "(..., h, n_q, d_k)")
    s = as_float_array(index_scores, "index_scores")
    require_ndim(s, "index_scores", 2, "(..., n_q, n_k)")
    if s.shape[-2:] != (q.shape[-2], kk.shape[-2]):
        raise ValueError(f"index_scores must have shape (..., n_q, n_k) = (..., {q.shape[-2]}, {kk.shape[-2]}) for "
                         f"query {q.shape} and key {kk.shape}; got shape {s.shape}")
    keep = top_k_mask(s, k, causal=causal)[..., None, :, :]  # (..., n_q, n_k) -> (..., 1, n_q, n_k): every head
    weights = attention_weights(q, kk, attn_mask=keep, scale=scale, enable_gqa=enable_gqa)  # (..., h, n_q, n_k)
    (weights, v), out_dtype = in_compute_dtype(weights, v)
    out = _mix(weights, v, enable_gqa)  # (..., h, n_q, n_k) x (..., h_kv, n_k, d_v) -> (..., h, n_q, d_v)
    return out.astype(out_dtype, copy=False), weights.astype(out_dtype, copy=False)

"""Multi-head attention: h attention heads side by side (book/learned_projections.ipynb).

Each head has its own slice of the learned projections W_q, W_k, W_v, so each
can learn to look for something different; their outputs are concatenated and
mixed by W_o. Row-vector convention throughout: a projection is `x @ w`.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, in_compute_dtype, positive_int, require_ndim
from .attention import _weights


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """(..., n, h * d_head) -> (..., h, n, d_head)."""
    *lead, n, width = x.shape
    x = x.reshape(*lead, n, n_heads, width // n_heads)  # (..., n, h*d_head) -> (..., n, h, d_head)
    return np.swapaxes(x, -2, -3)  # (..., n, h, d_head) -> (..., h, n, d_head)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(..., h, n, d_head) -> (..., n, h * d_head), the inverse of `split_heads`."""
    *lead, h, n, d_head = x.shape
    x = np.swapaxes(x, -2, -3)  # (..., h, n, d_head) -> (..., n, h, d_head)
    return x.reshape(*lead, n, h * d_head)  # (..., n, h, d_head) -> (..., n, h*d_head)


def _check_weight(w, name: str, d_in: int, n_heads: int | None, layout: str) -> np.ndarray:
    w = as_float_array(w, name)
    if w.ndim != 2 or w.shape[0] != d_in:
        raise ValueError(f"{name} must have shape {layout} with {d_in} rows; got shape {w.shape}")
    if n_heads is not None and w.shape[1] % n_heads:
        raise ValueError(
            f"n_heads={n_heads} must divide the width of {name}, shape {w.shape}: "
            f"{w.shape[1]} is not a multiple of {n_heads}"
        )
    return w


def _check_bias(b, name: str, width: int):
    if b is None:
        return None
    b = as_float_array(b, name)
    if b.shape != (width,):
        raise ValueError(f"{name} must have shape ({width},); got shape {b.shape}")
    return b


def multi_head_attention(
    x,
    w_q,
    w_k,
    w_v,
    w_o,
    n_heads: int,
    attn_mask=None,
    is_causal: bool = False,
    *,
    b_q=None,
    b_k=None,
    b_v=None,
    b_o=None,
    need_weights: bool = False,
):
    """Multi-head self-attention of the sequence `x`.

    Args:
        x: (..., n, d_model) token vectors (row vectors).
        w_q, w_k: (d_model, h * d_k) query and key projections; head i uses
            columns i*d_k:(i+1)*d_k.
        w_v: (d_model, h * d_v) value projection.
        w_o: (h * d_v, d_out) output projection that mixes the heads.
        n_heads: h, the number of heads; must divide the widths of w_q, w_k, w_v.
        attn_mask: boolean (True = may attend) or float mask, broadcastable
            to (..., n, n) and shared by all heads (a padding mask of shape
            (B, 1, n) works as is).
        is_causal: apply the causal mask; an error together with attn_mask.
        b_q, b_k, b_v, b_o: optional biases of shapes (h*d_k,), (h*d_k,),
            (h*d_v,), (d_out,), added after each projection (BERT has them).
        need_weights: also return the weights of every head.

    Returns:
        (..., n, d_out) outputs; with need_weights=True, the pair
        (outputs, weights) with weights of shape (..., h, n, n). float16 and
        bfloat16 are computed in float32 and rounded to their dtype at the end.
    """
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., n, d_model)")
    n_heads = positive_int(n_heads, "n_heads")
    d_model = x.shape[-1]
    w_q = _check_weight(w_q, "w_q", d_model, n_heads, "(d_model, h * d_k)")
    w_k = _check_weight(w_k, "w_k", d_model, n_heads, "(d_model, h * d_k)")
    if w_k.shape != w_q.shape:
        raise ValueError(f"w_q and w_k must have the same shape; got {w_q.shape} and {w_k.shape}")
    w_v = _check_weight(w_v, "w_v", d_model, n_heads, "(d_model, h * d_v)")
    w_o = _check_weight(w_o, "w_o", w_v.shape[1], None, "(h * d_v, d_out)")
    b_q = _check_bias(b_q, "b_q", w_q.shape[1])
    b_k = _check_bias(b_k, "b_k", w_k.shape[1])
    b_v = _check_bias(b_v, "b_v", w_v.shape[1])
    b_o = _check_bias(b_o, "b_o", w_o.shape[1])
    (x, w_q, w_k, w_v, w_o), out_dtype = in_compute_dtype(x, w_q, w_k, w_v, w_o)  # 16-bit inputs: float32 from here on
    b_q, b_k, b_v, b_o = (None if b is None else b.astype(x.dtype, copy=False) for b in (b_q, b_k, b_v, b_o))

    def project(w, b):
        y = x @ w  # (..., n, d_model) x (d_model, h*d_head) -> (..., n, h*d_head)
        return y if b is None else y + b

    q = split_heads(project(w_q, b_q), n_heads)  # (..., h, n, d_k)
    k = split_heads(project(w_k, b_k), n_heads)  # (..., h, n, d_k)
    v = split_heads(project(w_v, b_v), n_heads)  # (..., h, n, d_v)
    if attn_mask is not None:
        attn_mask = np.asarray(attn_mask)
        if attn_mask.ndim >= 2:
            attn_mask = attn_mask[..., None, :, :]  # (..., n, n) -> (..., 1, n, n): same for every head
    weights = _weights(q, k, attn_mask, is_causal, None)  # (..., h, n, n)
    heads = weights @ v  # (..., h, n, n) x (..., h, n, d_v) -> (..., h, n, d_v)
    out = merge_heads(heads) @ w_o  # (..., n, h*d_v) x (h*d_v, d_out) -> (..., n, d_out)
    if b_o is not None:
        out = out + b_o
    out = out.astype(out_dtype, copy=False)
    return (out, weights.astype(out_dtype, copy=False)) if need_weights else out

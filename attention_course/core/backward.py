"""The backward pass of attention: gradients for Q, K and V from the stored weights (book/backward.ipynb).

Forward, for one head (s: scaled scores, P: weights, O: output):

    S = Q K^T * scale + mask      P = softmax(S)      O = P V

Backward, given dO = dL/dO (the gradient arriving from the layers above):

    dV = P^T dO                              (n_k, n_q) x (n_q, d_v)
    dP = dO V^T                              (n_q, d_v) x (d_v, n_k)
    dS = P * (dP - D),  D = rowsum(P * dP)   the softmax's Jacobian, one row at a time
    dQ = scale * dS K,  dK = scale * dS^T Q

The softmax line is J^T dP with J = diag(p) - p p^T for each row p of P, as
book/learned_projections.ipynb derives it. Its D is also rowsum(O * dO),
since sum_j p_j (dO . v_j) = dO . (sum_j p_j v_j) = dO . o: FlashAttention
computes it that way, from the output, without the weights
(`tiled/backward.py`). This plain version keeps the (n_q, n_k) weights, as
an autograd framework does when it records the forward.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, broadcast_batch, check_scale, compute_dtype, result_dtype
from .attention import _weights, check_qkv
from .masks import check_attn_mask


def check_grad_output(grad_output, batch: tuple, n_q: int, d_v: int, name: str = "grad_output") -> np.ndarray:
    """`grad_output` (or the output itself) as a float array of shape batch + (n_q, d_v); ValueError naming both shapes."""
    grad = as_float_array(grad_output, name)
    want = tuple(batch) + (n_q, d_v)
    if grad.shape != want:
        raise ValueError(
            f"{name} must have the shape of the attention output, (..., n_q, d_v) = {want}; "
            f"got shape {grad.shape}"
        )
    return grad


def sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum `grad` over the axes that broadcasting added or stretched, so that it has `shape`.

    An input that was broadcast over the batch (one K shared by every head,
    say) was used once per batch index, so its gradient is the sum of theirs,
    as autograd computes it.
    """
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra))) if extra else grad  # the leading axes broadcasting added
    stretched = tuple(i for i, size in enumerate(shape) if size == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True) if stretched else grad


def attention_backward(query, key, value, grad_output, attn_mask=None, is_causal: bool = False, scale=None):
    """Gradients of `scaled_dot_product_attention` for query, key and value, from the full weights.

    Args:
        query: (..., n_q, d_k); key: (..., n_k, d_k); value: (..., n_k, d_v);
            leading batch/head dims broadcast together.
        grad_output: (..., n_q, d_v) dL/dO, the gradient of a loss L with
            respect to the attention output (with the broadcast batch dims).
        attn_mask, is_causal, scale: as in `scaled_dot_product_attention`.

    Returns:
        (dq, dk, dv): dL/dQ, dL/dK, dL/dV with the shapes and dtypes of query,
        key and value (summed over the batch dims an input was broadcast
        along, as autograd does). A query with nothing to attend to has an
        output that does not depend on anything, so its dq row is 0 and it
        adds nothing to dk and dv. float16 and bfloat16 are computed in
        float32 and each gradient rounded to its input's dtype at the end.
        The inputs are not modified.
    """
    q, k, v = check_qkv(query, key, value)
    n_q, d_k = q.shape[-2:]
    n_k, d_v = v.shape[-2:]
    shapes = {"query": q.shape, "key": k.shape, "value": v.shape}
    mask = check_attn_mask(attn_mask, is_causal, n_q, n_k)
    if mask is not None and mask.ndim > 2:
        shapes["attn_mask"] = mask.shape
    batch = broadcast_batch(shapes)
    grad = check_grad_output(grad_output, batch, n_q, d_v)
    scale = check_scale(scale, d_k)
    work = compute_dtype(result_dtype(q, k, v, grad))  # 16-bit inputs: float32 from here on
    dtypes = (q.dtype, k.dtype, v.dtype)
    q, k, v, grad = (x.astype(work, copy=False) for x in (q, k, v, grad))

    p = _weights(q, k, mask, is_causal, scale)  # (..., n_q, n_k) the forward's weights, kept
    dv = np.swapaxes(p, -1, -2) @ grad  # (..., n_k, n_q) x (..., n_q, d_v) -> (..., n_k, d_v)
    dp = grad @ np.swapaxes(v, -1, -2)  # (..., n_q, d_v) x (..., d_v, n_k) -> (..., n_q, n_k)
    d = np.sum(p * dp, axis=-1, keepdims=True)  # (..., n_q, 1) D = p . dp for each query
    ds = p * (dp - d)  # (..., n_q, n_k) dL/dS: the softmax's Jacobian applied row by row
    dq = scale * (ds @ k)  # (..., n_q, n_k) x (..., n_k, d_k) -> (..., n_q, d_k)
    dk = scale * (np.swapaxes(ds, -1, -2) @ q)  # (..., n_k, n_q) x (..., n_q, d_k) -> (..., n_k, d_k)
    wanted = (shapes["query"], shapes["key"], shapes["value"])
    return tuple(sum_to_shape(g, shape).astype(dt, copy=False) for g, shape, dt in zip((dq, dk, dv), wanted, dtypes))

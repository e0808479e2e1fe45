"""Attention in 16-bit floats: what rounds, what overflows, what must be summed in float32 (book/low_precision.ipynb).

The primitives follow one rule for float16 and bfloat16 inputs: compute in
float32, round the result to the input's dtype once (`core._checks.compute_dtype`).
This module computes attention the other ways too, so the chapter can measure
what the rule buys:

- `running_sum`: a sum accumulated one term at a time in a given dtype, each
  partial sum rounded, as a kernel that keeps its accumulator in 16 bits does;
- `matmul_accumulated`: a matrix product whose sums are accumulated that way;
- `softmax_accumulated`: a softmax whose exponentials and their sum are
  computed in a given dtype;
- `attention_with_accumulation`: attention whose inputs, weights and output
  are stored in one dtype and whose sums (the dot products, the softmax's
  denominator, the weighted sum of values) are accumulated in another.

bfloat16 comes from ml_dtypes: float32's 8 exponent bits (the same range,
up to 3.4e38) with 7 mantissa bits (about 3 significant digits). float16 has
5 exponent bits (up to 65504) and 10 mantissa bits.
"""

from __future__ import annotations

import numpy as np

from ..core._checks import as_float_array, check_scale, is_float_dtype
from ..core.attention import check_qkv


def _dtype(dtype, name: str) -> np.dtype:
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{name} must be a float dtype such as np.float32 or ml_dtypes.bfloat16; got {dtype!r}") from None
    if not is_float_dtype(dtype):
        raise TypeError(f"{name} must be a float dtype such as np.float32 or ml_dtypes.bfloat16; got {dtype}")
    return dtype


def running_sum(x, dtype, axis: int = -1, *, cumulative: bool = False) -> np.ndarray:
    """sum(x) along `axis`, one term at a time, every partial sum rounded to `dtype`.

    NumPy's own `np.sum` adds in pairs and in the array's dtype; this is the
    plain left-to-right loop of a kernel whose accumulator is a `dtype`
    register. Once the total is large, a term smaller than half the spacing
    of `dtype` at that total is rounded away entirely.

    Args:
        x: (..., n, ...) the terms, any float dtype (each is first rounded to `dtype`).
        dtype: the accumulator's dtype.
        axis: the axis summed over.
        cumulative: also return every partial sum.

    Returns:
        The sums, of `dtype`, with `axis` removed; with cumulative=True, the
        partial sums after 1, 2, ..., n terms, along `axis`.
    """
    dtype = _dtype(dtype, "dtype")
    terms = np.moveaxis(as_float_array(x, "x").astype(dtype), axis, 0)  # (n, ...)
    total = np.zeros(terms.shape[1:], dtype=dtype)
    partial = np.empty_like(terms) if cumulative else None
    for i, term in enumerate(terms):
        total = (total + term).astype(dtype)  # one rounding per addition
        if cumulative:
            partial[i] = total
    return np.moveaxis(partial, 0, axis) if cumulative else total


def matmul_accumulated(a, b, dtype) -> np.ndarray:
    """a @ b with each dot product summed term by term in `dtype` (see `running_sum`).

    Args:
        a: (..., m, r); b: (..., r, n); any float dtypes (rounded to `dtype` first).
        dtype: the dtype of the products and of the running sums.

    Returns:
        (..., m, n) of `dtype`.
    """
    dtype = _dtype(dtype, "dtype")
    a = as_float_array(a, "a").astype(dtype)
    b = as_float_array(b, "b").astype(dtype)
    total = np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]), dtype=dtype)
    for t in range(a.shape[-1]):
        product = (a[..., :, t, None] * b[..., None, t, :]).astype(dtype)  # (..., m, 1) x (..., 1, n) -> (..., m, n)
        total = (total + product).astype(dtype)
    return total


def softmax_accumulated(scores, dtype) -> np.ndarray:
    """softmax(scores) along the last axis with every step in `dtype`: max, exp, the running sum, the division.

    Args:
        scores: (..., n_k), any float dtype (rounded to `dtype` first).
        dtype: the dtype of every step.

    Returns:
        (..., n_k) weights of `dtype`. Unlike `softmax`, which computes 16-bit
        scores in float32, this shows what a 16-bit softmax would give.
    """
    dtype = _dtype(dtype, "dtype")
    s = as_float_array(scores, "scores").astype(dtype)
    e = np.exp((s - s.max(axis=-1, keepdims=True)).astype(dtype)).astype(dtype)  # (..., n_k), every exponent <= 0
    return (e / running_sum(e, dtype)[..., None]).astype(dtype)


def attention_with_accumulation(query, key, value, storage, accumulate, scale=None) -> np.ndarray:
    """softmax(Q K^T * scale) V with every array stored in `storage` and every sum accumulated in `accumulate`.

    The steps, and the dtype each result is rounded to:

        Q, K, V                         storage   (the inputs as a model holds them)
        S = Q K^T * scale               accumulate (sums of products, term by term)
        exp(S - max), their row sums    accumulate
        P = exp(S - max) / sum          storage   (the weights fed to the second product)
        O = P V                         accumulate, then rounded to storage

    `storage=accumulate=bfloat16` is attention done entirely in bfloat16;
    `storage=bfloat16, accumulate=float32` is how a GPU kernel computes it
    (16-bit inputs and weights, float32 accumulators). The package's own rule
    goes one step further: the weights stay in float32 too, and only the
    output is rounded.

    Args:
        query: (n_q, d_k); key: (n_k, d_k); value: (n_k, d_v): one head.
        storage, accumulate: float dtypes (np.float16, ml_dtypes.bfloat16, np.float32, ...).
        scale: multiplies the scores; 1/sqrt(d_k) by default.

    Returns:
        (n_q, d_v) of `storage`.
    """
    q, k, v = check_qkv(query, key, value)
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"attention_with_accumulation takes one head: query (n_q, d_k), key (n_k, d_k), value "
                         f"(n_k, d_v); got shapes {q.shape}, {k.shape}, {v.shape}")
    storage = _dtype(storage, "storage")
    accumulate = _dtype(accumulate, "accumulate")
    scale = check_scale(scale, q.shape[-1])
    q, k, v = (x.astype(storage) for x in (q, k, v))
    s = (matmul_accumulated(q, k.T, accumulate) * np.asarray(scale, accumulate)).astype(accumulate)  # (n_q, n_k)
    p = softmax_accumulated(s, accumulate).astype(storage)  # (n_q, n_k) the weights, stored
    return matmul_accumulated(p, v, accumulate).astype(storage)  # (n_q, n_k) x (n_k, d_v) -> (n_q, d_v)


def relative_error(got, exact) -> float:
    """max |got - exact| / max |exact|: the error as a fraction of the largest exact value (0 if exact is all 0)."""
    got = as_float_array(got, "got").astype(np.float64)
    exact = as_float_array(exact, "exact").astype(np.float64)
    if got.shape != exact.shape:
        raise ValueError(f"got and exact must have the same shape; got {got.shape} and {exact.shape}")
    size = np.abs(exact).max(initial=0.0)
    return float(np.abs(got - exact).max(initial=0.0) / size) if size > 0 else float(np.abs(got).max(initial=0.0))

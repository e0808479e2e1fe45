"""The softmax that turns attention scores into weights (book/worked_example.ipynb, stable_softmax.ipynb)."""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, compute_dtype


def softmax(x, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along `axis`.

    softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m), with m = max_j x_j.

    Subtracting the maximum changes nothing mathematically (the factor exp(-m)
    cancels between numerator and denominator) but keeps every exponent <= 0,
    so exp never overflows. Entries equal to -inf (masked positions) get weight
    exactly 0. A slice that is entirely -inf (nothing to attend to) gives all
    zeros rather than NaN, as torch's scaled_dot_product_attention does. NaN in
    a slice makes that whole slice NaN: it is never silently replaced.

    float16 and bfloat16 scores are computed in float32 and the weights
    rounded to the input's dtype at the end (`core._checks.compute_dtype`):
    in 16 bits, the sum of the exponentials would stop growing long before a
    row of a few thousand keys is summed (book/low_precision.ipynb).

    Args:
        x: scores, any shape (..., n_k) for the default axis; float dtypes
            (float16, bfloat16, float32, float64) are kept, integers become float64.
        axis: the axis that sums to 1.

    Returns:
        Weights with the shape and float dtype of `x`; each slice along `axis`
        sums to 1 (or is all zeros if it was all -inf). `x` is not modified.
    """
    x = as_float_array(x, "x")
    out_dtype = x.dtype
    x = x.astype(compute_dtype(out_dtype), copy=False)  # 16-bit scores: float32 from here on
    if x.ndim == 0:
        raise ValueError("x must have at least one axis to take a softmax over; got a scalar")
    try:
        m = np.max(x, axis=axis, keepdims=True)  # (..., 1): the row maximum
    except np.exceptions.AxisError:
        raise ValueError(f"axis {axis} is out of range for x with shape {x.shape}") from None
    # A row that is all -inf has max -inf; shifting by it would give -inf - -inf = NaN.
    # Shift such rows by 0 instead: their exponentials are then exactly 0.
    m = np.where(m == -np.inf, 0.0, m).astype(x.dtype, copy=False)
    e = np.exp(x - m)  # every exponent <= 0, so e is in [0, 1]
    total = np.sum(e, axis=axis, keepdims=True)  # (..., 1), >= 1 unless the row was all -inf
    # 0/0 for all -inf rows becomes 0; NaN totals (from NaN input) still divide to NaN.
    weights = np.divide(e, total, out=np.zeros_like(e), where=total != 0)
    return weights.astype(out_dtype, copy=False)

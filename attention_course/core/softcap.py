"""Soft-capping: a tanh that bounds the scores (or the logits) smoothly (Gemma 2).

    softcap(s, c) = c * tanh(s / c)

Near 0 it changes almost nothing (tanh(u) ~ u for small u); far from 0 it
flattens every value into (-c, c), so no single score can grow without bound
and swamp the softmax. Gemma 2 caps its attention scores at 50, after the
1/sqrt(d) scaling and before the mask, and its output logits at 30.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array


def softcap(x, cap: float) -> np.ndarray:
    """Elementwise cap * tanh(x / cap): x squeezed smoothly into (-cap, cap).

    Args:
        x: scores (..., n_q, n_k) or logits (..., vocab), any shape; -inf
            stays -inf (tanh(-inf) = -1 would not, so cap before the mask).
        cap: c > 0 (Gemma 2: attn_logit_softcapping = 50,
            final_logit_softcapping = 30).

    Returns:
        An array of x's shape and float dtype (float32 stays float32).
    """
    x = as_float_array(x, "x")
    if isinstance(cap, (bool, np.bool_)) or not np.isscalar(cap) or not np.isreal(cap):
        raise TypeError(f"cap must be a positive number such as 50.0; got {cap!r}")
    if not np.isfinite(cap) or cap <= 0:
        raise ValueError(f"cap must be a positive finite number such as 50.0; got {cap!r}")
    c = float(cap)  # a Python float keeps float32 arrays float32
    return np.where(np.isneginf(x), x, np.tanh(x / c) * c)

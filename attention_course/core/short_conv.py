"""A short causal convolution: each channel mixes its last few inputs (the delta-rule layers' q, k, v).

    y_t[c] = sum_{i=0}^{w-1} weight[c, i] * x_{t-w+1+i}[c]      (x_s = 0 before the first token)

Depthwise (each channel its own w taps, no mixing across channels) and causal
(token t sees tokens t-w+1..t). Gated DeltaNet and Kimi Delta Attention run
it, with a SiLU after it, on their queries, keys and values before the delta
rule: the state then sees each token together with its neighbours. To decode
one token at a time only the last w - 1 inputs need to be kept (`state`).
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, in_compute_dtype, require_ndim


def causal_conv1d(x, weight, bias=None, state=None):
    """(y (n, c), the last w - 1 inputs (w - 1, c)): the depthwise causal convolution of x.

    Args:
        x: (n, c) n tokens of c channels.
        weight: (c, w) w taps per channel; the last tap multiplies the current token.
        bias: None or (c,).
        state: None (zeros: nothing before the first token) or (w - 1, c), the
            inputs before x, oldest first.
    """
    xs = as_float_array(x, "x")
    w = as_float_array(weight, "weight")
    require_ndim(xs, "x", 2, "(n, c)")
    if w.ndim != 2 or w.shape[0] != xs.shape[1]:
        raise ValueError(f"weight must have shape (c, w) with c = {xs.shape[1]} as x's last axis; got shape {w.shape}")
    width = w.shape[1]
    past = np.zeros((width - 1, xs.shape[1]), xs.dtype) if state is None else as_float_array(state, "state")
    if past.shape != (width - 1, xs.shape[1]):
        raise ValueError(f"state must have shape (w - 1, c) = {(width - 1, xs.shape[1])}; got shape {past.shape}")
    (xs, w, past), out_dtype = in_compute_dtype(xs, w, past)
    padded = np.concatenate([past, xs], axis=0)  # (w - 1 + n, c)
    n = xs.shape[0]
    y = sum(w[:, i] * padded[i:i + n] for i in range(width))  # (n, c): tap i reads token t - (w - 1) + i
    if bias is not None:
        y = y + np.asarray(bias)
    return y.astype(out_dtype, copy=False), padded[padded.shape[0] - (width - 1):].astype(out_dtype, copy=False)

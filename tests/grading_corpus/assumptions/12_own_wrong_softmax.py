"""A right sink_attention that calls the notebook's own softmax, which subtracts no maximum."""
CHECK = "sink_attention"
MESSAGE = "comes from your `softmax`"
MARKS = "12/17"

import math

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys, values = np.repeat(k, g, axis=0), np.repeat(v, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(d)
    position = np.arange(n_q)[:, None] + n_k - n_q
    key = np.arange(n_k)[None, :]
    seen = key <= position
    if window is not None:
        seen = seen & (key > position - window)
    scores = np.where(seen, scores, -np.inf)
    column = np.broadcast_to(sinks[:, None, None], (h_q, n_q, 1)).astype(scores.dtype)
    weights = softmax(np.concatenate([scores, column], axis=-1))[..., :-1]
    return weights @ values, weights

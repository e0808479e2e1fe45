"""sink_attention whose max leaves the sink out: exp(sink - max) may overflow to inf, which gives weights 0, as they should be."""
CHECK = "sink_attention"

import math

import numpy as np


from attention_course import softmax


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys = np.repeat(k, g, axis=0)
    values = np.repeat(v, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(d)
    position = np.arange(n_q)[:, None] + n_k - n_q
    key = np.arange(n_k)[None, :]
    seen = key <= position
    if window is not None:
        seen = seen & (key > position - window)
    scores = np.where(seen, scores, -np.inf)
    column = np.broadcast_to(sinks[:, None, None], (h_q, n_q, 1)).astype(scores.dtype)
    m = scores.max(-1, keepdims=True)
    e = np.exp(scores - m)
    weights = e / (e.sum(-1, keepdims=True) + np.exp(column - m))
    return weights @ values, weights

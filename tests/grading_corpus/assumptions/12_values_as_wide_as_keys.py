"""sink_attention that makes its output as wide as the queries: it assumes d_v = d."""
CHECK = "sink_attention"
MESSAGE = "output: expected shape ("
MARKS = "8/17"

import math

import numpy as np

from attention_course import softmax


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k, g = k.shape[1], h_q // k.shape[0]
    out = np.zeros((h_q, n_q, d), dtype=q.dtype)
    weights = np.zeros((h_q, n_q, n_k), dtype=q.dtype)
    for h in range(h_q):
        scores = q[h] @ k[h // g].T / math.sqrt(d)
        position = np.arange(n_q)[:, None] + n_k - n_q
        key = np.arange(n_k)[None, :]
        seen = (key <= position) & (True if window is None else key > position - window)
        scores = np.where(seen, scores, -np.inf)
        joined = np.concatenate([scores, np.full((n_q, 1), sinks[h], dtype=q.dtype)], axis=-1)
        weights[h] = softmax(joined)[:, :-1]
        out[h, :, : v.shape[-1]] = weights[h] @ v[h // g]
    return out, weights

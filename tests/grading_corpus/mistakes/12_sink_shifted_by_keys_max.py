"""sink_attention that shifts the sink by the row's maximum taken without the sink: exp(sink - m) overflows to inf
for a sink far above the scores, which the task forbids, though the weights still come out as 0."""
CHECK = "sink_attention"
MISTAKE = "exp_overflowed"
MARKS = "14/17"

import math

import numpy as np


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys, values = np.repeat(k, g, axis=0), np.repeat(v, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(d)  # (h_q, n_q, d) x (h_q, d, n_k) -> (h_q, n_q, n_k)
    position = np.arange(n_q)[:, None] + n_k - n_q
    key = np.arange(n_k)[None, :]
    seen = key <= position
    if window is not None:
        seen = seen & (key > position - window)
    scores = np.where(seen, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)  # the sink left out of the max
    e = np.exp(scores - m)
    weights = e / (e.sum(axis=-1, keepdims=True) + np.exp(sinks[:, None, None] - m))
    return weights @ values, weights

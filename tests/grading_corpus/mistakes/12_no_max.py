"""sink_attention that takes the exponentials as they are."""
CHECK = "sink_attention"
MISTAKE = "no_max_subtraction"
MARKS = "12/17"

import math

import numpy as np

from attention_course import softmax


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
    e = np.exp(scores)
    weights = e / (np.exp(sinks)[:, None, None] + e.sum(axis=-1, keepdims=True))
    return weights @ values, weights

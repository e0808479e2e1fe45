"""sink_attention that returns the right weights but mixes the values with the weights of a softmax without the sink."""
CHECK = "sink_attention"
MISTAKE = "output_not_from_weights"
MARKS = "0/17"

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
    column = np.broadcast_to(sinks[:, None, None], (h_q, n_q, 1))
    joined = np.concatenate([scores, column], axis=-1)
    e = np.exp(joined - joined.max(axis=-1, keepdims=True))
    weights = (e / e.sum(axis=-1, keepdims=True))[..., :-1]
    plain = np.exp(scores - scores.max(axis=-1, keepdims=True))
    plain = plain / plain.sum(axis=-1, keepdims=True)  # the sink left out
    return plain @ values, weights

"""sink_attention that joins the sink before scaling, so the sink is divided by sqrt(d) too."""
CHECK = "sink_attention"
MISTAKE = "sink_scaled"
MARKS = "3/17"

import math

import numpy as np

from attention_course import softmax


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys, values = np.repeat(k, g, axis=0), np.repeat(v, g, axis=0)
    raw = q @ keys.transpose(0, 2, 1)
    position = np.arange(n_q)[:, None] + n_k - n_q
    key = np.arange(n_k)[None, :]
    seen = key <= position
    if window is not None:
        seen = seen & (key > position - window)
    column = np.broadcast_to(sinks[:, None, None], (h_q, n_q, 1)).astype(raw.dtype)
    joined = np.concatenate([np.where(seen, raw, -np.inf), column], axis=-1) / math.sqrt(d)
    weights = softmax(joined)[..., :-1]
    return weights @ values, weights

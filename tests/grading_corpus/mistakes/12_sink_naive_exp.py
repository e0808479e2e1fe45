"""sink_attention taking exp of the scores and of the sink without subtracting a max."""
CHECK = "sink_attention"
MISTAKE = 'no_max_subtraction'
MARKS = "12/17"
ABSENT = ('(row ', 'helper')  # untrue of this code
import math
import numpy as np


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys = np.repeat(k, g, axis=0); values = np.repeat(v, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(d)
    position = np.arange(n_q)[:, None] + n_k - n_q
    key = np.arange(n_k)[None, :]
    seen = key <= position
    if window is not None:
        seen = seen & (key > position - window)
    e = np.where(seen, np.exp(scores), 0.0).astype(q.dtype)
    total = e.sum(axis=-1, keepdims=True) + np.exp(sinks)[:, None, None].astype(q.dtype)
    w = e / total
    return w @ values, w

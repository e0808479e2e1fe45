"""sink_attention multiplying the sink-free weights by 1 - sigmoid(sink)."""
CHECK = "sink_attention"
MISTAKE = None
MARKS = "0/17"
MESSAGE = 'output: at index'
ABSENT = ('(row ',)  # untrue of this code
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

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
    w = softmax(np.where(seen, scores, -np.inf), axis=-1)
    w = w * (1 - 1 / (1 + np.exp(-sinks)))[:, None, None].astype(w.dtype)
    return w @ values, w

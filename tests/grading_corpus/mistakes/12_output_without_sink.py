"""sink_attention returning the right weights but an output mixed with sink-free weights."""
CHECK = "sink_attention"
MISTAKE = "output_not_from_weights"
MARKS = "0/17"
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
    scores = np.where(seen, scores, -np.inf)
    column = np.broadcast_to(sinks[:, None, None], (h_q, n_q, 1)).astype(scores.dtype)
    weights = softmax(np.concatenate([scores, column], axis=-1))[..., :-1]
    return softmax(scores, axis=-1) @ values, weights

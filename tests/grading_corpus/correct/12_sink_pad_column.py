"""sink_attention padding the scores with a sink column (np.pad), the window cut in a loop (right)."""
CHECK = "sink_attention"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    keys = k[np.arange(h_q) // g]; values = v[np.arange(h_q) // g]
    scores = q @ np.swapaxes(keys, 1, 2) / q.dtype.type(math.sqrt(d))
    for i in range(n_q):
        p = n_k - n_q + i
        lo = 0 if window is None else max(0, p - window + 1)
        scores[:, i, :lo] = -np.inf
        scores[:, i, p + 1:] = -np.inf
    full = np.pad(scores, ((0, 0), (0, 0), (0, 1)))
    full[..., -1] = sinks[:, None]
    w = softmax(full, axis=-1)[..., :n_k]
    return w @ values, w

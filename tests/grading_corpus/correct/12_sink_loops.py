"""sink_attention one head and one query at a time, with the log-sum-exp of the keys and the sink (np.logaddexp)."""
CHECK = "sink_attention"

import numpy as np


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k, d_v = k.shape[1], v.shape[-1]
    g = h_q // k.shape[0]
    out = np.zeros((h_q, n_q, d_v), dtype=q.dtype)
    weights = np.zeros((h_q, n_q, n_k), dtype=q.dtype)
    for h in range(h_q):
        for i in range(n_q):
            p = i + n_k - n_q  # this query's position
            first = 0 if window is None else max(0, p - window + 1)
            s = k[h // g, first : p + 1] @ q[h, i] / q.dtype.type(np.sqrt(d))  # (keys seen,)
            total = np.logaddexp(sinks[h], np.logaddexp.reduce(s))  # log(e^sink + sum e^s)
            weights[h, i, first : p + 1] = np.exp(s - total)
            out[h, i] = weights[h, i, first : p + 1] @ v[h // g, first : p + 1]
    return out, weights

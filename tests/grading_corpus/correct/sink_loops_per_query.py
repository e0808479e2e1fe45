"""sink_attention looping over heads and queries, the sink added to each denominator."""
CHECK = "sink_attention"

import math

import numpy as np


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    h_kv, n_k, _ = k.shape
    out = np.zeros((h_q, n_q, v.shape[-1]), dtype=np.result_type(q, k, v))
    W = np.zeros((h_q, n_q, n_k), dtype=out.dtype)
    for h in range(h_q):
        kv = h * h_kv // h_q
        for i in range(n_q):
            p = n_k - n_q + i
            lo = 0 if window is None else max(0, p - window + 1)
            s = k[kv, lo:p + 1] @ q[h, i] / math.sqrt(d)
            m = max(s.max(), float(sinks[h]))
            e = np.exp(s - m)
            W[h, i, lo:p + 1] = e / (e.sum() + math.exp(float(sinks[h]) - m))
            out[h, i] = W[h, i, lo:p + 1] @ v[kv, lo:p + 1]
    return out, W

"""sink_attention with the query heads grouped by np.einsum, the mask from np.triu, the sink as a logit of the max."""
CHECK = "sink_attention"

import numpy as np


def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    h_kv, n_k, _ = k.shape
    g = h_q // h_kv
    qg = q.reshape(h_kv, g, n_q, d)  # query head h = group h // g, member h % g
    s = np.einsum("hgqd,hkd->hgqk", qg, k) * q.dtype.type(d ** -0.5)
    offset = n_k - n_q
    hidden = np.triu(np.ones((n_q, n_k), dtype=bool), k=offset + 1)  # later keys
    if window is not None:
        hidden |= np.tril(np.ones((n_q, n_k), dtype=bool), k=offset - window)  # keys before the window
    s = np.where(hidden, -np.inf, s)
    sink = sinks.reshape(h_kv, g, 1, 1).astype(s.dtype)
    m = np.maximum(s.max(axis=-1, keepdims=True), sink)  # the row's maximum, the sink included
    e = np.exp(s - m)
    w = e / (e.sum(axis=-1, keepdims=True) + np.exp(sink - m))
    out = np.einsum("hgqk,hkv->hgqv", w, v)
    return out.reshape(h_q, n_q, -1), w.reshape(h_q, n_q, n_k)

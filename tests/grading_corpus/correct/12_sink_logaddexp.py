"""sink_attention with the log-sum-exp of keys and sink (np.logaddexp), masked in place on a copy (right)."""
CHECK = "sink_attention"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def sink_attention(q, k, v, sinks, window):
    h_q, n_q, d = q.shape
    n_k = k.shape[1]
    g = h_q // k.shape[0]
    s = np.einsum("hgqd,hkd->hgqk", q.reshape(k.shape[0], g, n_q, d), k).reshape(h_q, n_q, n_k) / math.sqrt(d)
    pos = np.arange(n_k - n_q, n_k)[:, None]
    key = np.arange(n_k)
    ok = (key <= pos) & ((key > pos - window) if window is not None else True)
    s = s.copy()
    s[:, ~ok] = -np.inf
    lse = np.logaddexp(np.logaddexp.reduce(s, axis=-1), sinks[:, None].astype(s.dtype))  # (h_q, n_q)
    w = np.exp(s - lse[..., None]).astype(q.dtype)
    out = np.einsum("hgqk,hkd->hgqd", w.reshape(k.shape[0], g, n_q, n_k), v).reshape(h_q, n_q, v.shape[-1])
    return out, w

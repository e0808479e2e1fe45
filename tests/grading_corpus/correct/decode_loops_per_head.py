"""decode_step looping over query heads, each reading its key/value head."""
CHECK = "decode_step"

import math

import numpy as np


from attention_course import apply_rope


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    k_cache = np.concatenate([k_cache, apply_rope(k, positions=[t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    qr = apply_rope(q, positions=[t])
    h_q, h_kv = q.shape[0], k_cache.shape[0]
    out = np.zeros((h_q, 1, v.shape[-1]), dtype=np.result_type(q, v_cache))
    for h in range(h_q):
        kv = h // (h_q // h_kv)
        s = k_cache[kv] @ qr[h, 0] / np.sqrt(q.shape[-1])
        e = np.exp(s - s.max())
        out[h, 0] = (e / e.sum()) @ v_cache[kv]
    return out, k_cache, v_cache

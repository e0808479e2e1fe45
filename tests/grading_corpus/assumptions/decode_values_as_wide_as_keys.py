"""decode_step that makes its output as wide as the keys: it assumes d_v = d."""
CHECK = "decode_step"
MESSAGE = ('output: expected shape (', 'cut down to the smallest input')
MARKS = "14/16"

import math

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    pos = np.array([t])
    q, k = apply_rope(q, pos), apply_rope(k, pos)
    k_cache = np.concatenate([k_cache, k], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    h_q, h_kv, d = q.shape[0], k.shape[0], q.shape[-1]
    out = np.zeros((h_q, 1, d), dtype=q.dtype)
    for h in range(h_q):
        g = h // (h_q // h_kv)
        w = softmax(q[h] @ k_cache[g].T / math.sqrt(d), axis=-1)
        out[h, :, : v_cache.shape[-1]] = w @ v_cache[g]
    return out, k_cache, v_cache

"""decode_step finding each query head's key/value head as h * h_kv // h_q (right)."""
CHECK = "decode_step"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    k_cache = np.concatenate([k_cache, apply_rope(k, positions=[t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    q = apply_rope(q, positions=[t])
    h_q, h_kv = q.shape[0], k_cache.shape[0]
    out = np.empty((h_q, 1, v.shape[-1]), dtype=np.result_type(q, v_cache))
    for h in range(h_q):
        kv = h * h_kv // h_q
        s = (k_cache[kv] @ q[h, 0]) * (1 / math.sqrt(q.shape[-1]))
        s = s - s.max()
        e = np.exp(s)
        out[h, 0] = e @ v_cache[kv] / e.sum()
    return out, k_cache, v_cache

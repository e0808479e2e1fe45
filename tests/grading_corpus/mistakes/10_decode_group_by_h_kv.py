"""decode_step giving query head h the key/value head h // h_kv."""
CHECK = "decode_step"
MISTAKE = 'observed_right_until'
MARKS = "13/16"
ABSENT = ('(row ',)  # untrue of this code
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, positions=[t]); k = apply_rope(k, positions=[t])
    k_cache = np.concatenate([k_cache, k], axis=1); v_cache = np.concatenate([v_cache, v], axis=1)
    h_kv = k_cache.shape[0]
    out = np.zeros((q.shape[0], 1, v.shape[-1]), dtype=q.dtype)
    for h in range(q.shape[0]):
        kv = min(h // h_kv, h_kv - 1)
        s = q[h] @ k_cache[kv].T / math.sqrt(q.shape[-1])
        out[h] = softmax(s) @ v_cache[kv]
    return out, k_cache, v_cache

"""decode_step looping over heads into a float64 array (np.zeros without dtype)."""
CHECK = "decode_step"
MISTAKE = 'dtype_changed'
MARKS = "14/16"
ABSENT = ('(row ',)  # untrue of this code
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, positions=[t]); k = apply_rope(k, positions=[t])
    k_cache = np.concatenate([k_cache, k], axis=1); v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    out = np.zeros((q.shape[0], 1, v.shape[-1]))
    for h in range(q.shape[0]):
        s = q[h] @ k_cache[h // g].T / np.sqrt(q.shape[-1])
        out[h] = softmax(s) @ v_cache[h // g]
    return out, k_cache, v_cache

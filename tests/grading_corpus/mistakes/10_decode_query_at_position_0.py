"""decode_step rotating the query at position 0."""
CHECK = "decode_step"
MISTAKE = 'query_not_rotated'
MARKS = "2/16"
ABSENT = ('(row ',)  # untrue of this code
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, positions=[0]); k = apply_rope(k, positions=[t])
    k_cache = np.concatenate([k_cache, k], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys = np.repeat(k_cache, g, axis=0); values = np.repeat(v_cache, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    out = softmax(scores) @ values
    return out, k_cache, v_cache

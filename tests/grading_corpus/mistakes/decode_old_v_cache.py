"""decode_step attends over the full new cache but returns the old v_cache."""
CHECK = "decode_step"
MISTAKE = None
MARKS = "0/16"
MESSAGE = 'v_cache: expected shape'

import numpy as np
from attention_course import apply_rope, softmax
def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    k_new = np.concatenate([k_cache, apply_rope(k, [t])], axis=1); v_new = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_new.shape[0]
    keys, values = np.repeat(k_new, g, axis=0), np.repeat(v_new, g, axis=0)
    return softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ values, k_new, v_cache

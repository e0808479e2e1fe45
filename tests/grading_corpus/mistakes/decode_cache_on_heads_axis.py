"""decode_step concatenating the cache on axis 0 (heads) -- GQA."""
CHECK = "decode_step"
MISTAKE = 'appended_on_wrong_axis'
MARKS = "0/16"

import numpy as np
from attention_course import apply_rope, softmax
def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t]); k = apply_rope(k, [t])
    k_cache = np.concatenate([k_cache, k], axis=0); v_cache = np.concatenate([v_cache, v], axis=0)
    g = q.shape[0] // k_cache.shape[0] or 1
    keys, values = np.repeat(k_cache, g, axis=0)[:q.shape[0]], np.repeat(v_cache, g, axis=0)[:q.shape[0]]
    return softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ values, k_cache, v_cache

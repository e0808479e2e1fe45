"""decode_step mapping query head i to kv head i % h_kv (instead of i // g)."""
CHECK = "decode_step"
MISTAKE = 'kv_heads_tiled'
MARKS = "8/16"

import math

import numpy as np
from attention_course import apply_rope, softmax
def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    k_cache = np.concatenate([k_cache, apply_rope(k, [t])], axis=1); v_cache = np.concatenate([v_cache, v], axis=1)
    idx = np.arange(q.shape[0]) % k_cache.shape[0]
    keys, values = k_cache[idx], v_cache[idx]
    return softmax(q @ keys.transpose(0, 2, 1) / math.sqrt(q.shape[-1])) @ values, k_cache, v_cache

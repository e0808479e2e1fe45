"""decode_step that shares the key/value heads with np.tile: the order 0, 1, 0, 1."""
CHECK = "decode_step"
MISTAKE = "kv_heads_tiled"
MARKS = "8/16"

import math

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    k_cache = np.concatenate([k_cache, apply_rope(k, [t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys, values = np.tile(k_cache, (g, 1, 1)), np.tile(v_cache, (g, 1, 1))
    scores = q @ keys.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    return softmax(scores) @ values, k_cache, v_cache

"""decode_step that reads the new token's position from the cache's first axis (its heads), not its tokens."""
CHECK = "decode_step"
MISTAKE = "position_from_wrong_axis"
MARKS = "0/16"

import math

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[0]
    q = apply_rope(q, positions=[t])
    k_cache = np.concatenate([k_cache, apply_rope(k, positions=[t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys, values = np.repeat(k_cache, g, axis=0), np.repeat(v_cache, g, axis=0)
    return softmax(q @ keys.transpose(0, 2, 1) / math.sqrt(q.shape[-1])) @ values, k_cache, v_cache

"""decode_step that calls apply_rope without positions: one token, so position 0, no rotation at all."""
CHECK = "decode_step"
MISTAKE = "rotated_at_position_0"
MARKS = "2/16"

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    q = apply_rope(q)
    k_cache = np.concatenate([k_cache, apply_rope(k)], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys, values = np.repeat(k_cache, g, axis=0), np.repeat(v_cache, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    return softmax(scores) @ values, k_cache, v_cache

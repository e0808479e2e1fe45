"""decode_step that rotates the new token at position t + 1."""
CHECK = "decode_step"
MISTAKE = "off_by_one_position"
MARKS = "0/16"

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1] + 1
    q = apply_rope(q, [t])
    k_cache = np.concatenate([k_cache, apply_rope(k, [t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys, values = np.repeat(k_cache, g, axis=0), np.repeat(v_cache, g, axis=0)
    return softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])) @ values, k_cache, v_cache

"""decode_step that caches the new key unrotated and rotates the whole cache at 0..t before scoring."""
CHECK = "decode_step"
MISTAKE = "keys_cached_before_rope"
MARKS = "2/16"

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    k_cache = np.concatenate([k_cache, k], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    keys = apply_rope(k_cache, np.arange(t + 1))  # rotate every key at its position
    q = apply_rope(q, [t])
    g = q.shape[0] // keys.shape[0]
    keys, values = np.repeat(keys, g, axis=0), np.repeat(v_cache, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    return softmax(scores) @ values, k_cache, v_cache

"""decode_step that returns the caches it was given: the new token is never appended for the next step."""
CHECK = "decode_step"
MISTAKE = "cache_not_updated"
MARKS = "0/16"

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    keys = np.concatenate([k_cache, apply_rope(k, [t])], axis=1)
    values = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // keys.shape[0]
    keys, values = np.repeat(keys, g, axis=0), np.repeat(values, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])
    return softmax(scores) @ values, k_cache, v_cache

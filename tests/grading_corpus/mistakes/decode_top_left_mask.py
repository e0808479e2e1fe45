"""decode_step that applies the usual causal mask, np.tri, to its single query: the top-left triangle."""
CHECK = "decode_step"
MISTAKE = "top_left_causal_mask"
MARKS = "3/16"

import numpy as np

from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, [t])
    k_cache = np.concatenate([k_cache, apply_rope(k, [t])], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys, values = np.repeat(k_cache, g, axis=0), np.repeat(v_cache, g, axis=0)
    scores = q @ keys.transpose(0, 2, 1) / np.sqrt(q.shape[-1])  # (h_q, 1, t + 1)
    causal = np.tri(1, t + 1, dtype=bool)  # the causal mask, one row
    scores = np.where(causal, scores, -np.inf)
    return softmax(scores) @ values, k_cache, v_cache

"""decode_step that clips the scores to [-20, 20]: wrong only where the scores are large."""
CHECK = "decode_step"
MISTAKE = None
MESSAGE = "expected"
MARKS = "13/16"
ABSENT = ("are right", "is right")

import math

import numpy as np


from attention_course import apply_rope, softmax


def decode_step(q, k, v, k_cache, v_cache):
    t = k_cache.shape[1]
    q = apply_rope(q, positions=[t])
    k = apply_rope(k, positions=[t])
    k_cache = np.concatenate([k_cache, k], axis=1)
    v_cache = np.concatenate([v_cache, v], axis=1)
    g = q.shape[0] // k_cache.shape[0]
    keys = np.repeat(k_cache, g, axis=0)
    values = np.repeat(v_cache, g, axis=0)
    scores = np.clip(q @ keys.transpose(0, 2, 1) / math.sqrt(q.shape[-1]), -20, 20)
    out = softmax(scores) @ values
    return out, k_cache, v_cache

"""masked_attention that clips the scores to [-40, 40]: wrong only where the scores are large."""
CHECK = "masked_attention"
MISTAKE = None
MESSAGE = "expected"
MARKS = "17/18"
ABSENT = ("are right", "is right")

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    s = np.clip(Q @ K.T / math.sqrt(Q.shape[-1]), -40, 40)
    s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True); m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m); z = e.sum(-1, keepdims=True)
    w = e / np.where(z > 0, z, 1)
    return w @ V, w

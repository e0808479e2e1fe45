"""padded_attention that clips the scores to [-40, 40]: wrong only where the scores are large."""
CHECK = "padded_attention"
MISTAKE = None
MESSAGE = "expected"
MARKS = "12/14"
ABSENT = ("are right", "is right")

import math

import numpy as np


def padded_attention(Q, K, V, lengths):
    s = np.clip(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), -40, 40)
    real = np.arange(K.shape[1])[None, None, :] < np.asarray(lengths)[:, None, None]
    s = np.where(real, s, -np.inf)
    m = s.max(-1, keepdims=True); m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m); z = e.sum(-1, keepdims=True)
    w = e / np.where(z > 0, z, 1)
    return w @ V, w

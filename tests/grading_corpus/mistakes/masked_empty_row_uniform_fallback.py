"""masked_attention that fills hidden scores with -inf but gives a row with nothing to see uniform weights."""
CHECK = "masked_attention"
MISTAKE = "mask_filled_with_large_negative"
MARKS = "16/18"
ABSENT = ("Your code writes no -inf", "never a large negative number")

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    s = Q @ K.T / math.sqrt(Q.shape[-1])
    s = np.where(mask, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True)
    w = np.where(z > 0, e / np.where(z > 0, z, 1), 1.0 / s.shape[-1])
    return w @ V, w

"""masked_attention filling hidden scores with -1e4: a query that sees no key gets uniform weights."""
CHECK = "masked_attention"
MISTAKE = "mask_filled_with_large_negative"
MARKS = "16/18"
ABSENT = ("If some hidden scores get a finite fill",)

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    s = Q @ K.T / math.sqrt(Q.shape[-1])
    s = np.where(mask, s, -1e4)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s); w /= w.sum(-1, keepdims=True)
    return w @ V, w

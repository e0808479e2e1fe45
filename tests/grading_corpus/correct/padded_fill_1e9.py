"""padded_attention filling padding keys with -1e9: exp of it is exactly 0 beside any real key."""
CHECK = "padded_attention"

import math

import numpy as np


def padded_attention(Q, K, V, lengths):
    s = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])
    real = np.arange(K.shape[1])[None, None, :] < np.asarray(lengths)[:, None, None]
    s = np.where(real, s, -1e9)
    s = s - s.max(-1, keepdims=True)
    w = np.exp(s); w /= w.sum(-1, keepdims=True)
    return w @ V, w

"""softmax that writes into np.zeros_like(x): integer scores give integer weights."""
CHECK = "softmax"
MESSAGE = (', got 0', 'integer scores, cut down to the smallest input')
MARKS = "24/26"

import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))  # a slice of only -inf: weights 0
    s = np.sum(e, axis=axis, keepdims=True)
    out = np.zeros_like(x)
    out[...] = e / np.where(s == 0, 1, s)
    return out

"""softmax that writes into np.zeros_like(x): integer scores give integer weights."""
CHECK = "softmax"
MESSAGE = (', got 0', 'integer scores, cut down to the smallest input')
MARKS = "13/14"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    out = np.zeros_like(x)
    out[...] = e / np.sum(e, axis=axis, keepdims=True)
    return out

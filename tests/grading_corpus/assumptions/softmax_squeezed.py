"""softmax that squeezes x first: it assumes no axis has size 1."""
CHECK = "softmax"
MESSAGE = 'expected shape (1,), got shape ()'
MARKS = "23/26"

import numpy as np


def softmax(x, axis=-1):
    x = np.squeeze(x)
    m = np.max(x, axis=axis, keepdims=True)
    e = np.exp(x - np.where(np.isfinite(m), m, 0))  # a slice of only -inf: weights 0
    s = np.sum(e, axis=axis, keepdims=True)
    return e / np.where(s == 0, 1, s)

"""softmax that computes exp(max - x): the largest score gets the smallest weight."""
CHECK = "softmax"
MISTAKE = "sign_flipped"
MARKS = "3/26"

import numpy as np


def softmax(x, axis=-1):
    m = np.min(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(m - x)
    return e / np.sum(e, axis=axis, keepdims=True)

"""softmax that subtracts each slice's minimum: exp overflows when the scores lie far apart."""
CHECK = "softmax"
MISTAKE = "subtracted_min"
MARKS = "18/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

"""softmax that divides by a temperature of 2."""
CHECK = "softmax"
MISTAKE = None
MARKS = "4/15"
MESSAGE = 'at index 0 expected 0.07586, got 0.2227'

import numpy as np
def softmax(x, axis=-1):
    x = np.asarray(x) / 2
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

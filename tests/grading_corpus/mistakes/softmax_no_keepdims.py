"""softmax that takes the max without keepdims: x - max no longer lines up with x."""
CHECK = "softmax"
MISTAKE = None
MARKS = "11/26"
HINT = "without keepdims=True"

import numpy as np


def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)

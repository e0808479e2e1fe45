"""softmax that divides by the largest exponential instead of their sum: weights do not sum to 1."""
CHECK = "softmax"
MISTAKE = "does_not_sum_to_1"
MARKS = "8/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.max(e, axis=axis, keepdims=True)

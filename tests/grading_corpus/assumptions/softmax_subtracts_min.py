"""softmax that subtracts the minimum: safe only while the scores are close together."""
CHECK = "softmax"
MESSAGE = ('got nan at index 0', 'cut down to the smallest input')
MARKS = "10/14"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.min(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

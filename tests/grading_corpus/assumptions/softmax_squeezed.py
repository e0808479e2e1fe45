"""softmax that squeezes x first: it assumes no axis has size 1."""
CHECK = "softmax"
MESSAGE = 'expected shape (1,), got shape ()'
MARKS = "12/14"

import numpy as np


def softmax(x, axis=-1):
    x = np.squeeze(x)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

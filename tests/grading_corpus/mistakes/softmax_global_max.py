"""softmax that subtracts the max of the whole array: a row far below it underflows to 0/0."""
CHECK = "softmax"
MISTAKE = "global_max"
MARKS = "22/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=axis, keepdims=True)

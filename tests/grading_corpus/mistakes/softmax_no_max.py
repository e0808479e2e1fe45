"""softmax straight from the formula: exp overflows on large scores."""
CHECK = "softmax"
MISTAKE = "no_max_subtraction"
MARKS = "16/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)

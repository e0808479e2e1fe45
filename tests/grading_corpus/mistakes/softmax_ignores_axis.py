"""softmax with the axis hard-coded to -1: the axis argument is ignored."""
CHECK = "softmax"
MISTAKE = "ignores_axis"
MARKS = "21/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)

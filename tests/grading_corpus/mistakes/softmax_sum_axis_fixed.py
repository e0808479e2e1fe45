"""softmax with max over the given axis but sum over axis -1 always."""
CHECK = "softmax"
MISTAKE = 'softmax_wrong_axis'
MARKS = "21/26"

import numpy as np
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)

"""softmax with the max trick only: a row that is entirely -inf gives -inf - (-inf) = nan."""
CHECK = "softmax"
MISTAKE = "nan_for_empty_row"
MARKS = "25/26"

import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

"""softmax that raises 2, not e, to the shifted scores (np.exp2 without the factor log2(e))."""
CHECK = "softmax"
MISTAKE = "base_2"
MARKS = "8/26"
ABSENT = ("sums to 0", "mask")

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp2(x - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)

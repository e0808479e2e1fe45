"""softmax that computes its exponentials in float32 and casts back: float64 input keeps only float32's digits."""
CHECK = "softmax"
MISTAKE = "observed_float32_digits"
MARKS = "9/26"

import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp((x - np.where(np.isfinite(top), top, 0)).astype(np.float32)).astype(x.dtype)
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)

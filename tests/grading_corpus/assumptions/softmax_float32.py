"""softmax computed in float32: it assumes the scores fit in float32."""
CHECK = "softmax"
MESSAGE = 'about what float32 holds'
MARKS = "7/26"

import numpy as np


def softmax(x, axis=-1):
    x32 = np.asarray(x, dtype=np.float32)
    m = np.max(x32, axis=axis, keepdims=True)
    e = np.exp(x32 - np.where(np.isfinite(m), m, 0))  # a slice of only -inf: weights 0
    s = np.sum(e, axis=axis, keepdims=True)
    return (e / np.where(s == 0, 1, s)).astype(np.result_type(x, np.float32))

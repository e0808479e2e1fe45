"""softmax that returns the log-softmax: x minus the log-sum-exp."""
CHECK = "softmax"
MISTAKE = "log_weights"
MARKS = "0/26"

import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))

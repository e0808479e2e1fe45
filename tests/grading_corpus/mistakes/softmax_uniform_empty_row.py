"""softmax with max subtraction but replacing -inf rows with uniform weights."""
CHECK = "softmax"
MISTAKE = 'does_not_sum_to_1'
MARKS = "25/26"

import numpy as np
def softmax(x, axis=-1):
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(float)  # integers: float64, as the package does
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    n = x.shape[axis]
    return np.where(s == 0, 1.0 / n, e / np.where(s == 0, 1, s))

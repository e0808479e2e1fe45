"""softmax by scipy.special.softmax, with rows of only -inf given weights 0."""
CHECK = "softmax"
import numpy as np
import scipy.special
def softmax(x, axis=-1):
    x = np.asarray(x)
    if np.issubdtype(x.dtype, np.integer):
        x = x.astype(float)
    m = np.max(x, axis=axis, keepdims=True)
    out = scipy.special.softmax(np.where(np.isfinite(m), x, 0.0), axis=axis)
    return np.where(np.isneginf(m), 0.0, out).astype(x.dtype)

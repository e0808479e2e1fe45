"""softmax with math.exp in Python loops over every slice."""
CHECK = "softmax"
import numpy as np
import math
def softmax(x, axis=-1):
    x = np.asarray(x)
    dtype = np.result_type(x, np.float32) if x.dtype == np.float32 else np.float64
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape, dtype=dtype)
    for idx in np.ndindex(moved.shape[:-1]):
        row = moved[idx]
        m = max(row)
        if m == -math.inf:
            continue
        es = [math.exp(v - m) for v in row]
        s = sum(es)
        out[idx] = [e / s for e in es]
    return np.moveaxis(out, -1, axis)

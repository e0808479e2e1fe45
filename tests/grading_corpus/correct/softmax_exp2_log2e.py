"""softmax through np.exp2, the scores first multiplied by log2(e), as GPU kernels do: 2^(x log2 e) = e^x."""
CHECK = "softmax"
import numpy as np
def softmax(x, axis=-1):
    x = np.asarray(x)
    x = x if x.dtype.kind == "f" else x.astype(np.float64)
    top = np.max(x, axis=axis, keepdims=True)
    e = np.exp2((x - np.where(np.isfinite(top), top, 0)) * x.dtype.type(np.log2(np.e)))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total > 0, total, 1)

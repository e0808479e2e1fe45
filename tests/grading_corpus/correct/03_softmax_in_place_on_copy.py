"""softmax subtracting, exponentiating and dividing in place on its own copy of x (right)."""
CHECK = "softmax"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def softmax(x, axis=-1):
    y = np.array(x, dtype=np.result_type(x, np.float16) if np.asarray(x).dtype.kind == 'f' else np.float64, copy=True)
    m = y.max(axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0
    y -= m
    np.exp(y, out=y)
    s = y.sum(axis=axis, keepdims=True)
    s[s == 0] = 1
    y /= s
    return y

"""attention with np.einsum for both products and its own softmax."""
CHECK = "attention"
import math

import numpy as np
def attention(Q, K, V):
    s = np.einsum("qd,kd->qk", Q, K) / math.sqrt(Q.shape[-1])  # a Python float: float32 stays float32
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return np.einsum("qk,kv->qv", w, V), w

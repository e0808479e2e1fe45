"""gated_delta_chunk that casts a and b with .astype: it assumes they are arrays, not tuples."""
CHECK = "gated_delta_chunk"
MESSAGE = ("AttributeError", "a and b are tuples of Python numbers here")
MARKS = "10/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    a, b = a.astype(S.dtype), b.astype(S.dtype)
    outputs = np.empty(v.shape, dtype=S.dtype)
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S
        S = decayed - b[t] * np.outer(k_hat, k_hat @ decayed) + b[t] * np.outer(k_hat, v[t])
        outputs[t] = q_hat @ S
    return outputs, S

"""gated_delta_chunk without the erase."""
CHECK = "gated_delta_chunk"
MISTAKE = "erase_dropped"
MARKS = "0/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S
        erased = decayed
        new = erased + b[t] * np.outer(k_hat, v[t])
        outputs[t], S = q_hat @ new, new
    return outputs, S

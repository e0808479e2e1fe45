"""gated_delta_chunk that multiplies each unit key by its b."""
CHECK = "gated_delta_chunk"
MISTAKE = "b_applied_to_key"
MARKS = "1/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S
        k_b = b[t] * k_hat
        erased = decayed - np.outer(k_b, k_b @ decayed)
        new = erased + np.outer(k_b, v[t])
        outputs[t], S = q_hat @ new, new
    return outputs, S

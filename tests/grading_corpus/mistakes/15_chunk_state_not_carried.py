"""gated_delta_chunk that starts every token from the chunk's state."""
CHECK = "gated_delta_chunk"
MISTAKE = "state_not_carried"
MARKS = "1/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    S0 = S
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S0
        erased = decayed - b[t] * np.outer(k_hat, k_hat @ decayed)
        new = erased + b[t] * np.outer(k_hat, v[t])
        outputs[t], S = q_hat @ new, new
    return outputs, S

"""gated_delta_chunk that writes the paper's (d_v, d_k) update on the (d_k, d_v) state."""
CHECK = "gated_delta_chunk"
MISTAKE = "state_transposed"
MARKS = "0/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S
        erased = decayed - b[t] * np.outer(decayed @ k_hat, k_hat)
        new = erased + b[t] * np.outer(v[t], k_hat)
        outputs[t], S = new @ q_hat, new
    return outputs, S

"""gated_delta_chunk that writes every token first, then reads every output from the last state."""
CHECK = "gated_delta_chunk"
MISTAKE = "read_after_the_chunk"
MARKS = "1/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t] / math.sqrt(float(k[t] @ k[t]) + 1e-6)
        decayed = a[t] * S
        erased = decayed - b[t] * np.outer(k_hat, k_hat @ decayed)
        new = erased + b[t] * np.outer(k_hat, v[t])
        S = new
    q_hat = q / np.sqrt((q * q).sum(axis=1, keepdims=True) + 1e-6) / math.sqrt(q.shape[1])
    return q_hat @ S, S

"""gated_delta_chunk right itself, calling a step that forgets the erase."""
CHECK = "gated_delta_chunk"
MESSAGE = "when it calls the course's `gated_delta_step` instead of yours"
MARKS = "0/12"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    erased = decayed
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        outputs[t], S = gated_delta_step(S, q[t], k[t], v[t], a[t], b[t])
    return outputs, S

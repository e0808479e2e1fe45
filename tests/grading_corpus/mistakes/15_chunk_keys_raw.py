"""gated_delta_chunk that uses the keys as given."""
CHECK = "gated_delta_chunk"
MISTAKE = "keys_not_normalised"
MARKS = "0/12"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    outputs = np.empty(v.shape, dtype=np.result_type(S, q, k, v))
    for t in range(q.shape[0]):
        q_hat = q[t] / math.sqrt(float(q[t] @ q[t]) + 1e-6) / math.sqrt(q.shape[-1])
        k_hat = k[t]
        decayed = a[t] * S
        erased = decayed - b[t] * np.outer(k_hat, k_hat @ decayed)
        new = erased + b[t] * np.outer(k_hat, v[t])
        outputs[t], S = q_hat @ new, new
    return outputs, S

"""gated_delta_step that normalises the query but uses the key as given."""
CHECK = "gated_delta_step"
MISTAKE = "keys_not_normalised"
MARKS = "2/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k
    decayed = a * S
    erased = decayed - b * np.outer(k_hat, k_hat @ decayed)
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new

"""gated_delta_step that does not scale the unit query by 1/sqrt(d_k)."""
CHECK = "gated_delta_step"
MISTAKE = "query_not_scaled"
MARKS = "1/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6)
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    erased = decayed - b * np.outer(k_hat, k_hat @ decayed)
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new

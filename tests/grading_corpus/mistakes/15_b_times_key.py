"""gated_delta_step that multiplies the unit key by b and uses it everywhere."""
CHECK = "gated_delta_step"
MISTAKE = "b_applied_to_key"
MARKS = "5/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    k_b = b * k_hat
    erased = decayed - np.outer(k_b, k_b @ decayed)
    new = erased + np.outer(k_b, v)
    return q_hat @ new, new

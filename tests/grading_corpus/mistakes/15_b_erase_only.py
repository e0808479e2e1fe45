"""gated_delta_step whose write has no b."""
CHECK = "gated_delta_step"
MISTAKE = "b_on_one_term"
MARKS = "3/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    erased = decayed - b * np.outer(k_hat, k_hat @ decayed)
    new = erased + np.outer(k_hat, v)
    return q_hat @ new, new

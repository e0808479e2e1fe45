"""gated_delta_step without the erase: plain gated linear attention."""
CHECK = "gated_delta_step"
MISTAKE = "erase_dropped"
MARKS = "3/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    erased = decayed
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new

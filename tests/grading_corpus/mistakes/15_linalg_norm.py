"""gated_delta_step that divides by np.linalg.norm: no 1e-6 under the square root."""
CHECK = "gated_delta_step"
MISTAKE = "eps_left_out"
MARKS = "2/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / np.linalg.norm(q) / math.sqrt(q.shape[-1])
    k_hat = k / np.linalg.norm(k)
    decayed = a * S
    erased = decayed - b * np.outer(k_hat, k_hat @ decayed)
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new

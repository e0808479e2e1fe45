"""gated_delta_step that adds the 1e-6 to the length instead of under the square root."""
CHECK = "gated_delta_step"
MISTAKE = "eps_outside_the_root"
MARKS = "2/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / (np.linalg.norm(q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / (np.linalg.norm(k) + 1e-6)
    decayed = a * S
    erased = decayed - b * np.outer(k_hat, k_hat @ decayed)
    new = erased + b * np.outer(k_hat, v)
    return q_hat @ new, new

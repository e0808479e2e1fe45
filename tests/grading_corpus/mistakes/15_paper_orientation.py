"""gated_delta_step that writes the paper's update, for a (d_v, d_k) state, on the (d_k, d_v) state it is given."""
CHECK = "gated_delta_step"
MISTAKE = "state_transposed"
MARKS = "0/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    decayed = a * S
    erased = decayed - b * np.outer(decayed @ k_hat, k_hat)
    new = erased + b * np.outer(v, k_hat)
    return new @ q_hat, new

"""gated_delta_step whose erase is built with np.eye(len(v)): it assumes d_v = d_k."""
CHECK = "gated_delta_step"
MESSAGE = ("ValueError", "S is (d_k, d_v)")
MARKS = "3/16"

import math

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    q_hat = q / math.sqrt(float(q @ q) + 1e-6) / math.sqrt(q.shape[-1])
    k_hat = k / math.sqrt(float(k @ k) + 1e-6)
    erase = np.eye(len(v), dtype=S.dtype) - b * np.outer(k_hat, k_hat)
    new = a * (erase @ S) + b * np.outer(k_hat, v)
    return q_hat @ new, new

"""flash_attention that sums exp(score) without a running max: overflow on large scores."""
CHECK = "flash_attention"
MISTAKE = "no_running_max"
MARKS = "16/20"

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.empty((n_q, V.shape[1]), dtype=Q.dtype)
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / math.sqrt(d_k)
        l = np.zeros((len(q), 1))
        acc = np.zeros((len(q), V.shape[1]))
        for j0 in range(0, K.shape[0], block_size):
            p = np.exp(q @ K[j0:j0 + block_size].T)
            l += p.sum(axis=1, keepdims=True)
            acc += p @ V[j0:j0 + block_size]
        out[i0:i0 + block_size] = acc / l
    return out

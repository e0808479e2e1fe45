"""flash_attention that keeps one running max for the whole tile of queries, not one per query."""
CHECK = "flash_attention"
MISTAKE = "running_max_per_tile"
MARKS = "17/20"

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.empty((n_q, V.shape[1]), dtype=np.result_type(Q, K, V))
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / math.sqrt(d_k)
        m = -np.inf
        l = np.zeros((len(q), 1))
        acc = np.zeros((len(q), V.shape[1]))
        for j0 in range(0, K.shape[0], block_size):
            s = q @ K[j0:j0 + block_size].T
            m_new = max(m, s.max())  # one number for the whole tile
            p = np.exp(s - m_new)
            rescale = np.exp(m - m_new)
            l = rescale * l + p.sum(axis=-1, keepdims=True)
            acc = rescale * acc + p @ V[j0:j0 + block_size]
            m = m_new
        out[i0:i0 + block_size] = acc / l
    return out

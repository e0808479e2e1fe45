"""flash_attention that starts the running max, sum and values once, not once per tile of queries."""
CHECK = "flash_attention"
MISTAKE = "observed_right_until"
MARKS = "4/20"

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.empty((n_q, V.shape[1]))
    m = np.full((block_size, 1), -np.inf)
    l = np.zeros((block_size, 1))
    acc = np.zeros((block_size, V.shape[1]))
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / np.sqrt(d_k)
        rows = len(q)
        for j0 in range(0, K.shape[0], block_size):
            s = q @ K[j0:j0 + block_size].T
            m_new = np.maximum(m[:rows], s.max(axis=1, keepdims=True))
            p = np.exp(s - m_new)
            alpha = np.exp(m[:rows] - m_new)
            l[:rows] = alpha * l[:rows] + p.sum(axis=1, keepdims=True)
            acc[:rows] = alpha * acc[:rows] + p @ V[j0:j0 + block_size]
            m[:rows] = m_new
        out[i0:i0 + block_size] = acc[:rows] / l[:rows]
    return out

"""flash_attention whose loops stop before a last, shorter tile."""
CHECK = "flash_attention"
MISTAKE = "drops_last_tile"
MARKS = "7/20"

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    n_k = K.shape[0]
    out = np.zeros((n_q, V.shape[1]))
    for i0 in range(0, n_q - block_size + 1, block_size):
        q = Q[i0:i0 + block_size] / np.sqrt(d_k)
        m = np.full((block_size, 1), -np.inf)
        l = np.zeros((block_size, 1))
        acc = np.zeros((block_size, V.shape[1]))
        for j0 in range(0, n_k - block_size + 1, block_size):
            s = q @ K[j0:j0 + block_size].T
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            p = np.exp(s - m_new)
            alpha = np.exp(m - m_new)
            l = alpha * l + p.sum(axis=1, keepdims=True)
            acc = alpha * acc + p @ V[j0:j0 + block_size]
            m = m_new
        out[i0:i0 + block_size] = acc / l
    return out

"""flash_attention whose running max starts at 0: it assumes some score is not far below 0."""
CHECK = "flash_attention"
MESSAGE = ('got nan at index (0, 0)', 'cut down to the smallest input')
MARKS = "11/12"

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.zeros((n_q, V.shape[1]))
    for i in range(0, n_q, block_size):
        q = Q[i:i + block_size]
        m = np.zeros(len(q))  # should start at -inf
        l = np.zeros(len(q))
        acc = np.zeros((len(q), V.shape[1]))
        for j in range(0, K.shape[0], block_size):
            s = q @ K[j:j + block_size].T / np.sqrt(d_k)
            m_new = np.maximum(m, s.max(axis=1))
            p = np.exp(s - m_new[:, None])
            alpha = np.exp(m - m_new)
            l = l * alpha + p.sum(axis=1)
            acc = acc * alpha[:, None] + p @ V[j:j + block_size]
            m = m_new
        out[i:i + block_size] = acc / l[:, None]
    return out

"""flash_attention whose loop over query tiles runs to n_k: it assumes n_q <= n_k."""
CHECK = "flash_attention"
MESSAGE = 'Rows 0 to 3 are right; row 4 is the first wrong one'
MARKS = "18/20"

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    n_k = K.shape[0]
    out = np.zeros((n_q, V.shape[1]), dtype=np.result_type(Q, K, V))
    for i in range(0, n_k, block_size):  # should run over n_q
        q = Q[i:i + block_size]
        m = np.full(len(q), -np.inf)
        l = np.zeros(len(q))
        acc = np.zeros((len(q), V.shape[1]))
        for j in range(0, n_k, block_size):
            s = q @ K[j:j + block_size].T / np.sqrt(d_k)
            m_new = np.maximum(m, s.max(axis=1, initial=-np.inf))
            p = np.exp(s - m_new[:, None])
            alpha = np.exp(m - m_new)
            l = l * alpha + p.sum(axis=1)
            acc = acc * alpha[:, None] + p @ V[j:j + block_size]
            m = m_new
        out[i:i + block_size] = acc / l[:, None]
    return out

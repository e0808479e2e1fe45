"""flash_attention whose key loop runs over range(n_q): right only when n_q == n_k."""
CHECK = "flash_attention"
MISTAKE = None
HINT = "The line that failed, `"
MARKS = "13/20"
ABSENT = ("block_size divides",)

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    n_k, d_v = V.shape
    out = np.empty((n_q, d_v), dtype=np.result_type(Q, K, V))
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / np.sqrt(d_k)
        m = np.full((len(q), 1), -np.inf)
        l = np.zeros((len(q), 1))
        acc = np.zeros((len(q), d_v))
        for j0 in range(0, n_q, block_size):
            s = q @ K[j0:j0 + block_size].T
            m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
            p = np.exp(s - m_new)
            rescale = np.exp(m - m_new)
            l = rescale * l + p.sum(axis=-1, keepdims=True)
            acc = rescale * acc + p @ V[j0:j0 + block_size]
            m = m_new
        out[i0:i0 + block_size] = acc / l
    return out

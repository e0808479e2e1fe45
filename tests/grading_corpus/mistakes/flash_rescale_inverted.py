"""flash_attention rescaling by exp(m_new - m) instead of exp(m - m_new) (guarded for inf)."""
CHECK = "flash_attention"
MISTAKE = 'several_tiles_wrong'
MARKS = "4/20"

import math

import numpy as np
def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.empty((n_q, V.shape[1]), dtype=Q.dtype)
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / math.sqrt(d_k)
        m = np.full((len(q), 1), -np.inf); l = np.zeros((len(q), 1)); acc = np.zeros((len(q), V.shape[1]))
        for j0 in range(0, K.shape[0], block_size):
            ks = slice(j0, j0 + block_size)
            s = q @ K[ks].T
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            p = np.exp(s - m_new); c = np.where(np.isfinite(m), np.exp(m_new - m), 0.0)
            l = l * c + p.sum(axis=1, keepdims=True); acc = acc * c + p @ V[ks]; m = m_new
        out[i0:i0 + block_size] = acc / l
    return out

"""flash_attention that keeps a running max but rescales by exp(m' - m), the sign flipped: the first tile multiplies
by exp(inf), and every query comes back nan, whatever its scores."""
CHECK = "flash_attention"
MISTAKE = "rescale_sign_flipped"
MARKS = "0/20"
ABSENT = ("exp overflowed", "no running maximum", "Keep a running maximum", "very negative here")

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.zeros((n_q, V.shape[1]), dtype=Q.dtype)
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size] / math.sqrt(d_k)
        m = np.full((len(q), 1), -np.inf)
        l = np.zeros((len(q), 1))
        acc = np.zeros((len(q), V.shape[1]))
        for j0 in range(0, K.shape[0], block_size):
            s = q @ K[j0:j0 + block_size].T
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            alpha = np.exp(m_new - m)  # the sign flipped
            p = np.exp(s - m_new)
            l = alpha * l + p.sum(axis=1, keepdims=True)
            acc = alpha * acc + p @ V[j0:j0 + block_size]
            m = m_new
        out[i0:i0 + block_size] = acc / l
    return out

"""flash_attention looping over key tiles only, with every query at once."""
CHECK = "flash_attention"

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    dt = np.result_type(Q, K, V)
    m = np.full(n_q, -np.inf); l = np.zeros(n_q); acc = np.zeros((n_q, V.shape[1]))
    for j0 in range(0, K.shape[0], block_size):
        s = Q @ K[j0:j0 + block_size].T / math.sqrt(d_k)
        m2 = np.maximum(m, s.max(1))
        c = np.exp(m - m2)
        p = np.exp(s - m2[:, None])
        l = l * c + p.sum(1)
        acc = acc * c[:, None] + p @ V[j0:j0 + block_size]
        m = m2
    return (acc / l[:, None]).astype(dt)

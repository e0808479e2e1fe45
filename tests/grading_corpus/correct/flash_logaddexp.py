"""flash_attention keeping a running log-sum-exp with np.logaddexp and a normalised output."""
CHECK = "flash_attention"

import math

import numpy as np


def flash_attention(Q, K, V, block_size):
    n_q, d_k = Q.shape
    out = np.zeros((n_q, V.shape[1]), dtype=np.result_type(Q, K, V))
    for i0 in range(0, n_q, block_size):
        q = Q[i0:i0 + block_size]
        lse = np.full(len(q), -np.inf)
        o = np.zeros((len(q), V.shape[1]))
        for j0 in range(0, K.shape[0], block_size):
            s = q @ K[j0:j0 + block_size].T / math.sqrt(d_k)
            m = s.max(1)
            t_lse = m + np.log(np.exp(s - m[:, None]).sum(1))
            new = np.logaddexp(lse, t_lse)
            o = o * np.exp(lse - new)[:, None] + np.exp(s - new[:, None]) @ V[j0:j0 + block_size]
            lse = new
        out[i0:i0 + block_size] = o
    return out

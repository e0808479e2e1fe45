"""backward_query_tile that multiplies exp(S - lse) by the mask, with no guard for an lse of -inf."""
CHECK = "backward_query_tile"
MISTAKE = "masked_after_exp"
MARKS = "16/20"
ABSENT = ("attend to nothing",)

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dQ = np.zeros(Q.shape, dtype=Q.dtype)
    dK = np.zeros(K.shape, dtype=Q.dtype)
    dV = np.zeros(V.shape, dtype=Q.dtype)
    D = np.sum(O * dO, axis=1, keepdims=True)  # (n_q, 1)
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        P = np.exp(Q @ K[keys].T * scale - lse[:, None])
        if mask is not None:
            P = P * mask[:, keys]
        dV[keys] = P.T @ dO
        dS = P * (dO @ V[keys].T - D)
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * (dS.T @ Q)
    return dQ, dK, dV

"""backward_query_tile that rebuilds the weights from the unmasked scores and multiplies by the mask after exp."""
CHECK = "backward_query_tile"
MISTAKE = "masked_after_exp"
MARKS = "18/20"

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    dQ = np.zeros(Q.shape, dtype=dtype)
    dK = np.zeros(K.shape, dtype=dtype)
    dV = np.zeros(V.shape, dtype=dtype)
    D = np.sum(O * dO, axis=1, keepdims=True)  # (n_q, 1)
    shift = np.where(lse == -np.inf, 0.0, lse)[:, None]
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        P = np.exp(Q @ K[keys].T * scale - shift) * mask[:, keys]  # the mask after exp
        dV[keys] = P.T @ dO
        dS = P * (dO @ V[keys].T - D)
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * (dS.T @ Q)
    return dQ, dK, dV

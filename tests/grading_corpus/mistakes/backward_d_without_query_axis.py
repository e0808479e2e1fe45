"""backward_query_tile that subtracts D of shape (n_q,) from the (n_q, bk) tile: NumPy lines it up with the keys."""
CHECK = "backward_query_tile"
MISTAKE = "d_broadcast_from_1d"
MARKS = "2/20"

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    dQ = np.zeros(Q.shape, dtype=dtype)
    dK = np.zeros(K.shape, dtype=dtype)
    dV = np.zeros(V.shape, dtype=dtype)
    D = np.sum(O * dO, axis=1)  # (n_q,)
    shift = np.where(lse == -np.inf, 0.0, lse)[:, None]
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        P = np.exp(np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf) - shift)
        dV[keys] = P.T @ dO
        dS = P * (dO @ V[keys].T - D)
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * (dS.T @ Q)
    return dQ, dK, dV

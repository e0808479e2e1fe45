"""backward_query_tile whose einsum for a tile's dK writes the output indices in the wrong order: (d, bk)."""
CHECK = "backward_query_tile"
MISTAKE = "gradient_tile_transposed"
MARKS = "0/20"

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    dQ = np.zeros(Q.shape, dtype=dtype)
    dK = np.zeros(K.shape, dtype=dtype)
    dV = np.zeros(V.shape, dtype=dtype)
    D = np.sum(O * dO, axis=1, keepdims=True)
    shift = np.where(lse == -np.inf, 0.0, lse)[:, None]
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        P = np.exp(np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf) - shift)
        dV[keys] = P.T @ dO
        dS = P * (dO @ V[keys].T - D)
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * np.einsum("qj,qd->dj", dS, Q)  # "qj,qd->jd" is the tile's (bk, d_k)
    return dQ, dK, dV

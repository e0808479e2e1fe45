"""backward_query_tile that computes dV from dS instead of from the weights P."""
CHECK = "backward_query_tile"
MISTAKE = "dv_from_ds"
MARKS = "0/20"

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / np.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    D = np.sum(O * dO, axis=1)  # (n_q,)
    shift = np.where(lse == -np.inf, 0.0, lse)  # a query that sees nothing: shift by 0
    dQ = np.zeros(Q.shape, dtype=dtype)
    dK = np.zeros(K.shape, dtype=dtype)
    dV = np.zeros(V.shape, dtype=dtype)
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        S = np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf)  # (n_q, bk)
        P = np.exp(S - shift[:, None])  # (n_q, bk)
        dS = P * (dO @ V[keys].T - D[:, None])  # (n_q, bk)
        dV[keys] = dS.T @ dO  # (bk, n_q) x (n_q, d_v)
        dQ += scale * (dS @ K[keys])  # (n_q, bk) x (bk, d_k)
        dK[keys] = scale * (dS.T @ Q)  # (bk, n_q) x (n_q, d_k)
    return dQ, dK, dV

"""backward_query_tile that contracts the keys instead of the queries for dK and dV."""
CHECK = "backward_query_tile"
MISTAKE = "wrong_axis"
MARKS = "1/20"

import numpy as np

def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / np.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    D = np.sum(O * dO, axis=1)  # (n_q,) one number per query
    shift = np.where(lse == -np.inf, 0.0, lse)  # (n_q,) a query that sees nothing: shift by 0, weights 0
    dQ = np.zeros(Q.shape, dtype=dtype)
    dK = np.zeros(K.shape, dtype=dtype)
    dV = np.zeros(V.shape, dtype=dtype)
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        S = np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf)  # (n_q, d_k) x (d_k, bk) -> (n_q, bk)
        P = np.exp(S - shift[:, None])  # (n_q, bk) the forward's weights, rebuilt
        dV[keys] = P @ dO  # (bk, n_q) x (n_q, d_v) -> (bk, d_v)
        dP = dO @ V[keys].T  # (n_q, d_v) x (d_v, bk) -> (n_q, bk)
        dS = P * (dP - D[:, None])  # (n_q, bk)
        dQ += scale * (dS @ K[keys])  # (n_q, bk) x (bk, d_k) -> (n_q, d_k)
        dK[keys] = scale * (dS @ Q)  # (bk, n_q) x (n_q, d_k) -> (bk, d_k)
    return dQ, dK, dV

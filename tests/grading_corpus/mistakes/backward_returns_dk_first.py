"""backward_query_tile returning (dK, dQ, dV)."""
CHECK = "backward_query_tile"
MISTAKE = 'observed_items_reordered'
MARKS = "1/20"

import numpy as np
def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / np.sqrt(Q.shape[1]); dtype = np.result_type(Q, K, V, dO)
    D = np.sum(O * dO, axis=1); shift = np.where(lse == -np.inf, 0.0, lse)
    dQ = np.zeros(Q.shape, dtype=dtype); dK = np.zeros(K.shape, dtype=dtype); dV = np.zeros(V.shape, dtype=dtype)
    for j0 in range(0, K.shape[0], block_size):
        ks = slice(j0, j0 + block_size)
        S = np.where(mask[:, ks], Q @ K[ks].T * scale, -np.inf)
        P = np.exp(S - shift[:, None])
        dV[ks] = P.T @ dO
        dS = P * (dO @ V[ks].T - D[:, None])
        dQ += dS @ K[ks] * scale
        dK[ks] = dS.T @ Q * scale
    return dK, dQ, dV

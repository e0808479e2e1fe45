"""backward_query_tile that rebuilds the weights in float32: it assumes 7 digits are enough."""
CHECK = "backward_query_tile"
MESSAGE = 'about what float32 holds'
MARKS = "3/20"

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / np.sqrt(Q.shape[1])
    D = np.sum(O * dO, axis=1)
    dQ, dK, dV = np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)
    for j in range(0, K.shape[0], block_size):
        kj, vj = K[j:j + block_size], V[j:j + block_size]
        s = np.where(mask[:, j:j + block_size], (Q @ kj.T * scale).astype(np.float32), -np.inf)
        shift = np.where(np.isfinite(lse), lse, 0).astype(np.float32)
        p = np.exp(s - shift[:, None]).astype(Q.dtype)
        dV[j:j + block_size] = p.T @ dO
        ds = p * (dO @ vj.T - D[:, None])
        dQ += ds @ kj * scale
        dK[j:j + block_size] = ds.T @ Q * scale
    return dQ, dK, dV

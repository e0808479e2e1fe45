"""backward_query_tile with D kept as a column (keepdims) and the mask put at -inf before exp, float32 kept by the arrays' dtype."""
CHECK = "backward_query_tile"
import math
import numpy as np
def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    D = np.sum(O * dO, axis=1, keepdims=True)  # (n_q, 1)
    shift = np.where(np.isneginf(lse), 0.0, lse)[:, None]
    dQ, dK, dV = np.zeros(Q.shape, dtype), np.zeros(K.shape, dtype), np.zeros(V.shape, dtype)
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        P = np.exp(np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf) - shift)
        dV[keys] = P.T @ dO
        dS = P * (dO @ V[keys].T - D)
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * np.einsum("qj,qd->jd", dS, Q)
    return dQ, dK, dV

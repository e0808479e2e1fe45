"""backward_query_tile computing D from each tile's own P * dP."""
CHECK = "backward_query_tile"
MISTAKE = 'd_per_tile'
MARKS = "2/20"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / np.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    D = np.sum(O * dO, axis=1)
    shift = np.where(lse == -np.inf, 0.0, lse)
    dQ = np.zeros(Q.shape, dtype=dtype); dK = np.zeros(K.shape, dtype=dtype); dV = np.zeros(V.shape, dtype=dtype)
    for j0 in range(0, K.shape[0], block_size):
        keys = slice(j0, j0 + block_size)
        S = np.where(mask[:, keys], Q @ K[keys].T * scale, -np.inf)
        P = np.exp(S - shift[:, None])
        dV[keys] = P.T @ dO
        dP = dO @ V[keys].T
        dS = P * (dP - (P * dP).sum(1, keepdims=True))
        dQ += scale * (dS @ K[keys])
        dK[keys] = scale * (dS.T @ Q)
    return dQ, dK, dV

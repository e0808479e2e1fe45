"""backward_query_tile visiting the keys of each tile one at a time, accumulating with += (right)."""
CHECK = "backward_query_tile"
import math
import numpy as np
from attention_course import softmax, apply_rope, scaled_dot_product_attention

def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dtype = np.result_type(Q, K, V, dO)
    D = (O * dO).sum(-1)
    shift = np.where(np.isneginf(lse), 0.0, lse)
    dQ = np.zeros(Q.shape, dtype); dK = np.zeros(K.shape, dtype); dV = np.zeros(V.shape, dtype)
    for j0 in range(0, K.shape[0], block_size):
        for j in range(j0, min(j0 + block_size, K.shape[0])):
            s = Q @ K[j] * scale
            p = np.where(mask[:, j], np.exp(np.where(mask[:, j], s, 0) - shift), 0.0)  # (n_q,)
            dV[j] += p @ dO
            ds = p * (dO @ V[j] - D)
            dQ += scale * np.outer(ds, K[j])
            dK[j] += scale * ds @ Q
    return dQ, dK, dV

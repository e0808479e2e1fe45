"""backward_query_tile with the right numbers that builds the tile's whole (n_q, n_k) rows of scores."""
CHECK = "backward_query_tile"
MISTAKE = "builds_full_matrix"
MARKS = "19/20"

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    S = np.where(mask, Q @ K.T * scale, -np.inf)  # every key at once
    P = np.exp(S - np.where(lse == -np.inf, 0.0, lse)[:, None])
    dP = dO @ V.T
    dS = P * (dP - np.sum(O * dO, axis=1, keepdims=True))
    return scale * dS @ K, scale * dS.T @ Q, P.T @ dO

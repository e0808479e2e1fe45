"""backward_query_tile with einsum for D and dV."""
CHECK = "backward_query_tile"

import math

import numpy as np


def backward_query_tile(Q, K, V, O, dO, lse, mask, block_size):
    scale = 1 / math.sqrt(Q.shape[1])
    dt = np.result_type(Q, K, V, dO)
    dQ = np.zeros(Q.shape, dt); dK = np.zeros(K.shape, dt); dV = np.zeros(V.shape, dt)
    D = np.einsum('qd,qd->q', dO, O)
    for j0 in range(0, K.shape[0], block_size):
        ks = slice(j0, j0 + block_size)
        S = Q @ K[ks].T * scale
        P = np.where(mask[:, ks], np.exp(np.where(mask[:, ks], S, 0) - np.where(np.isfinite(lse), lse, 0)[:, None]), 0.0)
        dV[ks] = np.einsum('qk,qd->kd', P, dO)
        dS = P * (dO @ V[ks].T - D[:, None])
        dQ += dS @ K[ks] * scale
        dK[ks] = dS.T @ Q * scale
    return dQ, dK, dV

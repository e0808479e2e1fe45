"""padded_attention looping over the batch, attending over each sequence's real keys only."""
CHECK = "padded_attention"

import math

import numpy as np


def padded_attention(Q, K, V, lengths):
    B, n, _ = Q.shape
    dt = np.result_type(Q, K, V)
    w = np.zeros((B, n, K.shape[1]), dt); out = np.zeros((B, n, V.shape[-1]), dt)
    for b in range(B):
        L = int(lengths[b])
        if L == 0:
            continue
        s = Q[b] @ K[b, :L].T / np.sqrt(Q.shape[-1])
        e = np.exp(s - s.max(-1, keepdims=True))
        w[b, :, :L] = e / e.sum(-1, keepdims=True)
        out[b] = w[b, :, :L] @ V[b, :L]
    return out, w

"""masked_attention looping over queries, computing each over its visible keys only."""
CHECK = "masked_attention"

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    mask = np.broadcast_to(mask, (Q.shape[0], K.shape[0]))
    dt = np.result_type(Q, K, V)
    w = np.zeros((Q.shape[0], K.shape[0]), dt)
    for i in range(Q.shape[0]):
        js = np.flatnonzero(mask[i])
        if len(js) == 0:
            continue
        s = K[js] @ Q[i] / np.sqrt(Q.shape[1])
        e = np.exp(s - s.max())
        w[i, js] = e / e.sum()
    return (w @ V).astype(dt), w

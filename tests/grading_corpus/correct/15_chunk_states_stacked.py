"""gated_delta_chunk that keeps every state in a list and reads the outputs at the end, each from its own state."""
CHECK = "gated_delta_chunk"

import math

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    states = []
    for t in range(len(q)):
        k_hat = k[t] / math.sqrt(sum(float(x) * float(x) for x in k[t]) + 1e-6)
        P = np.eye(len(k_hat), dtype=S.dtype) - b[t] * np.outer(k_hat, k_hat)  # the erase, (d_k, d_k)
        S = a[t] * (P @ S) + b[t] * np.outer(k_hat, v[t])
        states.append(S)
    q_hat = q / np.sqrt((q * q).sum(axis=1, keepdims=True) + 1e-6) / math.sqrt(q.shape[1])
    return np.stack([st.T @ qt for st, qt in zip(states, q_hat)]), S

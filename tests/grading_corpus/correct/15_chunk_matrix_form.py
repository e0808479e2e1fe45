"""gated_delta_chunk without a loop over the state: the corrections of every token from one triangular solve
(the WY form models compute a chunk with), then the outputs and the last state from matrix products."""
CHECK = "gated_delta_chunk"

import numpy as np


def gated_delta_chunk(S, q, k, v, a, b):
    dtype = np.result_type(S, q, k, v)
    a, b = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    n, d_k = q.shape
    unit = lambda x: x / np.sqrt((x * x).sum(axis=1, keepdims=True) + 1e-6)  # noqa: E731
    q, k = unit(q) / np.sqrt(d_k).astype(dtype), unit(k)
    G = np.cumsum(np.log(a))  # (n,): the log of the decay since the chunk began
    gap = np.exp(np.where(np.tri(n, dtype=bool), G[:, None] - G[None, :], -np.inf))  # (n, n): decay from j to t
    kk, qk = (k @ k.T) * gap, (q @ k.T) * gap  # (n, n)
    system = np.eye(n, dtype=dtype) + np.tril(b[:, None] * kk, -1)
    U = np.linalg.solve(system, b[:, None] * (v - (np.exp(G)[:, None] * k) @ S))  # (n, d_v): each token's write
    o = (np.exp(G)[:, None] * q) @ S + qk @ U
    last = np.exp(G[-1]) * S + (np.exp(G[-1] - G)[:, None] * k).T @ U
    return o.astype(dtype), last.astype(dtype)

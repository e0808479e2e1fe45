"""attention with a Python loop over queries and keys."""
CHECK = "attention"
import numpy as np
def attention(Q, K, V):
    n_q, n_k = Q.shape[0], K.shape[0]
    w = np.zeros((n_q, n_k), dtype=np.result_type(Q, K))
    out = np.zeros((n_q, V.shape[1]), dtype=np.result_type(Q, V))
    for i in range(n_q):
        s = np.array([Q[i] @ K[j] for j in range(n_k)]) / np.sqrt(Q.shape[1])
        e = np.exp(s - s.max())
        w[i] = e / e.sum()
        for j in range(n_k):
            out[i] += w[i, j] * V[j]
    return out, w

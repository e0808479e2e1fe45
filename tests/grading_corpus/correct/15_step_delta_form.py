"""gated_delta_step in its delta form, S + k (b (v - S^T k))^T after the decay, with np.einsum and
np.linalg.norm under the 1e-6."""
CHECK = "gated_delta_step"

import numpy as np


def gated_delta_step(S, q, k, v, a, b):
    d_k = q.shape[0]
    k_hat = k / np.sqrt(np.linalg.norm(k) ** 2 + 1e-6).astype(k.dtype)
    q_hat = q / np.sqrt(np.linalg.norm(q) ** 2 + 1e-6).astype(q.dtype) * q.dtype.type(d_k ** -0.5)
    state = S * S.dtype.type(a)
    held = np.einsum("kv,k->v", state, k_hat)  # what the memory returns for the key
    state = state + np.einsum("k,v->kv", k_hat, S.dtype.type(b) * (v - held))
    return np.einsum("kv,k->v", state, q_hat), state

"""sparse_attention with np.lexsort for the ranking (score, then position), np.clip for the relu and the weights
from a log-sum-exp."""
CHECK = "sparse_attention"

import numpy as np


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    n_q, n_k = q.shape[1], k.shape[0]
    per_head = np.einsum("htd,sd->ths", q_index, k_index) * q_index.dtype.type(q_index.shape[-1] ** -0.5)
    index = (w[:, :, None] * np.clip(per_head, 0, None)).sum(axis=1)  # (n_q, n_k)
    keep = np.zeros((n_q, n_k), dtype=bool)
    for t in range(n_q):
        seen = t + n_k - n_q + 1  # keys 0 .. seen - 1
        order = np.lexsort((np.arange(seen), -index[t, :seen]))  # by -score, then by position
        keep[t, order[:top_k]] = True
    scores = np.einsum("htd,sd->hts", q, k) * q.dtype.type(q.shape[-1] ** -0.5)
    scores = np.where(keep, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    lse = top + np.log(np.exp(scores - top).sum(axis=-1, keepdims=True))
    weights = np.exp(scores - lse)
    return np.einsum("hts,sv->htv", weights, v), weights

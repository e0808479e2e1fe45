"""sparse_attention one query at a time: the indexer's score of each visible key, Python's sort on (-score, position)."""
CHECK = "sparse_attention"

import math

import numpy as np


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    h, n_q, d = q.shape
    n_k = k.shape[0]
    weights = np.zeros((h, n_q, n_k), dtype=q.dtype)
    for t in range(n_q):
        last = t + n_k - n_q  # this query's position: it sees keys 0 .. last
        score = {}
        for s in range(last + 1):
            votes = [max(float(q_index[j, t] @ k_index[s]) / math.sqrt(k_index.shape[1]), 0.0)
                     for j in range(q_index.shape[0])]
            score[s] = sum(float(w[t, j]) * votes[j] for j in range(len(votes)))
        kept = sorted(score, key=lambda s: (-score[s], s))[:top_k]
        for head in range(h):
            logits = k[kept] @ q[head, t] / q.dtype.type(math.sqrt(d))  # (len(kept),)
            e = np.exp(logits - logits.max())
            weights[head, t, kept] = e / e.sum()
    return weights @ v, weights

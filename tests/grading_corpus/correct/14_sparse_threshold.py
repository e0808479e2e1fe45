"""sparse_attention that finds each query's top_k-th best score with np.partition, keeps every key above it and
the earliest of those equal to it, and masks the softmax with a large negative number."""
CHECK = "sparse_attention"

import math

import numpy as np

from attention_course import softmax


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    n_q, n_k = q.shape[1], k.shape[0]
    votes = np.maximum(q_index @ k_index.T, 0) / math.sqrt(q_index.shape[-1])
    index = np.einsum("th,hts->ts", w, votes)
    visible = np.tri(n_q, n_k, n_k - n_q, dtype=bool)
    ranked = np.where(visible, index, -np.inf)
    place = min(top_k, n_k)
    threshold = np.partition(ranked, n_k - place, axis=-1)[:, n_k - place][:, None]
    above = ranked > threshold
    tied = ranked == threshold
    room = place - above.sum(axis=-1, keepdims=True)
    keep = (above | (tied & (np.cumsum(tied, axis=-1) <= room))) & visible
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = softmax(np.where(keep, scores, -np.inf))
    return weights @ v, weights

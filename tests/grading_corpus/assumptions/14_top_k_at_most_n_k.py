"""sparse_attention that finds the top_k-th best score with np.argpartition: it assumes top_k <= n_k."""
CHECK = "sparse_attention"
MESSAGE = ("ValueError", "A query that sees top_k keys or fewer keeps all of them")
MARKS = "14/16"

import math

import numpy as np

from attention_course import softmax


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    n_q, n_k = q.shape[1], k.shape[0]
    votes = np.maximum(q_index @ k_index.T / math.sqrt(q_index.shape[-1]), 0)
    index = np.einsum("th,hts->ts", w, votes)
    visible = np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + n_k - n_q
    ranked = np.where(visible, index, -np.inf)
    kth = np.argpartition(-ranked, top_k - 1, axis=-1)[:, top_k - 1:top_k]
    threshold = np.take_along_axis(ranked, kth, axis=-1)
    above, tied = ranked > threshold, ranked == threshold
    keep = (above | (tied & (np.cumsum(tied, axis=-1) <= top_k - above.sum(axis=-1, keepdims=True)))) & visible
    scores = q @ k.T / math.sqrt(q.shape[-1])
    weights = softmax(np.where(keep, scores, -np.inf))
    return weights @ v, weights

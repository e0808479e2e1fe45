"""sparse_attention that picks each head's keys by its own attention scores, leaving the indexer unused."""
CHECK = "sparse_attention"
MISTAKE = None
MESSAGE = "output: at index (0, 0, 0) expected"
MARKS = "3/16"

import math

import numpy as np

from attention_course import softmax


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    h, n_q, d = q.shape
    n_k = k.shape[0]
    visible = np.arange(n_k)[None, :] <= np.arange(n_q)[:, None] + n_k - n_q
    scores = np.where(visible, q @ k.T / math.sqrt(d), -np.inf)  # (h, n_q, n_k)
    order = np.argsort(-scores, axis=-1, kind="stable")
    keep = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(keep, order[..., :top_k], True, axis=-1)
    weights = softmax(np.where(keep & visible, scores, -np.inf))
    return weights @ v, weights

"""sparse_attention that keeps top_k keys even where a query sees fewer: future ones fill up."""
CHECK = "sparse_attention"
MISTAKE = "hidden_keys_kept_when_few_visible"
MARKS = "9/16"

import math

import numpy as np

from attention_course import softmax


def sparse_attention(q, k, v, q_index, k_index, w, top_k):
    h, n_q, d = q.shape
    n_k = k.shape[0]
    votes = np.maximum(q_index @ k_index.T / math.sqrt(q_index.shape[-1]), 0)
    index = np.einsum("th,hts->ts", w, votes)
    position = np.arange(n_q)[:, None] + n_k - n_q
    visible = np.arange(n_k)[None, :] <= position
    order = np.argsort(-np.where(visible, index, -np.inf), axis=-1, kind="stable")
    keep = np.zeros((n_q, n_k), dtype=bool)
    np.put_along_axis(keep, order[:, :top_k], True, axis=-1)
    scores = q @ k.T / math.sqrt(d)
    weights = softmax(np.where(keep, scores, -np.inf))
    return weights @ v, weights

"""sparse_attention that sorts the scores upwards and reads them backwards: ties keep the later key."""
CHECK = "sparse_attention"
MISTAKE = "ties_to_the_later_key"
MARKS = "12/16"

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
    order = np.argsort(np.where(visible, index, -np.inf), axis=-1, kind="stable")[:, ::-1]
    keep = np.zeros((n_q, n_k), dtype=bool)
    np.put_along_axis(keep, order[:, :top_k], True, axis=-1)
    keep &= visible
    scores = q @ k.T / math.sqrt(d)
    weights = softmax(np.where(keep, scores, -np.inf))
    return weights @ v, weights

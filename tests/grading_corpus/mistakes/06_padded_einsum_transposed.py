"""padded_attention whose einsum writes the scores transposed, 'bqd,bkd->bkq': each key's scores over the queries."""
CHECK = "padded_attention"
MISTAKE = "scores_transposed"
MARKS = "0/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    B, n, d_k = Q.shape
    scores = np.einsum("bqd,bkd->bkq", Q, K) / np.sqrt(d_k)
    mask = (np.arange(n)[None, :] < np.asarray(lengths)[:, None])[:, None, :]
    weights = softmax(np.where(mask, scores, -np.inf), axis=-1)
    return weights @ V, weights

"""padded_attention whose mask hides padding queries (rows) instead of padding keys."""
CHECK = "padded_attention"
MISTAKE = "padding_keys_not_hidden"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    real = np.arange(Q.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (B, n)
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    scores = np.where(real[:, :, None], scores, -np.inf)  # (B, n, 1): rows, not columns
    weights = softmax(scores)
    return weights @ V, weights

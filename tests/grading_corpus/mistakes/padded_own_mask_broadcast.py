"""padded_attention whose mask has shape (B, n): it does not line up with the (B, n, n) scores."""
CHECK = "padded_attention"
MISTAKE = None
HINT = "A padding mask of shape (B, 1, n) lines up with them, one of shape (B, n) does not"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    mask = np.arange(K.shape[1])[None, :] < lengths[:, None]
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

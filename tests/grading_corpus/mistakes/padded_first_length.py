"""padded_attention that cuts every sequence at the first one's length."""
CHECK = "padded_attention"
MISTAKE = "one_length_for_all"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    mask = np.arange(K.shape[1])[None, None, :] < lengths[0]  # (1, 1, n)
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

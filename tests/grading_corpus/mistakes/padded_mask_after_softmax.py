"""padded_attention that zeroes padding weights after the softmax."""
CHECK = "padded_attention"
MISTAKE = "mask_after_softmax"
MARKS = "2/14"

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    real = (np.arange(K.shape[1])[None, :] < np.asarray(lengths)[:, None])[:, None, :]  # (B, 1, n)
    weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])) * real
    return weights @ V, weights

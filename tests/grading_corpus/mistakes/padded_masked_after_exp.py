"""padded_attention that zeroes the padding keys after the exponential, its max taken over every key."""
CHECK = "padded_attention"
MISTAKE = "masked_after_exp"
MARKS = "12/14"

import math

import numpy as np

from attention_course import padding_mask


def padded_attention(Q, K, V, lengths):
    mask = padding_mask(lengths, K.shape[-2])  # (B, 1, n)
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (B, n, n)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True)) * mask
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights

"""padded_attention whose mask is sized by max(lengths): it fits only when one sequence is full length."""
CHECK = "padded_attention"
MESSAGE = ('raised ValueError: operands could not be broadcast together', 'cut down to the smallest input')
MARKS = "10/14"

import math

import numpy as np

from attention_course import softmax


def padded_attention(Q, K, V, lengths):
    n = int(np.max(lengths))
    mask = (np.arange(n)[None, :] < lengths[:, None])[:, None, :]  # (B, 1, max(lengths))
    scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]), -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

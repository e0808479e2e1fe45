"""padded_attention whose scores come from np.dot, which on 3-D arrays pairs every sequence with every other: (B, n, B, n)."""
CHECK = "padded_attention"
MISTAKE = None
MARKS = "0/14"
HINT = "np.dot"

import math

import numpy as np

from attention_course import padding_mask, softmax


def padded_attention(Q, K, V, lengths):
    scores = np.dot(Q, np.swapaxes(K, -1, -2)) / math.sqrt(Q.shape[-1])
    weights = softmax(np.where(padding_mask(lengths, K.shape[-2]), scores, -np.inf), axis=-1)
    return weights @ V, weights

"""padded_attention whose weights are right but whose output is mixed with the softmax over every key, padding included."""
CHECK = "padded_attention"
MISTAKE = "output_from_unmasked_weights"
MARKS = "2/14"
ABSENT = ("do not sum", "does not sum")

import math

import numpy as np

from attention_course import padding_mask, softmax


def padded_attention(Q, K, V, lengths):
    scores = Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1])  # (B, n, n)
    weights = softmax(np.where(padding_mask(lengths, K.shape[-2]), scores, -np.inf), axis=-1)
    return softmax(scores, axis=-1) @ V, weights

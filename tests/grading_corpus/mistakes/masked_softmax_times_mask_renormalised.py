"""masked_attention that multiplies the softmax of every score by the mask and renormalises: a row with nothing to see is 0/0."""
CHECK = "masked_attention"
MISTAKE = "masked_after_exp"
MARKS = "14/18"
ABSENT = ("-inf - (-inf)", "filled with -inf")

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True) * mask
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ V, weights

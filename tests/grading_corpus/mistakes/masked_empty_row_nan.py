"""masked_attention with its own max-trick softmax: a fully masked row gives nan."""
CHECK = "masked_attention"
MISTAKE = "nan_for_empty_row"
MARKS = "16/18"

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    scores = np.where(mask, Q @ K.T / math.sqrt(Q.shape[-1]), -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights

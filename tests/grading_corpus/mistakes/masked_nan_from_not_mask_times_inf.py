"""masked_attention that hides keys before exp with (~mask) * -inf and a softmax with no guard: the query that sees
no key is nan (-inf - (-inf)), though no score overflows anywhere."""
CHECK = "masked_attention"
MISTAKE = "nan_for_empty_row"
MARKS = "14/18"
ABSENT = ("overflows to inf", "scores far above", "after the exponentials")

import math

import numpy as np


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    scores = np.where(mask, scores, (~np.asarray(mask)) * -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights

"""masked_attention that fills hidden scores with -1e9: a query that sees no key attends uniformly."""
CHECK = "masked_attention"
MISTAKE = "mask_filled_with_large_negative"
MARKS = "16/18"

import math

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    scores = np.where(mask, scores, -1e9)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

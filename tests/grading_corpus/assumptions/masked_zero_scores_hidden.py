"""masked_attention that multiplies the scores by the mask, then hides every score equal to 0."""
CHECK = "masked_attention"
MESSAGE = ('output: at index (0, 0) expected', ', got 0', 'allowed scores of exactly 0, cut down to the smallest input')
MARKS = "8/9"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / np.sqrt(Q.shape[-1]) * mask
    scores = np.where(scores == 0, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

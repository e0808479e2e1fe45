"""masked_attention that multiplies the scores by the mask, then hides every score equal to 0."""
CHECK = "masked_attention"
MISTAKE = "does_not_sum_to_1"
MARKS = "17/18"

import math

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / math.sqrt(Q.shape[-1]) * mask
    weights = softmax(np.where(scores == 0, -np.inf, scores), axis=-1)
    return weights @ V, weights

"""masked_attention that fills masked scores with 0 instead of -inf."""
CHECK = "masked_attention"
MISTAKE = "mask_filled_with_zero"
MARKS = "1/18"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = np.where(mask, scores, 0.0)
    weights = softmax(scores)
    return weights @ V, weights

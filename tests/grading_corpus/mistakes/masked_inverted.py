"""masked_attention that treats True as "hidden"."""
CHECK = "masked_attention"
MISTAKE = "mask_inverted"
MARKS = "0/18"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = np.where(mask, -np.inf, scores)
    weights = softmax(scores)
    return weights @ V, weights

"""masked_attention that adds the boolean mask to the scores."""
CHECK = "masked_attention"
MISTAKE = "mask_added_to_scores"
MARKS = "0/18"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]) + mask, axis=-1)
    return weights @ V, weights

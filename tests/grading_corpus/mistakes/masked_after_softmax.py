"""masked_attention that applies the mask after the softmax."""
CHECK = "masked_attention"
MISTAKE = "mask_after_softmax"
MARKS = "0/18"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1])) * mask
    return weights @ V, weights

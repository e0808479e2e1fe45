"""masked_attention that never uses its mask."""
CHECK = "masked_attention"
MISTAKE = "mask_ignored"
MARKS = "0/18"

import numpy as np

from attention_course import softmax


def masked_attention(Q, K, V, mask):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    return weights @ V, weights

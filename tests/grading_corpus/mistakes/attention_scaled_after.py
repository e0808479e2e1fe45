"""attention that divides the weights by sqrt(d_k) after the softmax."""
CHECK = "attention"
MISTAKE = "scaled_after_softmax"
MARKS = "2/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T, axis=-1) / np.sqrt(Q.shape[-1])
    return weights @ V, weights

"""attention that takes d_k as Q.size (every entry of Q) instead of Q.shape[-1]."""
CHECK = "attention"
MISTAKE = "d_k_from_every_entry"
MARKS = "5/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    d_k = Q.size
    weights = softmax(Q @ K.T / np.sqrt(d_k), axis=-1)
    return weights @ V, weights

"""attention scaled by the number of keys instead of d_k."""
CHECK = "attention"
MISTAKE = "scaled_by_n_k"
MARKS = "7/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / np.sqrt(K.shape[0]), axis=-1)
    return weights @ V, weights

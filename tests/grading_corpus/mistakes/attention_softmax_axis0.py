"""attention whose softmax runs over the queries (axis 0) instead of the keys."""
CHECK = "attention"
MISTAKE = "softmax_wrong_axis"
MARKS = "0/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=0)
    return weights @ V, weights

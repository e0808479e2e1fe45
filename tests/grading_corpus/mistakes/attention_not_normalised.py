"""attention whose weights are exponentials never divided by their sum: rows do not sum to 1."""
CHECK = "attention"
MISTAKE = "does_not_sum_to_1"
MARKS = "3/17"

import numpy as np


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights @ V, weights

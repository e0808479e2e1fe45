"""attention whose softmax normalises over every entry of the score matrix."""
CHECK = "attention"
MISTAKE = "normalised_over_everything"
MARKS = "3/17"

import numpy as np


def attention(Q, K, V):
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    e = np.exp(s - s.max())
    weights = e / e.sum()
    return weights @ V, weights

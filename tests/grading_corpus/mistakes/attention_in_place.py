"""attention that scales the caller's queries in place."""
CHECK = "attention"
MISTAKE = "modifies_input"
MARKS = "2/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    Q /= np.sqrt(Q.shape[-1])
    weights = softmax(Q @ K.T)
    return weights @ V, weights

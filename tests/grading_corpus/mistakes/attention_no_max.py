"""attention with a softmax that does not subtract the maximum: nan on large scores."""
CHECK = "attention"
MISTAKE = "no_max_subtraction"
MARKS = "13/17"

import math

import numpy as np


def attention(Q, K, V):
    e = np.exp(Q @ K.T / math.sqrt(Q.shape[-1]))
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ V, weights

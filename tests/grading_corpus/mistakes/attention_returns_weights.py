"""attention that returns the weights where the output should be (the values are never mixed)."""
CHECK = "attention"
MISTAKE = "returns_weights_as_output"
MARKS = "2/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
    return weights, weights

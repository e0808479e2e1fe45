"""attention scaled by the size of the values, d_v."""
CHECK = "attention"
MISTAKE = "scaled_by_d_v"
MARKS = "7/17"

import math

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / math.sqrt(V.shape[-1]), axis=-1)
    return weights @ V, weights

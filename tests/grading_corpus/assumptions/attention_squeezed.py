"""attention that squeezes its output: it assumes no axis has size 1 (one query, or d_v = 1)."""
CHECK = "attention"
MESSAGE = ('output: expected shape (1, ', 'cut down to the smallest input')
MARKS = "13/17"

import math

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=-1)
    return np.squeeze(weights @ V), weights

"""attention whose scores are divided with // (floor division): each scaled score is rounded down to a whole number."""
CHECK = "attention"
MISTAKE = "integer_division"
MARKS = "3/17"

import math

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    scores = (Q @ K.T) // math.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

"""attention whose scores are computed in float32: it assumes 7 digits are enough."""
CHECK = "attention"
MESSAGE = 'about what float32 holds'
MARKS = "5/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    scores = (Q.astype(np.float32) @ K.T.astype(np.float32)) / np.sqrt(Q.shape[-1])
    weights = softmax(scores.astype(Q.dtype), axis=-1)
    return weights @ V, weights

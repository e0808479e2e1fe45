"""attention that mixes the values with the scores instead of the weights."""
CHECK = "attention"
MISTAKE = "output_from_scores"
MARKS = "0/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = softmax(scores, axis=-1)
    return scores @ V, weights

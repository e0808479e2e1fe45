"""attention with query and key swapped: the weights come out transposed."""
CHECK = "attention"
MISTAKE = "query_key_swapped"
MARKS = "0/17"

import numpy as np

from attention_course import softmax


def attention(Q, K, V):
    scores = K @ Q.T / np.sqrt(Q.shape[-1])  # (n_k, n_q): each key's scores over the queries
    weights = softmax(scores, axis=0)  # columns sum to 1, so column i is query i's weights
    return weights.T @ V, weights

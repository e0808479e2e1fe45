"""attention without the 1/sqrt(d_k) scale."""
CHECK = "attention"
MISTAKE = "missing_scale"
MARKS = "5/17"

from attention_course import softmax


def attention(Q, K, V):
    weights = softmax(Q @ K.T)
    return weights @ V, weights
